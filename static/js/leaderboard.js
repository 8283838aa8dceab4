/* Leaderboard page: column sorting and plotly charts.
 * The server already renders a sorted table and ?sort= links work without
 * JavaScript; this re-sorts a one-page table in place (a paged one is sorted
 * by the server: static/js/board_swap.js) and draws each chart when it is
 * about to be seen. */
(function () {
  "use strict";

  function cellValue(row, index) {
    var cell = row.cells[index];
    return cell ? cell.getAttribute("data-value") || "" : "";
  }

  function compare(a, b, descending) {
    // Empty values always sort last, whatever the direction.
    if (a === "" && b === "") return 0;
    if (a === "") return 1;
    if (b === "") return -1;
    var numeric = /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/;
    var result = numeric.test(a) && numeric.test(b) ? parseFloat(a) - parseFloat(b) : a.localeCompare(b);
    return descending ? -result : result;
  }

  function sortTable(table, th) {
    var headerRow = table.tHead.rows[table.tHead.rows.length - 1];
    var headers = Array.prototype.slice.call(headerRow.cells);
    var index = headers.indexOf(th);
    var current = th.getAttribute("aria-sort");
    var descending = current ? current === "ascending" : (th.dataset.sortFirst || "").charAt(0) === "-";
    // Each body sorts on its own: the comparison set, then ablations and the rest.
    Array.prototype.forEach.call(table.tBodies, function (body) {
      var rows = Array.prototype.slice.call(body.rows).filter(function (r) { return r.cells.length > 1; });
      rows.sort(function (r1, r2) { return compare(cellValue(r1, index), cellValue(r2, index), descending); });
      rows.forEach(function (r) { body.appendChild(r); });
    });
    headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    var params = new URLSearchParams(window.location.search);
    params.set("sort", (descending ? "-" : "") + th.dataset.sortKey);
    window.history.replaceState(null, "", "?" + params.toString());
    // Applying a filter next keeps this order.
    var hidden = document.querySelector('#board-filters input[name="sort"]');
    if (hidden) hidden.value = params.get("sort");
  }

  function initSorting() {
    document.querySelectorAll("table.sortable").forEach(function (table) {
      // A page of a longer board sorts on the server: its header links load the first page so sorted.
      if (table.dataset.paged) return;
      Array.prototype.forEach.call(table.tHead.rows[table.tHead.rows.length - 1].cells, function (th) {
        if (!th.dataset.sortKey) return;
        th.addEventListener("click", function (event) {
          event.preventDefault();
          sortTable(table, th);
        });
      });
    });
  }

  var layoutBase = { margin: { t: 10, r: 10, b: 40, l: 50 }, font: { size: 12 }, height: 380,
    legend: { orientation: "h", y: -0.25, yanchor: "top" } };
  var config = { displaylogo: false, responsive: true };

  // The charts' data, fetched once, when the first chart is about to be seen (the server's
  // /charts/ for the page's query: embedded, it grew the page ~780 bytes an entry).
  function fetcher(url) {
    var pending = null;
    return function () {
      if (!pending) {
        pending = window.fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
          .then(function (response) {
            if (!response.ok) throw new Error("charts: HTTP " + response.status);
            return response.json();
          });
      }
      return pending;
    };
  }

  function layout(extra) { return Object.assign({}, layoutBase, extra); }

  // Loaded async: the page may or may not be parsed yet.
  function init() {
    initSorting();
    var section = document.querySelector("section.charts[data-charts-src]:not(.time-curves):not(.published-charts)");
    if (section) drawWhenSeen(section, fetcher(section.getAttribute("data-charts-src")));
    var published = document.querySelector("section.published-charts[data-charts-src]");
    if (published) drawPublishedWhenSeen(published, fetcher(published.getAttribute("data-charts-src")));
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();

  // Each chart is drawn when it is about to be seen (static/js/charts.js): at 100 entries
  // they hold thousands of nodes, which the first screen (the table) does not need.
  function drawWhenSeen(section, charts) {
    var bars = document.getElementById("chart-bars");
    // Its drawn height, held while it waits, so that the page does not jump when it draws.
    if (bars) bars.style.minHeight = barsHeight(Number(section.getAttribute("data-bars")) || 0) + "px";
    var queue = (window.autolabCharts = window.autolabCharts || []);
    [["chart-bars", drawBars], ["chart-pareto", drawParetoChart], ["chart-budget", drawBudget], ["chart-at-k", drawAtK]]
      .forEach(function (chart) {
        var node = document.getElementById(chart[0]);
        queue.push({ node: node, draw: function (Plotly) {
          charts().then(function (data) { chart[1](Plotly, data); }, function () {
            if (node) node.setAttribute("data-state", "no-charts");
          });
        } });
      });
  }

  function barsHeight(n) { return Math.max(260, 28 * n + 120); }

  function drawBars(Plotly, charts) {
    // As AutoLab's figure: Best@k a light bar, Avg@k a solid bar over it, each with its value; the Avg@k
    // interval as a thin line. Horizontal: entry labels are long. Best first, from the top.
    var labels = charts.bars.map(function (b) { return b.label; });
    var level = document.getElementById("chart-bars").getAttribute("data-interval");  // the server's level
    var fixed = function (v) { return v === null ? "" : v.toFixed(2); };
    var avgs = charts.bars.map(function (b) { return b.avg; });
    var avgTexts = avgs.map(fixed);
    var drawn = Plotly.newPlot("chart-bars", [
      { type: "bar", orientation: "h", name: "Best@k", y: labels, x: charts.bars.map(function (b) { return b.best; }),
        marker: { color: "rgba(34, 81, 204, 0.22)", line: { color: "rgba(34, 81, 204, 0.5)", width: 1 } },
        text: charts.bars.map(function (b) { return fixed(b.best); }), textposition: "outside", cliponaxis: false,
        textfont: { size: 11, color: "#1d2330" }, hovertemplate: "%{y}<br>Best@k %{x:.3f}<extra></extra>" },
      { type: "bar", orientation: "h", name: "Avg@k (" + level + " interval)", y: labels, x: charts.bars.map(function (b) { return b.avg; }),
        marker: { color: "#2251cc" }, width: 0.55,
        text: avgTexts, textposition: "inside", insidetextanchor: "start",
        textfont: { size: 11, color: "#fff" },
        error_x: { type: "data", symmetric: false, color: "#1d2330", thickness: 1, width: 3,
          array: charts.bars.map(function (b) { return b.avg_ci ? b.avg_ci[1] - b.avg : 0; }),
          arrayminus: charts.bars.map(function (b) { return b.avg_ci ? b.avg - b.avg_ci[0] : 0; }) },
        hovertemplate: "%{y}<br>Avg@k %{x:.3f} (" + level + " interval as the line)<extra></extra>" }
    ], layout({ height: barsHeight(charts.bars.length), barmode: "overlay", bargap: 0.3, margin: { t: 40, r: 30, b: 50, l: 50 },
      xaxis: { title: { text: "score (Avg@k solid, Best@k light)" }, rangemode: "tozero" },
      yaxis: { autorange: "reversed", automargin: true },
      legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom", traceorder: "reversed" } }), config);
    var node = document.getElementById("chart-bars");
    var place = function () { placeAvgTexts(Plotly, node, avgs, avgTexts); };
    drawn.then(function () { place(); node.on("plotly_afterplot", place); });
  }

  // Avg@k's value is written inside its bar where the bar holds it, and nowhere where it does not (the hover
  // and the table carry it): written over a short bar, it was shrunk to a speck or ran over the bar's end,
  // its interval and Best@k's value. Placed once drawn, and again at each redraw (a resize changes the bars' length).
  var AVG_TRACE = 1;
  function textWidth(text) { return text.length * 11 * 0.6 + 8; }  // pixels, at the 11 px font, with its padding
  function avgTextPositions(axis, avgs, texts) {
    var span = axis.range[1] - axis.range[0];
    return avgs.map(function (v, i) {
      if (v === null || !texts[i] || !(span > 0)) return "none";
      return (v - Math.max(axis.range[0], 0)) / span * axis._length >= textWidth(texts[i]) ? "inside" : "none";
    });
  }
  function placeAvgTexts(Plotly, node, avgs, texts, axisName) {
    var axis = node._fullLayout && node._fullLayout[axisName || "xaxis"];
    if (!axis || !axis._length) return;
    var positions = avgTextPositions(axis, avgs, texts);
    var current = node.data[AVG_TRACE].textposition;
    if (Array.isArray(current) && current.join() === positions.join()) return;  // nothing moved: no redraw, no loop
    Plotly.restyle(node, { textposition: [positions] }, [AVG_TRACE]);
  }

  // The published main set as the paper draws it (AutoLab's leaderboard_v1.1.png): per entry a light Best@k
  // bar behind a solid Avg@k bar, both values written, sorted by Avg@k (the server's order). Upright bars as
  // the paper's where the card is wide enough for the names under them; on a phone, lying, as drawBars'.
  function drawPublishedWhenSeen(section, charts) {
    var node = document.getElementById("chart-published");
    if (!node) return;
    var n = Number(section.getAttribute("data-bars")) || 0;
    node.style.minHeight = (upright(node, n) ? PUBLISHED_HEIGHT : barsHeight(n)) + "px";
    (window.autolabCharts = window.autolabCharts || []).push({ node: node, draw: function (Plotly) {
      charts().then(function (data) { drawPublished(Plotly, node, data); }, function () {
        node.setAttribute("data-state", "no-charts");
      });
    } });
  }

  var PUBLISHED_HEIGHT = 420;
  var NAME_LINE = 12;  // characters of a name's line under an upright bar ("claude-opus-" / "4.6")
  // A model's name on lines under its bar, broken after a hyphen (kept: the name stays the name), as the
  // paper's ("Claude Opus" / "4.6").
  function wrapName(name) {
    var lines = [""];
    var parts = name.split("-");
    parts.map(function (part, i) { return i < parts.length - 1 ? part + "-" : part; }).forEach(function (part) {
      var last = lines.length - 1;
      if (lines[last] && (lines[last] + part).length > NAME_LINE) lines.push(part);
      else lines[last] += part;
    });
    return lines.join("<br>");
  }
  // Upright where each bar has room for its name's lines under it (NAME_LINE characters), as in the paper.
  function upright(node, n) { return node.clientWidth >= Math.max(640, 95 * n); }

  function drawPublished(Plotly, node, charts) {
    var bars = charts.bars;
    var up = upright(node, bars.length);
    var names = bars.map(function (b) { return b.label; });
    var labels = up ? names.map(wrapName) : names;
    var avgs = bars.map(function (b) { return b.avg; });
    var avgTexts = bars.map(function (b) { return b.avg_text || ""; });  // as the table writes them (as printed)
    var place = function (values) { return up ? { x: labels, y: values } : { y: labels, x: values, orientation: "h" }; };
    var valueAxis = up ? "y" : "x";
    var best = Object.assign(place(bars.map(function (b) { return b.best; })), {
      type: "bar", name: "Best@k",
      marker: { color: "rgba(34, 81, 204, 0.22)", line: { color: "rgba(34, 81, 204, 0.5)", width: 1 } },
      // Bold as the paper's, by the font's weight: "<b>" is drawn with a style attribute, which the CSP blocks.
      text: bars.map(function (b) { return b.best_text || ""; }), textposition: "outside", cliponaxis: false,
      textfont: { size: 12, color: "#1d2330", weight: 700 },
      customdata: bars.map(function (b) { return [b.label, b.best_text]; }),
      hovertemplate: "%{customdata[0]}<br>Best@k %{customdata[1]}<extra></extra>" });
    var avg = Object.assign(place(avgs), {
      type: "bar", name: "Avg@k", marker: { color: "#2251cc" },
      text: avgTexts, textposition: "inside", insidetextanchor: "end", textfont: { size: 12, color: "#fff" },
      customdata: names, hovertemplate: "%{customdata}<br>Avg@k %{text}<extra></extra>" });
    var axisTitle = { title: { text: "score (Avg@k solid, Best@k light)" }, rangemode: "tozero" };
    var extra = up
      ? { height: PUBLISHED_HEIGHT, margin: { t: 40, r: 10, b: 70, l: 50 }, yaxis: axisTitle,
          xaxis: { automargin: true, tickangle: 0 } }
      : { height: barsHeight(bars.length), margin: { t: 40, r: 30, b: 50, l: 50 }, xaxis: axisTitle,
          yaxis: { autorange: "reversed", automargin: true } };
    var drawn = Plotly.newPlot(node, [best, avg], layout(Object.assign({ barmode: "overlay", bargap: 0.35,
      legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom", traceorder: "reversed" } }, extra)), config);
    var again = function () { placeAvgTexts(Plotly, node, avgs, avgTexts, valueAxis + "axis"); };
    drawn.then(function () { again(); node.on("plotly_afterplot", again); });
  }

  function drawParetoChart(Plotly, charts) {
    var drawPareto = function (axis) {
      var points = charts.pareto.filter(function (p) { return p[axis] !== null; });
      var node = document.getElementById("chart-pareto");
      var missing = charts.pareto.length - points.length;
      document.getElementById("pareto-missing").textContent = missing
        ? missing + " entr" + (missing === 1 ? "y" : "ies") + " without a recorded " + axis + " not shown." : "";
      if (!points.length) {
        // Nothing to place on the axes: say so instead of drawing empty ones.
        Plotly.purge(node);
        node.setAttribute("data-state", "empty");
        node.textContent = "No entry has a recorded " + axis + ".";
        return;
      }
      node.removeAttribute("data-state");
      node.textContent = "";
      var frontier = points.filter(function (p) { return p["frontier_" + axis]; })
        .sort(function (a, b) { return a[axis] - b[axis]; });
      Plotly.react("chart-pareto", [
        { type: "scatter", mode: "markers", name: "entries", x: points.map(function (p) { return p[axis]; }),
          y: points.map(function (p) { return p.score; }), text: points.map(function (p) { return p.label; }),
          hovertemplate: "%{text}<br>%{x:.3s} per rollout<br>Avg@k %{y:.3f}<extra></extra>", marker: { size: 9 } },
        { type: "scatter", mode: "lines+markers", name: "Pareto frontier", x: frontier.map(function (p) { return p[axis]; }),
          y: frontier.map(function (p) { return p.score; }), line: { shape: "hv", dash: "dot" },
          marker: { size: 16, symbol: "circle-open", line: { width: 2 } } }
      ], layout({ xaxis: { title: { text: axis === "cost" ? "USD per rollout" : "tokens per rollout" }, type: "log" },
        yaxis: { title: { text: "Avg@k" } } }), config);
    };
    // The axis chosen before the chart was drawn, if any.
    var chosen = document.querySelector('input[name="pareto-x"]:checked');
    drawPareto(chosen ? chosen.value : "cost");
    document.querySelectorAll('input[name="pareto-x"]').forEach(function (input) {
      input.addEventListener("change", function () { drawPareto(input.value); });
    });
  }

  function drawBudget(Plotly, charts) {
    Plotly.newPlot("chart-budget", charts.budget.series.map(function (s) {
      return { type: "scatter", mode: "lines", name: s.label, x: charts.budget.x, y: s.y, line: { shape: "hv" } };
    }), layout({ xaxis: { title: { text: "fraction of the time budget" } }, yaxis: { title: { text: "expected Avg@k" }, rangemode: "tozero" } }), config);
  }

  function drawAtK(Plotly, charts) {
    Plotly.newPlot("chart-at-k", charts.score_at_k.map(function (s) {
      return { type: "scatter", mode: "lines+markers", name: s.label, x: s.y.map(function (_, i) { return i + 1; }), y: s.y };
    }), layout({ xaxis: { title: { text: "k" }, dtick: 1 }, yaxis: { title: { text: "score@k" }, rangemode: "tozero" } }), config);
  }

})();
