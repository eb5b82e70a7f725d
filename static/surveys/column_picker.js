// The study builder's column picker: when a CSV is chosen, read its header (csv_header.js) and list its
// columns, each with a copy of the server's role select (role_<i>: feature,
// group, id, AI label, AI score, outcome, hidden); the stratify-by select lists the same columns.
// Choices already made for a column of the same name are kept. The server reads the header again from the
// uploaded file and checks every choice.
// No inline script (CSP script-src 'self'); without JavaScript the server lists the columns after a first post.
(function () {
  "use strict";
  var input = document.getElementById("id_subjects");
  var table = document.getElementById("column-picker-table");
  var prototype = document.getElementById("column-role");
  var stratify = document.getElementById("id_stratify_by");
  if (!input || !table || !prototype) {
    return;
  }

  function show(columns) {
    var body = table.tBodies[0];
    var before = {};  // the choices already made (e.g. listed by the server after a post), kept by column name
    Array.prototype.forEach.call(body.rows, function (row) {
      before[row.cells[0].textContent] = row.querySelector("select").value;
    });
    body.replaceChildren();
    columns.forEach(function (name, i) {
      var select = prototype.content.querySelector("select").cloneNode(true);
      select.name = "role_" + i;
      select.id = "id_role_" + i;
      select.value = before[name] || (name.trim().toLowerCase() === "id" ? "id" : "hidden");
      var row = body.insertRow();
      var th = document.createElement("th");
      th.scope = "row";
      var label = document.createElement("label");
      label.htmlFor = select.id;
      label.textContent = name;
      th.appendChild(label);
      row.appendChild(th);
      row.insertCell().appendChild(select);
    });
    table.hidden = columns.length === 0;
    document.getElementById("column-picker-empty").hidden = columns.length > 0;
    if (stratify) {
      var chosen = stratify.value;
      stratify.replaceChildren(new Option("No strata", ""));
      columns.forEach(function (name) { stratify.add(new Option(name, name)); });
      stratify.value = columns.indexOf(chosen) >= 0 ? chosen : "";
    }
  }

  input.addEventListener("change", function () {
    var file = input.files && input.files[0];
    if (!file) {
      show([]);
      return;
    }
    window.csvHeader(file).then(show);
  });
})();
