/* Load the chart bundle after the page, never before it.
 *
 * A page with charts names the bundle on an element: data-plotly-src="...".
 * Deferred scripts still run before DOMContentLoaded, so a deferred 1 MB
 * bundle would hold back the page; a script inserted from here once the page
 * is parsed loads on its own and runs when it arrives, after the tables are
 * shown. Page scripts hand over their drawing, before or after this script
 * has run (both may load async, in either order):
 *
 *   (window.autolabCharts = window.autolabCharts || []).push(function (Plotly) { ... });
 */
(function () {
  "use strict";
  var waiting = Array.isArray(window.autolabCharts) ? window.autolabCharts.slice() : [];
  var ready = false;

  function draw(callback) { callback(window.Plotly); }

  window.autolabCharts = {
    push: function (callback) {
      if (ready) draw(callback); else waiting.push(callback);
    }
  };

  function load() {
    var holder = document.querySelector("[data-plotly-src]");
    if (!holder) return;
    var script = document.createElement("script");
    script.src = holder.getAttribute("data-plotly-src");
    script.async = true;
    script.onload = function () {
      ready = true;
      var queue = waiting;
      waiting = [];
      queue.forEach(draw);
    };
    script.onerror = function () {
      document.querySelectorAll("[data-plotly-src], .chart, .plot").forEach(function (el) {
        el.setAttribute("data-state", "no-charts");
      });
    };
    document.head.appendChild(script);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", load); else load();
})();
