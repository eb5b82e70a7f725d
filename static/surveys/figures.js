// Render Plotly figures serialised by the server (fig.to_json() or json_script) into [data-figure]
// elements. No inline scripts: the data come from <script type="application/json"> blocks.
// A figure whose title is already the heading above it (data-title-shown) drops its own title on
// the page but keeps it in downloads. On narrow screens the legend goes below the plot.
// Downloads: the modebar's camera (PNG), an added SVG button, and [data-download] buttons
// (format png or svg, data-target = the figure's element id); files are named by data-filename.
(function () {
  "use strict";
  var Plotly = window.Plotly;
  var titles = {};

  function download(el, format) {
    if (!Plotly || !el.data) return;
    var layout = Object.assign({}, el.layout, {title: titles[el.id] || el.layout.title});
    Plotly.downloadImage({data: el.data, layout: layout}, {
      format: format,
      filename: el.dataset.filename || "figure",
      width: Math.max(el.clientWidth, 800),
      height: Math.max(el.clientHeight, 450),
    });
  }

  document.querySelectorAll("[data-figure]").forEach(function (el) {
    var raw = JSON.parse(document.getElementById(el.dataset.figure).textContent);
    var fig = typeof raw === "string" ? JSON.parse(raw) : raw;
    var layout = fig.layout || {};
    titles[el.id] = layout.title;
    if (el.hasAttribute("data-title-shown")) {
      layout.title = {text: ""};
      layout.margin = Object.assign({t: 30}, layout.margin);
    }
    if (el.clientWidth && el.clientWidth < 600) {
      // at the container's foot, below the axis title and tilted tick labels (y: -0.25 of the plot overlapped them)
      layout.legend = Object.assign({}, layout.legend,
        {orientation: "h", x: 0, xref: "container", y: 0, yref: "container", yanchor: "bottom"});
      layout.margin = Object.assign({l: 50, r: 10, t: 10, b: 40}, layout.margin);
    }
    if (!Plotly) return;
    Plotly.newPlot(el, fig.data, layout, {
      responsive: true,
      displaylogo: false,
      toImageButtonOptions: {format: "png", filename: el.dataset.filename || "figure"},
      modeBarButtonsToAdd: [{
        name: "Download plot as SVG",
        title: "Download plot as SVG",
        icon: Plotly.Icons.disk,
        click: function () { download(el, "svg"); },
      }],
    });
  });

  document.querySelectorAll("[data-download]").forEach(function (button) {
    button.addEventListener("click", function () {
      download(document.getElementById(button.dataset.target), button.dataset.download);
    });
  });
})();
