// The quote desk's results, pushed by the server as insurers answer (quotes/live.py). Loaded by
// templates/quotes/_live_script.html right after the results section, so it runs as the page is
// parsed (a file, not inline: the Content-Security-Policy runs scripts from 'self' only).
//
// The results section names its stream (data-stream-url). While the EventSource is open the
// section carries data-streaming, and its one-second htmx poll sends nothing (the request is
// cancelled in htmx:beforeRequest below; a trigger filter would need eval, which the policy
// refuses). Whenever the stream is not open (no EventSource, the endpoint refused or
// unreachable, a reconnect under way) the poll runs as before. Each event carries the whole
// results fragment; "done" is the last one (every insurer final): the page closes the stream,
// or the browser would reconnect.
//
// Every row with data-stored-at (the answer's stored time, epoch ms) is noted the first time it
// appears: window.insurehubRowsSeen["<insurer>:<stored-at>"] = {insurer, storedAt, seenAt, pushedAt, shownAt, via}
// (via: "page", "stream" or "poll"),
// shownAt on the same clock (performance.timeOrigin + performance.now()). Tests and the bench
// read the store-to-screen time off it; nothing on the page depends on it.
//
// On a phone the same rows are cards (desk.css, by CSS alone): nothing here depends on how the
// table is laid out, so a swapped-in fragment is a card list at 390 px and a table at 1366 px.
(function () {
  "use strict";
  var seen = (window.insurehubRowsSeen = window.insurehubRowsSeen || {});
  var source = null;

  function clock() { return performance.timeOrigin + performance.now(); }
  function results() { return document.getElementById("results"); }
  function streaming() { return source !== null && source.readyState === EventSource.OPEN; }

  // How a row came: in the page itself, pushed by the stream, or fetched by the fallback poll.
  function via(row, initial) {
    if (initial) return "page";
    var section = row.closest("#results");
    return section && section.dataset.via === "stream" ? "stream" : "poll";
  }

  // When the server rendered the event that brought the row (epoch ms); null for a poll or the page.
  function pushedAt(row, name) {
    var section = row.closest("#results");
    return section && section.dataset[name || "pushedAt"] ? Number(section.dataset[name || "pushedAt"]) : null;
  }

  function note(node, shownAt, initial) {
    if (node.nodeType !== 1) return;
    var rows = node.matches("tr[data-stored-at]") ? [node] : node.querySelectorAll("tr[data-stored-at]");
    for (var i = 0; i < rows.length; i++) {
      var key = rows[i].dataset.insurer + ":" + rows[i].dataset.storedAt;
      if (key in seen) continue;
      seen[key] = {
        insurer: rows[i].dataset.insurer,
        storedAt: Number(rows[i].dataset.storedAt),
        seenAt: pushedAt(rows[i], "seenAt"),
        pushedAt: pushedAt(rows[i]),
        shownAt: shownAt,
        via: via(rows[i], initial),
      };
    }
  }

  new MutationObserver(function (mutations) {
    var shownAt = clock();
    mutations.forEach(function (mutation) {
      mutation.addedNodes.forEach(function (node) { note(node, shownAt); });
    });
  }).observe(document.documentElement, { childList: true, subtree: true });

  function mark() {
    var section = results();
    if (!section) return;
    if (streaming()) section.dataset.streaming = "1";
    else delete section.dataset.streaming;
  }

  function swap(html) {
    var section = results();
    if (!section) return;
    var holder = document.createElement("div");
    holder.innerHTML = html.trim();
    var fresh = holder.firstElementChild;
    if (!fresh) return;
    fresh.dataset.via = "stream";
    section.replaceWith(fresh);
    mark();
    if (window.htmx) window.htmx.process(fresh);
  }

  function connect() {
    var section = results();
    if (!section || !section.dataset.streamUrl || !window.EventSource || source !== null) return;
    source = new EventSource(section.dataset.streamUrl);
    source.addEventListener("open", mark);
    source.addEventListener("results", function (event) { swap(event.data); });
    source.addEventListener("done", function (event) {
      source.close();
      source = null;
      swap(event.data);
    });
    source.addEventListener("error", function () {
      // CONNECTING: the browser tries again by itself; CLOSED (refused, not an event stream):
      // it does not, and the poll carries on alone.
      if (source !== null && source.readyState === EventSource.CLOSED) source = null;
      mark();
    });
  }

  // The poll stays quiet while the stream is open: htmx sends nothing for a cancelled beforeRequest.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var section = event.detail && event.detail.elt;
    if (section && section.id === "results" && section.dataset.streaming) event.preventDefault();
  });

  // A section the fallback poll swapped in keeps the poll off if the stream is open meanwhile.
  document.addEventListener("htmx:load", function (event) {
    if (event.target && event.target.id === "results") mark();
  });

  note(document.documentElement, clock(), true);
  connect();
})();
