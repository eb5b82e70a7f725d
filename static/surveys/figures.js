// Render Plotly figures serialised by the server (fig.to_json() or json_script) into [data-figure]
// elements. No inline scripts: the data come from <script type="application/json"> blocks.
// On narrow screens the legend goes below the plot, and a figure whose title is already the
// heading above it (data-title-shown) drops its own title.
(function () {
  "use strict";
  document.querySelectorAll("[data-figure]").forEach(function (el) {
    var raw = JSON.parse(document.getElementById(el.dataset.figure).textContent);
    var fig = typeof raw === "string" ? JSON.parse(raw) : raw;
    var layout = fig.layout || {};
    if (el.clientWidth && el.clientWidth < 600) {
      layout.legend = Object.assign({}, layout.legend, {orientation: "h", x: 0, y: -0.25, yanchor: "top"});
      layout.margin = Object.assign({l: 50, r: 10, t: 30, b: 40}, layout.margin);
      if (el.hasAttribute("data-title-shown")) {
        layout.title = {text: ""};
        layout.margin.t = 10;
      }
    }
    if (window.Plotly) {
      window.Plotly.newPlot(el, fig.data, layout, {responsive: true, displaylogo: false});
    }
  });
})();
