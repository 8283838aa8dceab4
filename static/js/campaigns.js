// Live campaign grid: poll the progress JSON while rollouts are active and
// update the cells and the summary in place. No framework.
(function () {
  "use strict";
  var root = document.getElementById("campaign");
  if (!root) return;
  var url = root.dataset.progressUrl;
  var TERMINAL = { finished: true, failed: true, cancelled: true };

  function setText(selector, text, scope) {
    var el = (scope || document).querySelector(selector);
    if (el) el.textContent = text;
  }

  function detail(cell) {
    var parts = [];
    if (cell.n_steps) parts.push(cell.n_steps + " steps");
    if (cell.elapsed) parts.push(cell.elapsed);
    if (cell.remaining) parts.push(cell.remaining + " left");
    return parts.join(" · ");
  }

  function render(progress) {
    setText('[data-field="status"]', progress.status, root);
    setText('[data-field="done"]', String(progress.done), root);
    setText('[data-field="elapsed"]', progress.elapsed || "–", root);
    setText('[data-field="eta"]', progress.eta || "–", root);
    setText('[data-field="budget_remaining"]', (progress.active && progress.budget_remaining) || "–", root);
    setText('[data-field="counts"]', progress.counts_text, root);
    progress.rows.forEach(function (row) {
      row.cells.forEach(function (cell) {
        var td = document.querySelector('td[data-rollout="' + cell.id + '"]');
        if (!td) return;
        td.className = "cell status-" + cell.status + (cell.infra_error ? " infra" : "");
        setText('[data-cell="status"]', cell.status, td);
        setText('[data-cell="reward"]', cell.reward === null ? "" : cell.reward.toFixed(3), td);
        setText('[data-cell="detail"]', detail(cell), td);
        var form = td.querySelector("form.cancel-rollout");
        if (form) form.hidden = !!TERMINAL[cell.status];
      });
    });
    if (!progress.active) {
      var cancel = root.querySelector("form.cancel-campaign");
      if (cancel) cancel.hidden = true;
    }
    return progress.active;
  }

  function poll() {
    fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) { return response.json(); })
      .then(function (progress) { if (render(progress)) setTimeout(poll, 3000); })
      .catch(function () { setTimeout(poll, 10000); });
  }

  if (root.dataset.active === "1") setTimeout(poll, 3000);
})();
