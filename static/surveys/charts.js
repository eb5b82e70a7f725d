// Draw every Plotly line chart on the page from its JSON data block (no inline scripts).
(function () {
  "use strict";
  var colors = ["#1f5fa8", "#c2410c", "#15803d", "#7e22ce", "#a16207"];
  document.querySelectorAll("[data-chart]").forEach(function (el) {
    var data = JSON.parse(document.getElementById(el.dataset.chart).textContent);
    var traces = data.traces.map(function (t, i) {
      return {
        x: data.x, y: t.y, name: t.name, type: "scatter", mode: "lines+markers",
        line: {width: 3, color: colors[i % colors.length], dash: i === 0 ? "solid" : "dash"},
        marker: {size: 8}
      };
    });
    // Two lines: the legend above the plot; more (a fair-score page's whole set): below it, in rows
    // that would otherwise cover the lines.
    var rows = traces.length > 2 ? Math.ceil(traces.length / 2) : 0;
    var layout = {
      margin: {l: 50, r: 10, t: 10, b: 40 + 24 * rows}, height: 260 + 24 * rows,
      yaxis: {title: {text: data.ytitle}, rangemode: "tozero", fixedrange: true},
      xaxis: {type: "category", fixedrange: true},
      legend: rows ? {orientation: "h", x: 0, y: -0.12, yanchor: "top"} : {orientation: "h", y: 1.15},
      font: {size: 14}
    };
    if (window.Plotly) {
      window.Plotly.newPlot(el, traces, layout, {displayModeBar: false, responsive: true, staticPlot: false});
    }
  });
})();
