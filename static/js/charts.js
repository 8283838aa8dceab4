/* Load the chart bundle after the page, never before it, and draw a chart
 * only when it is about to be seen.
 *
 * A page with charts names the bundle on an element: data-plotly-src="...".
 * Deferred scripts still run before DOMContentLoaded, so a deferred 1 MB
 * bundle would hold back the page; a script inserted from here loads on its
 * own and runs when it arrives, after the tables are shown. Page scripts hand
 * over their drawing, before or after this script has run (both may load
 * async, in either order), in one of two ways:
 *
 *   (window.autolabCharts = window.autolabCharts || []).push(function (Plotly) { ... });
 *     draws as soon as the bundle is there (the bundle loads once the page is parsed);
 *   (window.autolabCharts = window.autolabCharts || []).push({ node: element, draw: function (Plotly) { ... } });
 *     draws when `element` comes within VISIBLE_MARGIN of the viewport (at once if it is
 *     in view at load); the bundle itself is fetched only then. A board of 100 entries
 *     has thousands of SVG nodes in its charts: a page below its charts' fold carries none.
 */
(function () {
  "use strict";
  var VISIBLE_MARGIN = "400px 0px";
  var waiting = Array.isArray(window.autolabCharts) ? window.autolabCharts.slice() : [];
  var queue = [];  // drawings waiting for the bundle
  var state = "idle";  // idle, loading, ready, failed
  var parsed = document.readyState !== "loading";
  var observer = null;

  function run(draw) {
    try { draw(window.Plotly); } catch (error) {
      // One chart's failure must not keep the others from drawing.
      window.setTimeout(function () { throw error; });
    }
  }

  function failed() {
    document.querySelectorAll("[data-plotly-src], .chart, .plot").forEach(function (el) {
      el.setAttribute("data-state", "no-charts");
    });
  }

  function load() {
    if (state !== "idle") return;
    var holder = document.querySelector("[data-plotly-src]");
    if (!holder) return;
    state = "loading";
    var script = document.createElement("script");
    script.src = holder.getAttribute("data-plotly-src");
    script.async = true;
    script.onload = function () {
      state = "ready";
      var drawings = queue;
      queue = [];
      drawings.forEach(run);
    };
    script.onerror = function () { state = "failed"; failed(); };
    document.head.appendChild(script);
  }

  function draw(callback) {
    if (state === "ready") { run(callback); return; }
    if (state === "failed") return;
    queue.push(callback);
    if (parsed) load();
  }

  function whenVisible(node, callback) {
    if (!node) return;
    if (!("IntersectionObserver" in window)) { draw(callback); return; }
    if (!observer) {
      observer = new IntersectionObserver(function (entries) {
        entries.forEach(function (entry) {
          if (!entry.isIntersecting) return;
          observer.unobserve(entry.target);
          var callbacks = entry.target.__autolabDraw || [];
          entry.target.__autolabDraw = [];
          callbacks.forEach(draw);
        });
      }, { rootMargin: VISIBLE_MARGIN });
    }
    (node.__autolabDraw = node.__autolabDraw || []).push(callback);
    observer.observe(node);
  }

  function accept(item) {
    if (typeof item === "function") draw(item);
    else if (item && typeof item.draw === "function") whenVisible(item.node, item.draw);
  }

  window.autolabCharts = { push: accept };
  waiting.forEach(accept);

  function start() {
    parsed = true;
    if (queue.length) load();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
