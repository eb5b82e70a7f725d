// The model audit form: when a subjects CSV is chosen, list its header's columns (csv_header.js) in the
// sensitive-columns and truth selects; the id, the models' score_/label_ columns and the x_<time> effort
// series are left out. The server checks the choices against the uploaded file's header.
// No inline script (CSP script-src 'self').
(function () {
  "use strict";
  var input = document.getElementById("audit-subjects");
  var groups = document.getElementById("audit-groups");
  var outcome = document.getElementById("audit-outcome");
  if (!input || !groups || !outcome) {
    return;
  }

  function candidate(name) {
    return name !== "id" && !/^(score_|label_|x_)/.test(name);
  }

  input.addEventListener("change", function () {
    var file = input.files && input.files[0];
    groups.replaceChildren();
    outcome.replaceChildren(new Option("None (selection rates only)", ""));
    if (!file) {
      return;
    }
    window.csvHeader(file).then(function (columns) {
      columns.filter(candidate).forEach(function (name) {
        groups.add(new Option(name, name));
        outcome.add(new Option(name, name));
      });
    });
  });
})();
