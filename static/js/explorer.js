/* Trajectory explorer: best-so-far plot, step navigation, lazy outputs,
 * in-rollout find, and compare's synchronised columns.
 *
 * Trajectory text arrives already escaped in the page; this script never
 * turns trajectory text into markup (it only wraps text nodes in <mark>),
 * and fragments it inserts come from our own server, escaped there. */
(function () {
  "use strict";

  function readJSON(id) {
    var el = document.getElementById(id);
    return el ? JSON.parse(el.textContent) : null;
  }

  /* The plot data's compact outline of every step (trajectories.explorer.
   * compact_outline) as [step id, elapsed seconds, "kind kind"] rows. */
  var KIND_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

  function decodeOutline(outline) {
    var ids = [];
    outline.ids.forEach(function (run) { for (var i = 0; i < run[1]; i++) ids.push(run[0] + i); });
    var rows = [];
    var t = 0;
    for (var n = 0; n < ids.length; n++) {
      var delta = outline.t[n];
      var at = null;
      if (delta !== null && delta !== undefined) { t += delta; at = t; }
      var bits = KIND_DIGITS.indexOf(outline.k.charAt(n));
      var kinds = outline.kinds.filter(function (kind, index) { return bits & (1 << index); });
      rows.push([ids[n], at, kinds.join(" ")]);
    }
    return rows;
  }

  function withSteps(data) {
    if (data && data.outline && !data.steps) data.steps = decodeOutline(data.outline);
    return data;
  }

  function stepElements() {
    return Array.prototype.slice.call(document.querySelectorAll("#steps .step"));
  }

  function isVisible(el) {
    return el.offsetParent !== null;
  }

  /* Long rollouts come in pages of steps: a step that is not on this page
   * is asked of the server by id (?step=N), which answers with its page. */
  function stepLocation(stepId, needle) {
    var page = document.querySelector(".rollout-page");
    if (!page) return null;
    var url = page.getAttribute("data-detail-url") + "?step=" + encodeURIComponent(stepId);
    var only = page.getAttribute("data-only");
    if (only && document.getElementById("steps").classList.contains("server-filtered")) url += "&only=" + encodeURIComponent(only);
    if (needle) url += "&q=" + encodeURIComponent(needle);
    return url;
  }

  function goToStep(stepId, needle) {
    // Only steps the rollout has: a stale link to no step leaves the page be.
    var known = plot.data && plot.data.steps.some(function (s) { return String(s[0]) === String(stepId); });
    var url = known && stepLocation(stepId, needle);
    if (url) window.location.assign(url);
  }

  /* ---------- folded runs of waits ---------- */

  /* The folded row holding step `stepId`, if it is in one. */
  function foldOf(stepId) {
    var folds = document.querySelectorAll("#steps details.fold");
    var wanted = String(stepId);
    for (var i = 0; i < folds.length; i++) {
      if ((" " + folds[i].getAttribute("data-step-ids") + " ").indexOf(" " + wanted + " ") >= 0) return folds[i];
    }
    return null;
  }

  /* Open a folded row, its steps fetched from the server the first time. */
  function openFold(fold) {
    if (fold.hasAttribute("data-loaded")) { fold.open = true; return Promise.resolve(fold); }
    if (fold.loading) return fold.loading;
    var box = fold.querySelector(".fold-steps");
    box.textContent = "Loading…";
    fold.loading = window.fetchFragment(fold.getAttribute("data-url"))
      .then(function (steps) {
        box.textContent = "";
        box.appendChild(steps);
        fold.setAttribute("data-loaded", "");
        fold.open = true;
        return fold;
      })
      .catch(function (error) {
        fold.loading = null;
        box.textContent = "Could not load these steps (" + error.message + "); close and open again to retry.";
        return fold;
      });
    return fold.loading;
  }

  function initFolds() {
    // "toggle" does not bubble: listen in the capture phase.
    document.addEventListener("toggle", function (event) {
      var fold = event.target;
      if (fold.classList && fold.classList.contains("fold") && fold.open) openFold(fold);
    }, true);
  }

  /* Step `stepId`'s element, its folded row opened first if it is in one. */
  function revealStep(stepId) {
    var el = document.getElementById("step-" + stepId);
    if (el) { openAncestors(el); return Promise.resolve(el); }
    var fold = foldOf(stepId);
    if (!fold) return Promise.resolve(null);
    return openFold(fold).then(function () { return document.getElementById("step-" + stepId); });
  }

  function scrollToStep(stepId, updateHash) {
    var el = document.getElementById("step-" + stepId);
    if (!el) {
      if (!foldOf(stepId)) { goToStep(stepId); return false; }
      revealStep(stepId).then(function (shown) { if (shown) scrollToStep(stepId, updateHash); });
      return true;
    }
    openAncestors(el);
    if (!isVisible(el)) {
      var toggle = document.getElementById("only-toggle");
      if (toggle && toggle.checked) { toggle.checked = false; applyOnly(false); }
    }
    el.scrollIntoView({ block: "start" });
    if (updateHash !== false) history.replaceState(null, "", "#step-" + stepId);
    setCurrent(el);
    return true;
  }

  /* ---------- plot ---------- */

  var plot = { el: null, data: null, y: "metric", x: "t", currentStepId: null, series: null, zoom: null };

  function xOf(point, mode) {
    if (mode === "step") return point.step_id;
    return point.t === null || point.t === undefined ? null : point.t / 60;
  }

  function anchorValue(data, which, mode) {
    if (mode === "score") return which === "baseline" ? 0 : 1;
    return data[which];
  }

  function seriesTraces(data, y, x, label, colour) {
    var pts = data.points;
    var yKey = y === "score" ? "score" : "metric";
    var bestKey = y === "score" ? "best_score" : "best_metric";
    var traces = [];
    var bestX = pts.map(function (p) { return xOf(p, x); });
    var bestY = pts.map(function (p) { return p[bestKey]; });
    var endX = x === "step" ? data.end_step : (data.end_t === null ? null : data.end_t / 60);
    if (pts.length && endX !== null && endX > bestX[bestX.length - 1]) {
      bestX.push(endX);
      bestY.push(bestY[bestY.length - 1]);
    }
    // Zoomed in on a decimated curve: the results in view at full resolution.
    var shown = data.zoomPoints || pts;
    traces.push({
      name: (label ? label + " " : "") + "benchmark calls",
      mode: "markers", type: "scatter",
      x: shown.map(function (p) { return xOf(p, x); }),
      y: shown.map(function (p) { return p[yKey]; }),
      customdata: shown.map(function (p) { return p.step_id; }),
      marker: { size: 9, color: colour || "#2251cc", opacity: 0.75 },
      hovertemplate: "step %{customdata}<br>%{y}<extra></extra>"
    });
    traces.push({
      name: (label ? label + " " : "") + "best so far",
      mode: "lines", type: "scatter", line: { shape: "hv", width: 2, color: colour || "#1a7f37" },
      x: bestX, y: bestY, hoverinfo: "skip"
    });
    if (data.unparsed && data.unparsed.length) {
      var fallback = pts.length ? pts[0][bestKey] : anchorValue(data, "baseline", y);
      traces.push({
        name: (label ? label + " " : "") + "benchmark, no metric parsed",
        mode: "markers", type: "scatter",
        x: data.unparsed.map(function (p) { return xOf(p, x); }),
        y: data.unparsed.map(function () { return fallback; }),
        customdata: data.unparsed.map(function (p) { return p.step_id; }),
        marker: { symbol: "x", size: 9, color: colour || "#9a6700" },
        hovertemplate: "step %{customdata}: no metric parsed<extra></extra>"
      });
    }
    var finalY = y === "score" ? data.final_score : data.final_metric;
    if (finalY !== null && finalY !== undefined && endX !== null) {
      traces.push({
        name: (label ? label + " " : "") + "verifier final",
        mode: "markers", type: "scatter", x: [endX], y: [finalY],
        marker: { symbol: "star", size: 14, color: colour || "#b42318" },
        hovertemplate: "verifier: %{y}<extra></extra>"
      });
    }
    return traces;
  }

  /* Each series' baseline and reference, as its rollout's page states them.
   * Two rollouts of one task may be scored against different anchors (one
   * verifier reported its own reference, the other's fell back to
   * task.toml's): each is drawn, named by its rollout; a line both share is
   * drawn once. */
  function anchorLines(series, y) {
    var lines = [];
    [["baseline", "#5f6b7a"], ["reference", "#9a6700"]].forEach(function (pair) {
      var which = pair[0];
      var values = series.map(function (s) { return anchorValue(s.data, which, y); });
      var known = values.filter(function (v) { return v !== null && v !== undefined; });
      var shared = known.every(function (v) { return v === known[0]; });
      values.forEach(function (v, i) {
        if (v === null || v === undefined || values.indexOf(v) !== i) return;
        var label = series[i].label;
        lines.push({ value: v, colour: pair[1], text: shared || !label ? which : which + " (" + label + ")" });
      });
    });
    return lines;
  }

  function anchorShapes(series, y) {
    return anchorLines(series, y).map(function (line) {
      return { type: "line", name: "anchor", xref: "paper", x0: 0, x1: 1, y0: line.value, y1: line.value, line: { dash: "dot", width: 1, color: line.colour } };
    });
  }

  function anchorAnnotations(series, y) {
    return anchorLines(series, y).map(function (line) {
      return { xref: "paper", x: 1, xanchor: "right", y: line.value, yanchor: "bottom", text: line.text, showarrow: false, font: { size: 10, color: "#5f6b7a" } };
    });
  }

  function currentShape() {
    if (plot.currentStepId === null || !plot.data) return [];
    var entry = null;
    plot.data.steps.forEach(function (s) { if (s[0] === plot.currentStepId) entry = s; });
    if (!entry) return [];
    var x = plot.x === "step" ? entry[0] : (entry[1] === null ? null : entry[1] / 60);
    if (x === null) return [];
    return [{ type: "line", name: "current", yref: "paper", y0: 0, y1: 1, x0: x, x1: x, line: { width: 2, color: "rgba(34,81,204,0.45)" } }];
  }

  function xRange(series) {
    var end = 0;
    series.forEach(function (s) {
      var d = s.data;
      var candidates = plot.x === "step"
        ? [d.end_step].concat(d.points.map(function (p) { return p.step_id; }))
        : [d.end_t, d.budget].concat(d.points.map(function (p) { return p.t; })).map(function (v) { return v === null || v === undefined ? null : v / 60; });
      candidates.forEach(function (v) { if (v !== null && v !== undefined && v > end) end = v; });
    });
    return end > 0 ? [0, end * 1.02] : undefined;
  }

  function budgetShape(data) {
    if (plot.x === "step" || !data.budget) return [];
    return [{ type: "line", yref: "paper", y0: 0, y1: 1, x0: data.budget / 60, x1: data.budget / 60, line: { dash: "dash", width: 1, color: "#b42318" } }];
  }

  function layout(series) {
    var data = series[0].data;
    return {
      margin: { t: 10, r: 20, b: 45, l: 60 }, height: 320,
      showlegend: true, legend: { orientation: "h", y: -0.25 },
      xaxis: { title: { text: plot.x === "step" ? "step" : "elapsed (minutes)" }, zeroline: false, range: plot.zoom || xRange(series) },
      yaxis: { title: { text: plot.y === "score" ? "normalised score" : (data.metric || "metric") }, zeroline: false },
      shapes: anchorShapes(series, plot.y).concat(budgetShape(data), currentShape()),
      annotations: anchorAnnotations(series, plot.y),
      hovermode: "closest"
    };
  }

  function drawPlot() {
    if (!plot.el || !window.Plotly) return;
    var traces = [];
    plot.series.forEach(function (s) { traces = traces.concat(seriesTraces(s.data, plot.y, plot.x, s.label, s.colour)); });
    var hasPoints = plot.series.some(function (s) { return s.data.points.length || (s.data.unparsed || []).length; });
    plot.el.classList.toggle("empty", !hasPoints);
    if (!hasPoints) plot.el.setAttribute("data-state", "empty");
    window.Plotly.react(plot.el, traces, layout(plot.series), { displayModeBar: false, responsive: true });
    plot.el.setAttribute("data-points", plot.series.reduce(function (n, s) { return n + (s.data.zoomPoints || s.data.points).length; }, 0));
  }

  function updateCurrentOnPlot() {
    if (!plot.el || !window.Plotly || !plot.el.data) return;
    var data = plot.series[0].data;
    window.Plotly.relayout(plot.el, { shapes: anchorShapes(plot.series, plot.y).concat(budgetShape(data), currentShape()) });
    plot.el.setAttribute("data-current-step", plot.currentStepId === null ? "" : plot.currentStepId);
  }

  function initPlot(series, onClick) {
    plot.el = document.getElementById("curve-plot");
    if (!plot.el) return;
    plot.series = series;
    plot.data = series[0].data;
    // The chart bundle arrives after the steps are shown (static/js/charts.js).
    (window.autolabCharts = window.autolabCharts || []).push(function () {
      drawPlot();
      updateCurrentOnPlot();
      plot.el.on && plot.el.on("plotly_click", function (event) {
        var p = event.points && event.points[0];
        if (p && p.customdata !== undefined && p.customdata !== null) onClick(p.customdata, p);
      });
      plot.el.on && plot.el.on("plotly_relayout", zoomed);
    });
    document.querySelectorAll('.plot-controls input[type=radio]').forEach(function (input) {
      input.addEventListener("change", function () {
        if (input.name === "yaxis") plot.y = input.value; else { plot.x = input.value; unzoom(); }
        drawPlot();
      });
    });
  }

  /* A curve sent decimated (analysis.curve.decimate_curve) is asked for at full
   * resolution over the range zoomed in on; zooming out shows it whole. */
  function unzoom() {
    plot.zoom = null;
    plot.series.forEach(function (s) { s.data.zoomPoints = null; });
  }

  /* Only a single curve sent decimated has more to show when zoomed in. */
  function decimated(data) {
    return plot.series.length === 1 && plot.el.getAttribute("data-curve-url") && data.points_total > data.points.length;
  }

  function zoomed(event) {
    var data = plot.series[0].data;
    if (!decimated(data)) return;
    if (event["xaxis.autorange"]) { unzoom(); drawPlot(); return; }
    var low = event["xaxis.range[0]"], high = event["xaxis.range[1]"];
    if (low === undefined && event["xaxis.range"]) { low = event["xaxis.range"][0]; high = event["xaxis.range"][1]; }
    if (low === undefined || high === undefined) return;
    plot.zoom = [low, high];
    askZoomed(data);
  }

  /* The zoomed range of `data` at full resolution; only the latest answer counts. */
  function askZoomed(data) {
    if (!plot.zoom || !decimated(data)) return;
    var url = plot.el.getAttribute("data-curve-url");
    // Minutes on the plot, seconds in the data.
    var scale = plot.x === "step" ? 1 : 60;
    var ask = (plot.zoomAsked = (plot.zoomAsked || 0) + 1);
    fetch(url + "?x=" + plot.x + "&low=" + plot.zoom[0] * scale + "&high=" + plot.zoom[1] * scale, { headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (answer) {
        if (!answer || ask !== plot.zoomAsked) return;
        data.zoomPoints = answer.points;
        drawPlot();
      })
      .catch(function () {});
  }

  /* ---------- current step ---------- */

  var current = null;

  /* The timeline mark standing for a step: its own, or the one it shares
   * with its neighbours in the same column of a long rollout's strip. */
  function timelineMark(stepId) {
    var mark = document.querySelector('.timeline-strip .mark[data-step-id="' + stepId + '"]');
    if (mark) return mark;
    var marks = document.querySelectorAll(".timeline-strip .mark[data-first]");
    for (var i = 0; i < marks.length; i++) {
      if (+marks[i].getAttribute("data-first") <= stepId && stepId <= +marks[i].getAttribute("data-last")) return marks[i];
    }
    return null;
  }

  function setCurrent(el) {
    if (current === el) return;
    if (current) current.classList.remove("current");
    current = el;
    if (!el) return;
    el.classList.add("current");
    plot.currentStepId = parseInt(el.getAttribute("data-step-id"), 10);
    document.querySelectorAll(".timeline-strip .mark.current").forEach(function (m) { m.classList.remove("current"); });
    var mark = timelineMark(plot.currentStepId);
    if (mark) mark.classList.add("current");
    updateCurrentOnPlot();
  }

  function stepInView() {
    var steps = stepElements().filter(isVisible);
    var line = 80;
    var best = null;
    for (var i = 0; i < steps.length; i++) {
      var rect = steps[i].getBoundingClientRect();
      if (rect.top <= line) best = steps[i];
      else { if (!best) best = steps[i]; break; }
    }
    return best;
  }

  function trackCurrent() {
    var pending = false;
    window.addEventListener("scroll", function () {
      if (pending) return;
      pending = true;
      window.requestAnimationFrame(function () {
        pending = false;
        var el = stepInView();
        if (el) setCurrent(el);
      });
    }, { passive: true });
  }

  /* ---------- keyboard ---------- */

  function hasKind(kinds, kind) {
    return (" " + (kinds || "") + " ").indexOf(" " + kind + " ") >= 0;
  }

  /* What j/k step through: shown steps, and closed folded rows as one stop each. */
  function navItems() {
    return Array.prototype.slice.call(document.querySelectorAll("#steps .step, #steps details.fold")).filter(function (el) {
      return el.classList.contains("fold") ? !el.open && isVisible(el) : isVisible(el);
    });
  }

  function foldEdge(fold, delta) {
    var ids = fold.getAttribute("data-step-ids").split(" ");
    return ids[delta > 0 ? 0 : ids.length - 1];
  }

  function move(delta, kind) {
    var items = navItems();
    if (!items.length) return;
    var index = current ? items.indexOf(current) : -1;
    if (index < 0 && current && current.closest("details.fold")) index = items.indexOf(current.closest("details.fold"));
    for (var i = index + delta; i >= 0 && i < items.length; i += delta) {
      var item = items[i];
      if (kind && !hasKind(item.getAttribute("data-kinds"), kind)) continue;
      if (item.classList.contains("fold")) {
        var target = foldEdge(item, delta);
        openFold(item).then(function () { scrollToStep(target); });
      } else {
        scrollToStep(item.getAttribute("data-step-id"));
      }
      return;
    }
    var edge = items[delta > 0 ? items.length - 1 : 0];
    if (edge.classList.contains("fold")) {
      var id = foldEdge(edge, -delta);
      edge = { getAttribute: function () { return id; } };
    }
    moveAcrossPages(edge, delta, kind);
  }

  /* Past the first or last step of this page: the next one in the whole
   * trajectory (the plot data lists every step with its kinds), kept to
   * the kinds the server filtered by. */
  function moveAcrossPages(edge, delta, kind) {
    var list = document.getElementById("steps");
    if (!plot.data || !edge || !list || list.getAttribute("data-pages") === "1") return;
    var only = list.classList.contains("server-filtered") ? document.querySelector(".rollout-page").getAttribute("data-only").split(",") : [];
    var all = plot.data.steps;
    var from = -1;
    var edgeId = parseInt(edge.getAttribute("data-step-id"), 10);
    for (var j = 0; j < all.length; j++) if (all[j][0] === edgeId) { from = j; break; }
    if (from < 0) return;
    for (var i = from + delta; i >= 0 && i < all.length; i += delta) {
      var kinds = all[i][2];
      if (only.length && !only.some(function (k) { return hasKind(kinds, k); })) continue;
      if (kind && !hasKind(kinds, kind)) continue;
      goToStep(all[i][0]);
      return;
    }
  }

  function initKeys() {
    document.addEventListener("keydown", function (event) {
      var target = event.target;
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
      var key = event.key;
      if (key === "j") move(1);
      else if (key === "k") move(-1);
      else if (key === "b") move(1, "benchmark");
      else if (key === "e") move(1, "edit");
      else if (key === "/") {
        var box = document.getElementById("step-search");
        if (box) { event.preventDefault(); box.focus(); }
        return;
      } else return;
      event.preventDefault();
    });
  }

  /* ---------- only benchmark calls and edits ---------- */

  function applyOnly(on) {
    var steps = document.getElementById("steps");
    if (!steps) return;
    if (!on && steps.classList.contains("server-filtered")) {
      window.location.search = "";
      return;
    }
    steps.classList.toggle("only-be", on);
  }

  function initOnly() {
    var toggle = document.getElementById("only-toggle");
    if (!toggle) return;
    toggle.addEventListener("change", function () { applyOnly(toggle.checked); });
  }

  /* ---------- lazy outputs ---------- */

  function loadOutputs(button) {
    var box = button.closest(".observation");
    button.disabled = true;
    button.textContent = "Loading…";
    return window.fetchFragment(button.getAttribute("data-url"))
      .then(function (output) { box.replaceWith(output); })
      .catch(function (error) {
        button.disabled = false;
        button.textContent = "Could not load the output (" + error.message + "); try again";
      });
  }

  function loadStepOutputs(stepId) {
    var buttons = document.querySelectorAll("#step-" + stepId + " button.load-output");
    return Promise.all(Array.prototype.map.call(buttons, loadOutputs));
  }

  function initOutputs() {
    document.addEventListener("click", function (event) {
      var button = event.target.closest && event.target.closest("button.load-output");
      if (button) loadOutputs(button);
    });
  }

  /* ---------- find in this rollout ---------- */

  var find = { hits: [], index: -1, timer: null, serverSeq: 0 };

  function clearMarks(root) {
    root.querySelectorAll("mark.find-hit").forEach(function (mark) {
      var parent = mark.parentNode;
      parent.replaceChild(document.createTextNode(mark.textContent), mark);
      parent.normalize();
    });
  }

  function markText(root, needle) {
    var hits = [];
    var lower = needle.toLowerCase();
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: function (node) {
        return node.nodeValue.toLowerCase().indexOf(lower) >= 0 ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT;
      }
    });
    var nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    nodes.forEach(function (node) {
      var text = node.nodeValue;
      var at = text.toLowerCase().indexOf(lower);
      var frag = document.createDocumentFragment();
      var pos = 0;
      while (at >= 0) {
        frag.appendChild(document.createTextNode(text.slice(pos, at)));
        var mark = document.createElement("mark");
        mark.className = "find-hit";
        mark.textContent = text.slice(at, at + needle.length);
        frag.appendChild(mark);
        hits.push(mark);
        pos = at + needle.length;
        at = text.toLowerCase().indexOf(lower, pos);
      }
      frag.appendChild(document.createTextNode(text.slice(pos)));
      node.parentNode.replaceChild(frag, node);
    });
    return hits;
  }

  function openAncestors(el) {
    for (var node = el; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
  }

  function showHit(i) {
    if (!find.hits.length) return;
    if (find.index >= 0 && find.hits[find.index]) find.hits[find.index].classList.remove("active");
    find.index = (i + find.hits.length) % find.hits.length;
    var mark = find.hits[find.index];
    mark.classList.add("active");
    openAncestors(mark);
    mark.scrollIntoView({ block: "center" });
    var step = mark.closest(".step");
    if (step) setCurrent(step);
    status(find.hits.length + " on this page · " + (find.index + 1) + " of " + find.hits.length);
  }

  /* The first hit inside step `stepId`, if the find marked one there. */
  function showHitIn(stepId) {
    for (var i = 0; i < find.hits.length; i++) {
      var step = find.hits[i].closest(".step");
      if (step && step.getAttribute("data-step-id") === String(stepId)) { showHit(i); return true; }
    }
    return false;
  }

  function status(text) {
    var el = document.getElementById("step-search-status");
    if (el) el.textContent = text;
  }

  function runFind(needle) {
    var root = document.getElementById("steps");
    clearMarks(root);
    find.hits = [];
    find.index = -1;
    var serverBox = document.getElementById("server-matches");
    if (serverBox) { serverBox.hidden = true; serverBox.textContent = ""; }
    if (!needle) { status(""); return; }
    if (needle.length < 2) { status("type at least 2 characters"); return; }
    find.hits = markText(root, needle);
    status(find.hits.length ? find.hits.length + " on this page" : "none on this page");
    if (find.hits.length) showHit(0);
    askServer(needle);
  }

  function askServer(needle) {
    var page = document.querySelector(".rollout-page");
    var serverBox = document.getElementById("server-matches");
    if (!page || !serverBox) return;
    var seq = ++find.serverSeq;
    fetch(page.getAttribute("data-search-url") + "?q=" + encodeURIComponent(needle))
      .then(function (r) { return r.json(); })
      .then(function (result) {
        if (seq !== find.serverSeq) return;
        var shown = {};
        find.hits.forEach(function (m) { var s = m.closest(".step"); if (s) shown[s.getAttribute("data-step-id")] = true; });
        var extra = result.step_ids.filter(function (id) { return !shown[String(id)]; });
        if (!extra.length) return;
        serverBox.hidden = false;
        serverBox.appendChild(document.createTextNode("Also in full outputs, or on other pages, of steps: "));
        extra.forEach(function (id, n) {
          var link = document.createElement("a");
          var here = document.getElementById("step-" + id) || foldOf(id);
          link.href = here ? "#step-" + id : stepLocation(id, needle);
          link.className = "server-match";
          link.textContent = "#" + id;
          if (here) link.addEventListener("click", function (event) {
            event.preventDefault();
            revealStep(id).then(function () {
              scrollToStep(id);
              return loadStepOutputs(id);
            }).then(function () { runFind(needle); showHitIn(id); });
          });
          if (n) serverBox.appendChild(document.createTextNode(", "));
          serverBox.appendChild(link);
        });
      })
      .catch(function () {});
  }

  /* Arriving from another page's find (?q=): the same find here, shown
   * inside the step it led to, that step's full outputs loaded first. */
  function findInStep(needle, stepId) {
    var box = document.getElementById("step-search");
    if (!box) return;
    box.value = needle;
    box.setAttribute("data-last", needle);
    revealStep(stepId).then(function () { return loadStepOutputs(stepId); }).then(function () {
      runFind(needle);
      if (!showHitIn(stepId)) scrollToStep(stepId, false);
    });
  }

  function initFind() {
    var box = document.getElementById("step-search");
    if (!box) return;
    // The find never leaves the page (no inline onsubmit: the CSP forbids it).
    if (box.form) box.form.addEventListener("submit", function (event) { event.preventDefault(); });
    box.addEventListener("input", function () {
      clearTimeout(find.timer);
      find.timer = setTimeout(function () { runFind(box.value.trim()); }, 250);
    });
    box.addEventListener("keydown", function (event) {
      if (event.key === "Enter") {
        event.preventDefault();
        clearTimeout(find.timer);
        var needle = box.value.trim();
        if (!find.hits.length || box.getAttribute("data-last") !== needle) { box.setAttribute("data-last", needle); runFind(needle); }
        else showHit(find.index + (event.shiftKey ? -1 : 1));
      } else if (event.key === "Escape") {
        box.blur();
      }
    });
    var next = document.getElementById("step-search-next");
    if (next) next.addEventListener("click", function () { showHit(find.index + 1); });
  }

  /* ---------- rollout page ---------- */

  function initRolloutPage() {
    var data = withSteps(readJSON("plot-data"));
    if (!data) return;
    initPlot([{ data: data }], function (stepId) { scrollToStep(stepId); });
    initKeys();
    initOnly();
    initOutputs();
    initFind();
    initFolds();
    trackCurrent();
    followLiveSteps();
    var match = /^#step-(\d+)$/.exec(window.location.hash);
    var needle = new URLSearchParams(window.location.search).get("q");
    if (match) {
      var el = document.getElementById("step-" + match[1]);
      if (!el && foldOf(match[1])) {
        // A permalink to a folded step opens its row.
        revealStep(match[1]).then(function (shown) {
          if (!shown) return;
          shown.scrollIntoView({ block: "start" });
          setCurrent(shown);
          if (needle) findInStep(needle, match[1]);
        });
        return;
      }
      if (!el) { goToStep(match[1], needle); return; }
      el.scrollIntoView({ block: "start" });
      setCurrent(el);
      if (needle) findInStep(needle, match[1]);
    } else {
      var first = stepInView();
      if (first) setCurrent(first);
    }
    window.addEventListener("hashchange", function () {
      var m = /^#step-(\d+)$/.exec(window.location.hash);
      if (m) scrollToStep(m[1], false);
    });
  }

  /* A running rollout's appended steps and its end (static/js/live.js): the
   * plot and the outline key navigation crosses pages with take the new steps
   * and benchmark results; what the page shows otherwise stays as it is. */
  function followLiveSteps() {
    var banner = document.getElementById("live");
    if (!banner) return;
    var asked = 0;
    function refresh() {
      var ask = ++asked;
      fetch(banner.dataset.liveUrl + "?plot=1", { headers: { Accept: "application/json" } })
        .then(function (response) { return response.ok ? response.json() : null; })
        .then(function (live) {
          // Only the latest answer counts: an earlier one may arrive last.
          if (!live || !live.plot || ask !== asked) return;
          plot.data = plot.series[0].data = withSteps(live.plot);
          drawPlot();
          updateCurrentOnPlot();
          // A zoomed-in reader keeps the range at full resolution, new results included.
          askZoomed(plot.data);
          document.dispatchEvent(new CustomEvent("autolab:plot-updated", { detail: { steps: plot.data.steps.length } }));
        })
        .catch(function () {});
    }
    document.addEventListener("autolab:steps-added", refresh);
    // The run's end may rescore its curve (the verifier's anchors): the plot is read once more.
    document.addEventListener("autolab:live-ended", refresh);
  }

  /* ---------- compare page ---------- */

  function nearestByTime(column, t) {
    var steps = column.querySelectorAll(".step[data-t]");
    var best = null;
    for (var i = 0; i < steps.length; i++) {
      var st = parseFloat(steps[i].getAttribute("data-t"));
      if (isNaN(st)) continue;
      if (st <= t || !best) best = steps[i];
      if (st > t) break;
    }
    return best;
  }

  function topStep(column) {
    var steps = column.querySelectorAll(".step");
    var top = column.getBoundingClientRect().top;
    for (var i = 0; i < steps.length; i++) {
      if (steps[i].getBoundingClientRect().bottom > top + 4) return steps[i];
    }
    return null;
  }

  function initCompare() {
    var data = readJSON("compare-data");
    if (!data) return;
    withSteps(data.a);
    withSteps(data.b);
    var series = [
      { data: data.a, label: data.a_label, colour: "#2251cc" },
      { data: data.b, label: data.b_label, colour: "#c2410c" }
    ];
    var columns = document.querySelectorAll(".compare-column .steps-scroll");
    var pair = document.querySelector(".compare-columns");
    initPlot(series, function (stepId, point) {
      var which = point.data.name.indexOf(data.b_label + " ") === 0 ? 1 : 0;  // "… rollout 1 " is no prefix of "… rollout 12 …"
      var col = columns[which];
      var el = col && col.querySelector('[data-step-id="' + stepId + '"]');
      if (el) { col.scrollTop = el.offsetTop; return; }
      // Long rollouts show one window of time: the server finds the step's.
      if (pair) {
        window.location.assign("?a=" + pair.getAttribute("data-a") + "&b=" + pair.getAttribute("data-b") +
          "&focus=" + (which ? "b" : "a") + "-" + encodeURIComponent(stepId));
      }
    });
    var focus = /^([ab])-(\d+)$/.exec(new URLSearchParams(window.location.search).get("focus") || "");
    if (focus) {
      var col = columns[focus[1] === "b" ? 1 : 0];
      var el = col && col.querySelector('[data-step-id="' + focus[2] + '"]');
      if (el) { col.scrollTop = el.offsetTop; el.classList.add("current"); }
    }
    var sync = document.getElementById("sync-scroll");
    var driving = null;
    columns.forEach(function (col, i) {
      col.addEventListener("scroll", function () {
        if (sync && !sync.checked) return;
        if (driving !== null && driving !== i) return;
        driving = i;
        window.requestAnimationFrame(function () {
          var step = topStep(col);
          var other = columns[1 - i];
          if (step && other) {
            var t = parseFloat(step.getAttribute("data-t"));
            var target = isNaN(t) ? null : nearestByTime(other, t);
            if (target) other.scrollTop = target.offsetTop;
          }
          setTimeout(function () { driving = null; }, 60);
        });
      }, { passive: true });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (document.querySelector(".rollout-page")) initRolloutPage();
    if (document.querySelector(".compare-page")) initCompare();
    // Subagent pages have no plot or timeline: only on-demand outputs.
    if (document.querySelector(".subagent-page")) initOutputs();
  });
})();
