/* The launch form: the task list shows the chosen version's tasks only.
 * The server renders every task with data-version and hides those of other
 * versions (evaluations/launch_form.py VersionTasks); choosing another
 * version shows its tasks instead and unselects the ones now hidden. */
(function () {
  "use strict";

  function init() {
    var version = document.getElementById("id_version");
    var tasks = document.getElementById("id_tasks");
    if (!version || !tasks) return;
    function show() {
      Array.prototype.forEach.call(tasks.options, function (option) {
        var other = option.getAttribute("data-version") !== version.value;
        option.hidden = other;
        if (other) option.selected = false;
      });
    }
    version.addEventListener("change", show);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
