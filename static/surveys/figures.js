// Render Plotly figures serialised by the server (fig.to_json()) into [data-figure] elements.
(function () {
  "use strict";
  document.querySelectorAll("[data-figure]").forEach(function (el) {
    var raw = JSON.parse(document.getElementById(el.dataset.figure).textContent);
    var fig = typeof raw === "string" ? JSON.parse(raw) : raw;
    if (window.Plotly) {
      window.Plotly.newPlot(el, fig.data, fig.layout, {responsive: true, displaylogo: false});
    }
  });
})();
