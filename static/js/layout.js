/* Sizes and colours computed by the server, applied without style attributes.
 *
 * The Content-Security-Policy forbids inline style attributes (style-src has
 * no 'unsafe-inline'), but styles set through the CSSOM are allowed. So the
 * templates say
 *
 *   data-left="12.500"   -> left: 12.5%      (timeline marks, axis ticks)
 *   data-width="40.00"   -> width: 40%       (timing phase bars)
 *   data-rgb-fg="r,g,b"  -> color            (24-bit ANSI colours of outputs)
 *   data-rgb-bg="r,g,b"  -> background-color
 *
 * and this script applies them, on the page and on every fragment inserted
 * later (outputs loaded on demand, live steps). Only numbers are accepted.
 * Pages that show trajectories (rollout, subagent, compare) load it.
 */
(function () {
  "use strict";
  var SELECTOR = "[data-left],[data-width],[data-rgb-fg],[data-rgb-bg]";

  function percent(value) {
    var n = parseFloat(value);
    return isFinite(n) ? n + "%" : "";
  }

  function rgb(value) {
    var parts = String(value).split(",").map(function (p) { return parseInt(p, 10); });
    if (parts.length !== 3 || parts.some(function (p) { return !(p >= 0 && p <= 255); })) return "";
    return "rgb(" + parts.join(",") + ")";
  }

  function apply(el) {
    if (el.hasAttribute("data-left")) el.style.left = percent(el.getAttribute("data-left"));
    if (el.hasAttribute("data-width")) el.style.width = percent(el.getAttribute("data-width"));
    if (el.hasAttribute("data-rgb-fg")) el.style.color = rgb(el.getAttribute("data-rgb-fg"));
    if (el.hasAttribute("data-rgb-bg")) el.style.backgroundColor = rgb(el.getAttribute("data-rgb-bg"));
  }

  function applyWithin(root) {
    if (root.nodeType !== 1) return;
    if (root.matches(SELECTOR)) apply(root);
    root.querySelectorAll(SELECTOR).forEach(apply);
  }

  window.autolabLayout = applyWithin;

  function start() {
    applyWithin(document.documentElement);
    new MutationObserver(function (changes) {
      changes.forEach(function (change) { change.addedNodes.forEach(applyWithin); });
    }).observe(document.body, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
