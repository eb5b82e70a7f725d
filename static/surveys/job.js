// Follow a background job on its page: poll /api/jobs/<id>/ and show status, progress and log;
// reload when the job's status changes (it starts, or ends: succeeded, failed or cancelled), so that
// the server renders its started time and attempts, the report link or the error.
// No inline script (CSP script-src 'self'); without JavaScript a <meta refresh> reloads the page.
(function () {
  "use strict";
  var root = document.getElementById("job");
  if (!root || root.dataset.finished === "1") {
    return;
  }
  var status = document.getElementById("job-status");
  var message = document.getElementById("job-message");
  var bar = document.getElementById("job-progress");
  var log = document.getElementById("job-log");
  var failures = 0;

  function show(job) {
    status.textContent = job.status;
    status.className = "status " + job.status;
    message.textContent = job.progress_message || "";
    bar.value = job.progress;
    bar.textContent = Math.round(job.progress * 100) + "%";
    log.textContent = job.log || "(nothing yet)";
    if (job.status !== root.dataset.status) {
      window.location.reload();
      return;
    }
    window.setTimeout(poll, 1500);
  }

  function poll() {
    fetch(root.dataset.apiUrl, {credentials: "same-origin", headers: {Accept: "application/json"}})
      .then(function (response) {
        if (!response.ok) {
          throw new Error("HTTP " + response.status);
        }
        return response.json();
      })
      .then(function (job) {
        failures = 0;
        show(job);
      })
      .catch(function () {
        failures += 1;  // a restart or a brief outage: keep trying, more slowly, then reload the page
        if (failures >= 5) {
          window.location.reload();
        } else {
          window.setTimeout(poll, 3000);
        }
      });
  }

  window.setTimeout(poll, 1000);
})();
