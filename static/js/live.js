// A running rollout's page follows its trajectory: poll the rollout's
// live.json and reload (keeping the reader's place) when new steps arrive or
// its status changes. Stops once the rollout has ended and been reloaded.
(function () {
  "use strict";
  var banner = document.getElementById("live");
  if (!banner) return;
  var url = banner.dataset.liveUrl;
  var steps = Number(banner.dataset.steps);
  var status = banner.dataset.status;

  // The log panes follow the run in place; the page reloads for new steps.
  function showLogs(logs) {
    Object.keys(logs).forEach(function (name) {
      var pre = document.querySelector('pre[data-log="' + name + '"]');
      if (!pre || pre.textContent === logs[name]) return;
      var atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
      pre.textContent = logs[name];
      if (atEnd) pre.scrollTop = pre.scrollHeight;
    });
  }

  function check() {
    fetch(url, { headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (live) {
        if (live && (live.steps !== steps || live.status !== status)) {
          window.location.reload();
          return;
        }
        if (live && live.logs) showLogs(live.logs);
        window.setTimeout(check, 3000);
      })
      .catch(function () { window.setTimeout(check, 10000); });
  }
  window.setTimeout(check, 3000);
})();
