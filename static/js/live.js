// A running rollout's page follows its trajectory: it polls live.json and
// appends the steps that are new (fetched as HTML from the step fragment
// view), so open details, a find and the focus stay as they are. When the
// run ends, the page's cards marked data-live-part (status, result, run,
// failure analysis, grades, timeline, files, logs, subagents) are replaced
// by the same page's, read once more as it is now: what a reload would show,
// without one. The plot and an open trial tab are fetched again
// (autolab:live-ended, static/js/explorer.js and trial_tabs.js).
(function () {
  "use strict";
  var banner = document.getElementById("live");
  if (!banner) return;
  var root = document.querySelector(".rollout-page");
  // A page read between the run's end and its classification is asked for again, this many times, 2 s apart.
  var SETTLE_TRIES = 5;
  var url = banner.dataset.liveUrl;
  var stepsUrl = banner.dataset.stepsUrl;
  var known = Number(banner.dataset.steps);
  // Only the last page, unfiltered, is where new steps belong.
  var follows = banner.dataset.follows === "yes";
  // At most this many steps per fetch (the server's page size).
  var BATCH = 200;

  // The log panes follow the run in place.
  function showLogs(logs) {
    Object.keys(logs).forEach(function (name) {
      var pre = document.querySelector('pre[data-log="' + name + '"]');
      if (!pre || pre.textContent === logs[name]) return;
      var atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
      pre.textContent = logs[name];
      if (atEnd) pre.scrollTop = pre.scrollHeight;
    });
  }

  function appendSteps(upTo) {
    var list = document.getElementById("steps");
    var last = Math.min(upTo, known + BATCH) - 1;
    return window.fetchFragment(stepsUrl + "?first=" + known + "&last=" + last)
      .then(function (steps) {
        var empty = list.querySelector(":scope > p.muted");
        if (empty) empty.remove();
        var atEnd = window.innerHeight + window.scrollY >= document.body.scrollHeight - 8;
        list.appendChild(steps);
        known = last + 1;
        banner.dataset.steps = String(known);
        document.dispatchEvent(new CustomEvent("autolab:steps-added", { detail: { steps: known } }));
        // A reader at the bottom keeps following; one reading above stays put.
        if (atEnd) window.scrollTo(0, document.body.scrollHeight);
        if (known < upTo) return appendSteps(upTo);
      });
  }

  function noteNewSteps(count) {
    var note = document.getElementById("live-new-steps");
    if (!note) {
      note = document.createElement("p");
      note.id = "live-new-steps";
      note.className = "muted";
      banner.appendChild(note);
    }
    note.textContent = count + " steps so far; new ones are on the last page.";
  }

  function finish() {
    banner.remove();
    document.dispatchEvent(new CustomEvent("autolab:live-ended"));
  }

  // Without the final page (the server did not answer): the reward and the status at least.
  function endedInPlace(live) {
    var reward = document.querySelector(".reward strong");
    if (reward) reward.textContent = live.reward_text;
    document.querySelectorAll(".trial-name .badge.warn").forEach(function (badge) {
      badge.textContent = live.status;
    });
    finish();
  }

  // This page as the server renders it now: the same page of steps, the same filter.
  function pageUrl() {
    var list = document.getElementById("steps");
    var query = new URLSearchParams();
    if (list && list.dataset.page) query.set("page", list.dataset.page);
    if (root.dataset.only) query.set("only", root.dataset.only);
    return root.dataset.detailUrl + "?" + query.toString();
  }

  function fetchPage(url) {
    return fetch(url, { headers: { Accept: "text/html" } })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      // Parsed, never run: DOMParser's document executes no script.
      .then(function (html) { return new DOMParser().parseFromString(html, "text/html"); });
  }

  function swapParts(fresh) {
    var list = document.getElementById("steps");
    // A reader among the steps keeps them where they are on the screen.
    var before = list ? list.getBoundingClientRect().top : null;
    document.querySelectorAll("[data-live-part]").forEach(function (part) {
      var next = fresh.querySelector('[data-live-part="' + part.dataset.livePart + '"]');
      if (next) part.replaceWith(document.adoptNode(next));
    });
    if (before !== null && before < 0) window.scrollBy(0, list.getBoundingClientRect().top - before);
  }

  function ended(live, tries) {
    fetchPage(pageUrl())
      .then(function (fresh) {
        var page = fresh.querySelector(".rollout-page");
        if (!page) throw new Error("not the rollout's page");
        if (page.dataset.settled !== "yes" && tries < SETTLE_TRIES) {
          window.setTimeout(function () { ended(live, tries + 1); }, 2000);
          return;
        }
        swapParts(fresh);
        finish();
      })
      .catch(function () { endedInPlace(live); });
  }

  // Staff's cancel asks first (no inline handler: the CSP forbids it).
  var cancel = document.getElementById("cancel-rollout");
  if (cancel) {
    cancel.addEventListener("submit", function (event) {
      if (!window.confirm(cancel.dataset.confirm)) event.preventDefault();
    });
  }

  function check() {
    fetch(url, { headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (live) {
        if (!live) { window.setTimeout(check, 10000); return; }
        if (live.logs) showLogs(live.logs);
        var pending = Promise.resolve();
        if (live.steps > known) {
          if (follows) pending = appendSteps(live.steps);
          else noteNewSteps(live.steps);
        }
        return pending.then(function () {
          if (!live.active && (known >= live.steps || !follows)) ended(live, 0);
          else window.setTimeout(check, 3000);
        });
      })
      .catch(function () { window.setTimeout(check, 10000); });
  }
  window.setTimeout(check, 3000);
})();
