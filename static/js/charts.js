/* Load the chart bundle after the page, never before it.
 *
 * A page with charts names the bundle on an element: data-plotly-src="...".
 * Deferred scripts still run before DOMContentLoaded, so a deferred 1 MB
 * bundle would hold back the page; a script inserted from here loads on its
 * own and runs when it arrives, after the tables are shown. Page scripts ask
 * for it with autolabCharts.whenReady(draw). */
(function () {
  "use strict";
  var waiting = [];
  var state = "idle";

  function flush() {
    var queue = waiting;
    waiting = [];
    queue.forEach(function (draw) { draw(window.Plotly); });
  }

  function load() {
    var holder = document.querySelector("[data-plotly-src]");
    if (!holder) return;
    state = "loading";
    var script = document.createElement("script");
    script.src = holder.getAttribute("data-plotly-src");
    script.async = true;
    script.onload = function () { state = "ready"; flush(); };
    script.onerror = function () {
      state = "failed";
      document.querySelectorAll("[data-plotly-src], .chart, .plot").forEach(function (el) {
        el.setAttribute("data-state", "no-charts");
      });
    };
    document.head.appendChild(script);
  }

  window.autolabCharts = {
    whenReady: function (draw) {
      if (state === "ready") { draw(window.Plotly); return; }
      waiting.push(draw);
      if (state === "idle") load();
    }
  };
})();
