// Interaction signals of a study page (participation/signals.py): counts only, never what is typed.
// Fills the form's hidden "signals" field when the page is sent:
// v1:ms on page,focus losses,pastes,pasted chars,keys,typing ms,chars in text fields.
(function () {
  "use strict";
  var field = document.querySelector("form input[name=signals]");
  if (!field) {
    return;
  }
  var form = field.form;
  var started = Date.now();
  var blurs = 0, pastes = 0, pastedChars = 0, keys = 0, firstKey = 0, lastKey = 0;
  function isText(el) {
    return el && (el.tagName === "TEXTAREA" || (el.tagName === "INPUT" && (el.type === "text" || el.type === "search")));
  }
  window.addEventListener("blur", function () { blurs += 1; });
  form.addEventListener("paste", function (event) {
    if (!isText(event.target)) {
      return;
    }
    pastes += 1;
    var data = event.clipboardData ? event.clipboardData.getData("text") : "";
    pastedChars += data.length;
  });
  form.addEventListener("keydown", function (event) {
    if (!isText(event.target)) {
      return;
    }
    var now = Date.now();
    keys += 1;
    if (!firstKey) {
      firstKey = now;
    }
    lastKey = now;
  });
  form.addEventListener("submit", function () {
    var chars = 0;
    Array.prototype.forEach.call(form.elements, function (el) {
      if (isText(el)) {
        chars += el.value.length;
      }
    });
    field.value = "v1:" + [Date.now() - started, blurs, pastes, pastedChars, keys, lastKey - firstKey, chars].join(",");
  });
})();
