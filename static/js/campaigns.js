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

  function checkItem(check) {
    var li = document.createElement("li");
    li.className = check.ok ? "ok" : "bad";
    li.textContent = (check.ok ? "\u2713 " : "\u2717 ") + check.name + ": " + check.detail;
    return li;
  }

  // The preflight card: one block per queue (its worker and checks, or that it waits).
  function renderPreflight(rows) {
    var card = document.getElementById("preflight");
    var holder = card && card.querySelector('[data-field="preflight"]');
    if (!holder) return;
    card.hidden = !rows.length;
    holder.textContent = "";
    rows.forEach(function (row) {
      var block = document.createElement("div");
      block.className = "preflight-queue" + (row.ok === false ? " failed" : row.ok ? " passed" : "");
      var head = document.createElement("p");
      var name = document.createElement("strong");
      name.textContent = "Queue " + row.queue;
      head.appendChild(name);
      var state = row.waiting ? row.waiting + "\u2026" : row.ok ? "passed" : "failed";
      head.appendChild(document.createTextNode((row.worker ? " \u00b7 worker " + row.worker : "") + " \u00b7 " + state));
      block.appendChild(head);
      if (row.checks.length) {
        var list = document.createElement("ul");
        list.className = "checks";
        row.checks.forEach(function (check) { list.appendChild(checkItem(check)); });
        block.appendChild(list);
      }
      holder.appendChild(block);
    });
  }

  function addCells(progress) {
    // Rollouts appear once the preflight passed: the first render after it reloads the grid.
    var known = document.querySelectorAll("td[data-rollout]").length;
    var total = progress.rows.reduce(function (n, row) { return n + row.cells.length; }, 0);
    if (total > known) window.location.reload();
  }

  function render(progress) {
    setText('[data-field="status"]', progress.status_label, root);
    setText('[data-field="status_reason"]', progress.status_reason || "", root);
    renderPreflight(progress.preflight);
    addCells(progress);
    setText('[data-field="done"]', String(progress.done), root);
    setText('[data-field="elapsed"]', progress.elapsed || "–", root);
    setText('[data-field="eta"]', progress.eta || "–", root);
    setText('[data-field="budget_remaining"]', (progress.active && progress.budget_remaining) || "–", root);
    setText('[data-field="counts"]', progress.counts_text, root);
    setText('#job-summary [data-field="job_line"]', progress.job_line, document);
    progress.rows.forEach(function (row) {
      row.cells.forEach(function (cell) {
        var td = document.querySelector('td[data-rollout="' + cell.id + '"]');
        if (!td) return;
        td.className = "cell status-" + cell.status + (cell.infra_error ? " infra" : "");
        setText('[data-cell="status"]', cell.label, td);
        setText('[data-cell="reason"]', cell.reason || "", td);
        setText('[data-cell="reward"]', cell.reward === null ? "" : cell.reward.toFixed(3), td);
        setText('[data-cell="detail"]', detail(cell), td);
        var cancel = td.querySelector(".cancel-rollout");
        if (cancel) cancel.hidden = !!TERMINAL[cell.status];
      });
    });
    if (!progress.active) {
      var cancelCampaign = root.querySelector(".cancel-campaign");
      if (cancelCampaign) cancelCampaign.hidden = true;
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
