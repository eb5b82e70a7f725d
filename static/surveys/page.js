// Every study page lives at one address, and a submitted page's answer comes back as the next
// page itself (no redirect round trip). Turning this history entry into a plain GET makes a reload
// show the current page instead of asking to send the form again.
(function () {
  "use strict";
  if (window.history && window.history.replaceState) {
    window.history.replaceState(null, "", window.location.href);
  }
})();
// A fair-score page's "Accept the AI's score" disables and clears "Your risk score" (the server ignores
// that box when the AI's score is accepted, so the page and the stored answer agree).
(function () {
  "use strict";
  document.querySelectorAll(".k-decision").forEach(function (set) {
    var box = set.querySelector(".k-score input");
    if (!box) {
      return;
    }
    function sync() {
      var accepted = set.querySelector("input[type=radio][value=accept]:checked") !== null;
      box.disabled = accepted;
      if (accepted) {
        box.value = "";
      }
    }
    set.addEventListener("change", sync);
    sync();
  });
})();
