// Status fragments pushed by the server as they change (quotes/live.py): the issuance status
// (templates/quotes/_issuance_status.html) and the policy document's (documents/_document_status.html).
// Loaded by templates/quotes/_live_status_script.html after the fragment, as a file (the
// Content-Security-Policy runs scripts from 'self' only).
//
// A fragment that still changes names its stream (data-live-stream) and keeps its htmx poll
// (every 1-2 s) as the fallback. While the EventSource is open the fragment carries
// data-streaming and its poll sends nothing (cancelled in htmx:beforeRequest, as on the results
// page: a trigger filter would need eval, which the policy refuses). Each event carries the whole
// fragment; "done" is the last one (the state is final): the page closes the stream, or the
// browser would reconnect. A stream refused or unreachable (no EventSource, 429, 503, 404) is
// not opened again for that fragment: its poll carries on alone.
(function () {
  "use strict";
  var sources = {}; // fragment id -> its open EventSource
  var given_up = {}; // fragment ids whose stream was refused: the poll serves them

  function open(source) { return source.readyState === EventSource.OPEN; }

  function mark(id) {
    var element = document.getElementById(id);
    if (!element) return;
    if (sources[id] && open(sources[id])) element.dataset.streaming = "1";
    else delete element.dataset.streaming;
  }

  function swap(id, html) {
    var element = document.getElementById(id);
    if (!element) return;
    var holder = document.createElement("div");
    holder.innerHTML = html.trim();
    var fresh = holder.firstElementChild;
    if (!fresh) return;
    fresh.dataset.via = "stream";
    element.replaceWith(fresh);
    mark(id);
    if (window.htmx) window.htmx.process(fresh);
  }

  function connect(element) {
    var id = element.id;
    var url = element.dataset.liveStream;
    if (!id || !url || !window.EventSource || sources[id] || given_up[id]) return;
    var source = new EventSource(url);
    sources[id] = source;
    source.addEventListener("open", function () { mark(id); });
    source.addEventListener("status", function (event) { swap(id, event.data); });
    source.addEventListener("done", function (event) {
      source.close();
      delete sources[id];
      swap(id, event.data);
    });
    source.addEventListener("error", function () {
      // CONNECTING: the browser tries again by itself; CLOSED (refused, not an event stream):
      // it does not, and the poll carries on alone.
      if (source.readyState === EventSource.CLOSED && sources[id] === source) {
        delete sources[id];
        given_up[id] = true;
      }
      mark(id);
    });
  }

  function scan(root) {
    if (!root || root.nodeType !== 1 && root.nodeType !== 9) return;
    if (root.nodeType === 1 && root.matches("[data-live-stream]")) connect(root);
    var found = root.querySelectorAll("[data-live-stream]");
    for (var i = 0; i < found.length; i++) connect(found[i]);
  }

  // The poll stays quiet while the fragment's stream is open.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var element = event.detail && event.detail.elt;
    if (element && element.dataset && element.dataset.liveStream && element.dataset.streaming) event.preventDefault();
  });

  // A fragment swapped in by htmx (the poll, a re-fetch's answer) opens its stream, or keeps the open one marked.
  document.addEventListener("htmx:load", function (event) {
    var element = event.target;
    if (element && element.id && sources[element.id]) mark(element.id);
    scan(element);
  });

  scan(document);
})();
