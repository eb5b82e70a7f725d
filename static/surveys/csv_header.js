// The column names of a chosen CSV file, for the forms that pick columns from it (the study builder's column
// picker, the model audit's sensitive and truth columns): window.csvHeader(file) resolves to the names in its
// first record (quotes as in RFC 4180, a byte-order mark dropped), read from its first 64 KiB.
// The server reads the header again from the uploaded file and checks every choice.
(function () {
  "use strict";

  function firstRecord(text) {
    var cells = [], cell = "", quoted = false;
    for (var i = 0; i < text.length; i++) {
      var ch = text[i];
      if (quoted) {
        if (ch === '"' && text[i + 1] === '"') { cell += '"'; i++; }
        else if (ch === '"') { quoted = false; }
        else { cell += ch; }
      } else if (ch === '"') { quoted = true; }
      else if (ch === ",") { cells.push(cell); cell = ""; }
      else if (ch === "\n" || ch === "\r") { break; }
      else { cell += ch; }
    }
    cells.push(cell);
    return cells;
  }

  window.csvHeader = function (file) {
    return file.slice(0, 1 << 16).text().then(function (text) {
      return firstRecord(text.replace(/^\uFEFF/, ""));
    });
  };
})();
