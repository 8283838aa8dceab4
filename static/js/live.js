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

  function check() {
    fetch(url, { headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (live) {
        if (live && (live.steps !== steps || live.status !== status)) {
          window.location.reload();
          return;
        }
        window.setTimeout(check, 3000);
      })
      .catch(function () { window.setTimeout(check, 10000); });
  }
  window.setTimeout(check, 3000);
})();
