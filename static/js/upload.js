// An upload's page follows its import: every two seconds it fetches itself
// and swaps in the job's part, until the import has ended. Without
// JavaScript the page's Refresh link does the same by hand.
(function () {
  "use strict";
  var INTERVAL_MS = 2000;

  function poll() {
    var box = document.getElementById("upload-job");
    if (!box || box.dataset.active !== "true") return;
    fetch(window.location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (html) {
          var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("upload-job");
          if (fresh) box.replaceWith(fresh);
        }
        window.setTimeout(poll, INTERVAL_MS);
      })
      .catch(function () { window.setTimeout(poll, INTERVAL_MS * 2); });
  }

  window.setTimeout(poll, INTERVAL_MS);
})();
