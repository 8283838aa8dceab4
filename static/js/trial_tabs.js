/* The rollout page's trial tabs: each tab's HTML fragment is fetched when it is
   opened, so the page's first load does not grow with the trial's files.
   Links and forms inside a tab marked data-fragment (the log's search, the
   artifact list's pages) load into the tab too. Every tab link is a real URL
   that answers a whole page, so all of it works without this script. */
(function () {
  "use strict";
  var root = document.getElementById("trial-tabs");
  var panel = document.getElementById("trial-tab-panel");
  if (!root || !panel || !window.fetchFragment) return;
  var tabs = Array.prototype.slice.call(root.querySelectorAll("[data-tab]"));
  var current = null;

  function select(tab) {
    tabs.forEach(function (other) {
      other.setAttribute("aria-selected", other === tab ? "true" : "false");
      other.classList.toggle("active", other === tab);
    });
    current = tab;
  }

  function load(url, tab) {
    select(tab);
    panel.hidden = false;
    panel.setAttribute("aria-busy", "true");
    panel.setAttribute("aria-labelledby", tab.id);
    return window.fetchFragment(url)
      .then(function (fragment) {
        if (current !== tab) return;
        panel.replaceChildren(fragment);
      })
      .catch(function (error) {
        if (current !== tab) return;
        var note = document.createElement("p");
        note.className = "muted";
        note.textContent = "This tab did not load (" + error.message + "). ";
        var link = document.createElement("a");
        link.href = url;
        link.textContent = "Open it as a page";
        note.appendChild(link);
        panel.replaceChildren(note);
      })
      .finally(function () {
        panel.removeAttribute("aria-busy");
      });
  }

  function plainClick(event) {
    return !(event.defaultPrevented || event.button || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey);
  }

  tabs.forEach(function (tab) {
    tab.addEventListener("click", function (event) {
      if (!plainClick(event)) return;
      event.preventDefault();
      if (current === tab && !panel.hidden) {
        // A second click on the open tab closes it.
        panel.hidden = true;
        tab.setAttribute("aria-selected", "false");
        tab.classList.remove("active");
        current = null;
        history.replaceState(null, "", location.pathname + location.search);
        return;
      }
      history.replaceState(null, "", location.pathname + location.search + "#tab-" + tab.dataset.tab);
      load(tab.href, tab);
    });
  });

  // Left and right arrows move between the tabs, as in any tab list.
  root.querySelector("[role=tablist]").addEventListener("keydown", function (event) {
    var at = tabs.indexOf(document.activeElement);
    if (at < 0 || (event.key !== "ArrowRight" && event.key !== "ArrowLeft")) return;
    event.preventDefault();
    tabs[(at + (event.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length].focus();
  });

  panel.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a[data-fragment]");
    if (!link || !current || !plainClick(event)) return;
    event.preventDefault();
    load(link.href, current);
  });

  panel.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.matches("form[data-fragment]") || !current) return;
    event.preventDefault();
    var query = new URLSearchParams(new FormData(form)).toString();
    load(form.action + (query ? "?" + query : ""), current).then(function () {
      var again = panel.querySelector("form[data-fragment] input[name=q]");
      if (again) again.focus();
    });
  });

  // A link to #tab-log (a reload with it, or a hash changed by hand) opens that tab.
  function openFromHash() {
    var wanted = /^#tab-([a-z]+)$/.exec(location.hash);
    var tab = wanted && document.getElementById("tab-" + wanted[1]);
    if (tab && tabs.indexOf(tab) >= 0 && tab !== current) load(tab.href, tab);
  }
  window.addEventListener("hashchange", openFromHash);
  openFromHash();

  // A running rollout's end (static/js/live.js): an open tab shows what the trial left at the end.
  document.addEventListener("autolab:live-ended", function () {
    if (current && !panel.hidden) load(current.href, current);
  });
})();
