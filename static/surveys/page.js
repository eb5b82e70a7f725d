// Every study page lives at one address, and a submitted page's answer comes back as the next
// page itself (no redirect round trip). Turning this history entry into a plain GET makes a reload
// show the current page instead of asking to send the form again.
(function () {
  "use strict";
  if (window.history && window.history.replaceState) {
    window.history.replaceState(null, "", window.location.href);
  }
})();
