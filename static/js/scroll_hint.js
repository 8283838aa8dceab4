/* Tables wider than their box scroll sideways inside it (.table-scroll,
 * .heatmap-scroll); on a phone nothing showed that they did, and the
 * columns past the edge looked lost. This marks each such box that
 * overflows (data-overflows), and keeps the mark right as the window
 * resizes or a part of the page is swapped in: CSS then shows a line
 * saying so above the table and a shadow at the edge with more columns. */
(function () {
  "use strict";
  var SELECTOR = ".table-scroll, .heatmap-scroll";

  function mark(box) {
    var overflows = box.scrollWidth > box.clientWidth + 1;
    if (overflows) box.setAttribute("data-overflows", "true"); else box.removeAttribute("data-overflows");
  }

  function markAll() { document.querySelectorAll(SELECTOR).forEach(mark); }

  function start() {
    markAll();
    if ("ResizeObserver" in window) {
      var resized = new ResizeObserver(function (entries) { entries.forEach(function (entry) { mark(entry.target); }); });
      document.querySelectorAll(SELECTOR).forEach(function (box) { resized.observe(box); });
    }
    window.addEventListener("resize", markAll);
    // A sort or a page of entries replaces a table (static/js/board_swap.js).
    new MutationObserver(markAll).observe(document.body, { childList: true, subtree: true });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
