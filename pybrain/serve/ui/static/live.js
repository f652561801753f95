// Live sections: an element with data-live-source subscribes to server-sent
// events and, on each "change", fetches data-live-fragment into the element
// named by data-live-target. The server renders (and escapes) the HTML.
"use strict";
document.querySelectorAll("[data-live-source]").forEach(function (badge) {
  var target = document.getElementById(badge.dataset.liveTarget);
  var events = new EventSource(badge.dataset.liveSource);
  function refresh() {
    fetch(badge.dataset.liveFragment, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { if (!r.ok) { throw new Error(r.status); } return r.text(); })
      .then(function (html) {
        target.innerHTML = html;
        badge.dataset.updated = new Date().toISOString();
        badge.textContent = "live · updated " + new Date().toLocaleTimeString();
      })
      .catch(function () { badge.textContent = "live · refresh failed"; });
  }
  events.addEventListener("change", refresh);
  events.onopen = function () { badge.classList.remove("off"); badge.dataset.connected = "1"; };
  events.onerror = function () { badge.classList.add("off"); badge.textContent = "reconnecting…"; };
});
