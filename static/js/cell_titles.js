/* A heatmap cell's hover text names whose figures it shows. The server
 * writes only the figures into each cell's title (evaluations.views.cell_title):
 * a page has 900 cells, and the names are already in the column's and the
 * row's headers. On the first hover or focus of a cell, its column's entry
 * and its row's task go in front. Delegated from the document, so the cells
 * of a board swapped in (board_swap.js) get theirs too. */
(function () {
  "use strict";

  function text(el) { return el ? el.textContent.replace(/\s+/g, " ").trim() : ""; }

  function name(event) {
    var link = event.target.closest ? event.target.closest("td.cell > a[title]") : null;
    if (!link || link.dataset.named) return;
    var cell = link.parentElement;
    var table = cell.closest("table");
    var header = table && table.tHead ? table.tHead.rows[0].cells[cell.cellIndex] : null;
    var entry = header ? text(header.querySelector(".model")) + " / " + text(header.querySelector(".harness")) : "";
    var task = text(cell.parentElement.querySelector('th[scope="row"]'));
    link.dataset.named = "1";
    if (entry && task) link.title = entry + " on " + task + "\n" + link.title;
  }

  document.addEventListener("mouseover", name);
  document.addEventListener("focusin", name);
})();
