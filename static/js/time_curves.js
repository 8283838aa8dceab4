/* RE-Bench's curves on the leaderboard: score@k by total time budget, score
 * over elapsed time, score against cost. Agents solid, human baselines
 * dashed; every line ends where its data ends (no extrapolation). The data
 * is the server's (/charts/?chart=time, fetched when a chart is about to be seen); drawing waits
 * for charts.js. */
(function () {
  "use strict";

  var config = { displaylogo: false, responsive: true };
  // Room below the plot for the axis title and a legend of several lines, inside the card.
  var base = { margin: { t: 10, r: 10, b: 110, l: 55 }, font: { size: 12 }, height: 440,
    legend: { orientation: "h", y: -0.2, yanchor: "top" } };

  function layout(extra) { return Object.assign({}, base, extra); }

  // A time axis readable at its data's span: hours, minutes or seconds by its longest time, and a log
  // scale only where the times span a factor of 10 or more (the budget axis of a few 30-second runs
  // read "hours, log scale" with ticks 0.0083 to 0.0091).
  var UNITS = [[1, "hours", "h"], [60, "minutes", "min"], [3600, "seconds", "s"]];

  function timeAxis(hours, title) {
    var positive = hours.filter(function (h) { return h > 0; });
    var longest = positive.length ? Math.max.apply(null, positive) : 1;
    var shortest = positive.length ? Math.min.apply(null, positive) : 1;
    var unit = UNITS.filter(function (u) { return longest * u[0] >= 1; })[0] || UNITS[UNITS.length - 1];
    var log = longest / shortest >= 10;
    return { factor: unit[0], short: unit[2], log: log,
      axis: { title: { text: title + " (" + unit[1] + (log ? ", log scale" : "") + ")" }, type: log ? "log" : "linear",
        rangemode: log ? undefined : "tozero", tickformat: log ? undefined : "~g" } };
  }

  function scaled(values, factor) { return values.map(function (v) { return v * factor; }); }

  function allX(series, key) {
    return series.reduce(function (all, s) { return all.concat(s[key].x); }, []);
  }

  function line(s, xy, extra) {
    return Object.assign({ type: "scatter", mode: "lines+markers", name: s.label + (s.human ? " (human)" : ""),
      x: xy.x, y: xy.y, line: { dash: s.human ? "dash" : "solid", width: s.human ? 3 : 2 }, marker: { size: 5 } }, extra || {});
  }

  function dataEnds(series, factor) {
    // One marker per line at the last point it has: where its data ends.
    var ends = series.filter(function (s) { return s.budget.x.length; });
    return { type: "scatter", mode: "markers", name: "data ends", hoverinfo: "text", showlegend: true,
      x: ends.map(function (s) { return s.budget.x[s.budget.x.length - 1] * factor; }),
      y: ends.map(function (s) { return s.budget.y[s.budget.y.length - 1]; }),
      text: ends.map(function (s) { return s.label + ": no data beyond " + s.data_end.toPrecision(3) + " h per run"; }),
      marker: { symbol: "diamond-open", size: 12, line: { width: 2 } } };
  }

  function drawBudget(Plotly, charts) {
    var series = charts.series;
    var time = timeAxis(allX(series, "budget"), "total time budget");
    Plotly.newPlot("chart-time-budget", series.map(function (s) {
      return line(s, { x: scaled(s.budget.x, time.factor), y: s.budget.y }, {
        text: s.budget.k.map(function (k) { return "best with k = " + k; }),
        hovertemplate: "%{x:.3g} " + time.short + " total<br>score %{y:.3f}<br>%{text}<extra>" + s.label + "</extra>" });
    }).concat([dataEnds(series, time.factor)]), layout({
      xaxis: time.axis, yaxis: { title: { text: "score@k (best allocation)" }, rangemode: "tozero" } }), config);
  }

  function drawElapsed(Plotly, charts) {
    var series = charts.series;
    // Log time where the runs span it, as the budget chart: agents' minutes and humans' hours on one axis
    // (t = 0 has no place on a log axis).
    var time = timeAxis(allX(series, "elapsed"), "elapsed time of a run");
    Plotly.newPlot("chart-elapsed", series.map(function (s) {
      var keep = s.elapsed.x.map(function (x) { return x > 0 || !time.log; });
      return line(s, { x: scaled(s.elapsed.x.filter(function (_, i) { return keep[i]; }), time.factor),
        y: s.elapsed.y.filter(function (_, i) { return keep[i]; }) }, { mode: "lines", line: { shape: "hv", dash: s.human ? "dash" : "solid" } });
    }), layout({ xaxis: time.axis, yaxis: { title: { text: "mean best score so far" }, rangemode: "tozero" } }), config);
  }

  function drawCost(Plotly, charts) {
    var series = charts.series;
    var priced = series.filter(function (s) { return s.cost.x.length; });
    var node = document.getElementById("chart-time-cost");
    if (!priced.length) {
      node.setAttribute("data-state", "empty");
      node.textContent = "No entry has a recorded cost or an hourly rate.";
      return;
    }
    Plotly.newPlot("chart-time-cost", priced.map(function (s) {
      return line(s, s.cost, { text: s.cost.hours.map(function (h) { return h.toPrecision(3) + " h"; }),
        hovertemplate: "$%{x:.3s}<br>score %{y:.3f}<br>%{text}<extra>" + s.label +
          (s.dollars_per_hour !== null ? " at $" + s.dollars_per_hour.toPrecision(3) + "/h" : "") + "</extra>" });
    }), layout({ xaxis: { title: { text: "cost (USD, log scale)" }, type: "log" },
      yaxis: { title: { text: "score@k (best allocation)" }, rangemode: "tozero" } }), config);
  }

  function init() {
    var section = document.querySelector("section.time-curves[data-charts-src]");
    if (!section) return;
    var url = section.getAttribute("data-charts-src");
    var pending = null;
    function charts() {
      if (!pending) {
        pending = window.fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
          .then(function (response) {
            if (!response.ok) throw new Error("time charts: HTTP " + response.status);
            return response.json();
          });
      }
      return pending;
    }
    // Each chart is drawn when it is about to be seen (static/js/charts.js).
    var queue = (window.autolabCharts = window.autolabCharts || []);
    [["chart-time-budget", drawBudget], ["chart-elapsed", drawElapsed], ["chart-time-cost", drawCost]].forEach(function (chart) {
      var node = document.getElementById(chart[0]);
      queue.push({ node: node, draw: function (Plotly) {
        charts().then(function (data) { if (data) chart[1](Plotly, data); }, function () {
          if (node) node.setAttribute("data-state", "no-charts");
        });
      } });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
