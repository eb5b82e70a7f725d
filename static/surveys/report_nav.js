// The report's "Sections" menu (a <details> in the sticky nav bar): it closes when one of its links
// is followed, on Escape, and on a click outside it, so the list never stays over the section read.
(function () {
  "use strict";
  var menu = document.querySelector(".report-nav-menu");
  if (!menu) return;
  function close() { menu.open = false; }
  menu.querySelectorAll("a").forEach(function (a) { a.addEventListener("click", close); });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && menu.open) { close(); menu.querySelector("summary").focus(); }
  });
  document.addEventListener("click", function (e) { if (!menu.contains(e.target)) close(); });
})();
