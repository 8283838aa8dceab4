// A running rollout's page follows its trajectory: it polls live.json and
// appends the steps that are new (fetched as HTML from the step fragment
// view), so open details, a find and the focus stay as they are. When the
// run ends, the banner goes and the reward is shown; nothing reloads.
(function () {
  "use strict";
  var banner = document.getElementById("live");
  if (!banner) return;
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

  function ended(live) {
    var reward = document.querySelector(".reward strong");
    if (reward) reward.textContent = live.reward_text;
    document.querySelectorAll(".trial-name .badge.warn").forEach(function (badge) {
      badge.textContent = live.status;
    });
    banner.remove();
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
          if (!live.active && known >= live.steps) ended(live);
          else if (!live.active && !follows) ended(live);
          else window.setTimeout(check, 3000);
        });
      })
      .catch(function () { window.setTimeout(check, 10000); });
  }
  window.setTimeout(check, 3000);
})();
