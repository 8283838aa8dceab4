/* A paged board (the leaderboard at more entries than a page, the heatmap)
 * sorts and pages on the server. Its links work without JavaScript; with it,
 * a click on a link inside an element marked data-swap fetches the same URL
 * with ?part=board (the server renders only the page's parts that change:
 * the same template partials, so one source for the rows) and puts each
 * fetched element in place of the element with its id, without reloading the
 * page (and its charts). The address follows (history.pushState), so reload,
 * share and back give the same table. A failed fetch falls back to loading
 * the page itself.
 *
 * When the new parts are in, document receives an "autolab:board-swapped" event
 * (benchmarks/scale_bench.py times the click to the frame after it). */
(function () {
  "use strict";
  var PART = "part";
  var shown = withoutHash(window.location.href);
  var pending = null;

  function withoutHash(href) { return href.split("#")[0]; }

  function partUrl(href) {
    var url = new URL(href, window.location.href);
    url.searchParams.set(PART, "board");
    return url.toString();
  }

  // Which control had the focus, to give it back in the new parts (keyboard users stay where they were).
  function focusKey(link) {
    var header = link.closest("th[data-sort-key]");
    var root = link.closest("[data-swap]");
    if (header && header.closest("table[id]")) return "#" + header.closest("table[id]").id + ' th[data-sort-key="' + header.dataset.sortKey + '"] a';
    if (link.rel && root) return "#" + root.id + ' a[rel="' + link.rel + '"]';
    return null;
  }

  function keepFilters(href) {
    // The filter form's hidden sort and order carry the new ones into the next filter.
    var params = new URL(href, window.location.href).searchParams;
    document.querySelectorAll('#board-filters input[type="hidden"]').forEach(function (input) {
      if (params.has(input.name)) input.value = params.get(input.name);
    });
  }

  // A wide table scrolls sideways in its box (the heatmap's entries, the leaderboard's categories):
  // the new one keeps that position, so that the column just clicked stays in view.
  function sideways() {
    var found = {};
    document.querySelectorAll("[data-swap] [id]").forEach(function (el) { if (el.scrollLeft) found[el.id] = el.scrollLeft; });
    return found;
  }

  function restoreSideways(found) {
    Object.keys(found).forEach(function (id) {
      var el = document.getElementById(id);
      if (el) el.scrollLeft = found[id];
    });
  }

  function swap(href, push, focus, toTop) {
    var roots = document.querySelectorAll("[data-swap]");
    roots.forEach(function (root) { root.setAttribute("aria-busy", "true"); });
    var request = pending = fetch(partUrl(href), { headers: { "X-Requested-With": "fetch" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (html) {
        if (request !== pending) return;  // a later click won
        var holder = document.createElement("template");
        holder.innerHTML = html;
        var parts = Array.prototype.filter.call(holder.content.children, function (node) { return node.id; });
        if (!parts.length || parts.some(function (node) { return !document.getElementById(node.id); })) {
          throw new Error("unexpected parts");
        }
        var scrolled = sideways();
        parts.forEach(function (node) { document.getElementById(node.id).replaceWith(node); });
        restoreSideways(scrolled);
        if (push) window.history.pushState({ board: true }, "", href);
        shown = withoutHash(window.location.href);
        keepFilters(href);
        var target = focus && document.querySelector(focus);
        if (target) target.focus({ preventScroll: true });
        if (toTop && parts[0].getBoundingClientRect().top < 0) parts[0].scrollIntoView();
        document.dispatchEvent(new CustomEvent("autolab:board-swapped", { detail: { url: href } }));
      })
      .catch(function () {
        if (request === pending) window.location.href = href;  // the page itself, as without JavaScript
      });
  }

  document.addEventListener("click", function (event) {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    var link = event.target.closest && event.target.closest("a[href]");
    if (!link || !link.closest("[data-swap]") || link.target) return;
    var url = new URL(link.href, window.location.href);
    // Only the same page with other parameters: a cell's link to its rollouts is a page of its own.
    if (url.origin !== window.location.origin || url.pathname !== window.location.pathname) return;
    event.preventDefault();
    swap(url.toString(), true, focusKey(link), Boolean(link.rel));
  });

  window.addEventListener("popstate", function () {
    // Back or forward to another sort or page of this board (a change of #anchor alone is not one).
    if (withoutHash(window.location.href) === shown) return;
    swap(window.location.href, false, null, false);
  });
})();
