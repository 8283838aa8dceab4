/* Server-rendered HTML fragments (steps, outputs), fetched and parsed into nodes.
   Every character of trajectory text is escaped by the server's templates, so
   the HTML is parsed as it comes. Shared by explorer.js and live.js. */
(function () {
  "use strict";
  window.fetchFragment = function (url) {
    return fetch(url, { headers: { "X-Requested-With": "fetch" } })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (html) {
        var holder = document.createElement("template");
        holder.innerHTML = html;
        return holder.content;
      });
  };
})();
