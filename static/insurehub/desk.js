// The desk's behaviour on every page (templates/base.html). A file, not inline <script>: the
// Content-Security-Policy runs scripts from 'self' only (insurehub/settings/base.py), so markup
// that slipped into a page can never run. Every part checks for its elements and does nothing
// on a page without them.
(function () {
  "use strict";

  // A form marked data-submit-once sends once: the button is disabled on the first submit, so a
  // double click or an impatient second click does not post again. (The server is idempotent
  // anyway; this only spares the agent a confusing second page load.)
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.hasAttribute("data-submit-once")) return;
    if (form.dataset.sent) { event.preventDefault(); return; }
    form.dataset.sent = "1";
    setTimeout(function () {
      form.querySelectorAll("button[type=submit]").forEach(function (button) {
        button.disabled = true;
        if (!button.dataset.busyText) return;
        button.dataset.idleText = button.textContent;
        button.textContent = button.dataset.busyText;
      });
    }, 0);
  });

  // Coming back with the browser's Back button restores the page as it was left: make its forms usable again.
  window.addEventListener("pageshow", function (event) {
    if (!event.persisted) return;
    document.querySelectorAll("form[data-submit-once]").forEach(function (form) {
      delete form.dataset.sent;
      form.querySelectorAll("button[type=submit]").forEach(function (button) {
        button.disabled = false;
        if (button.dataset.idleText) button.textContent = button.dataset.idleText;
      });
    });
  });

  // Quote validity counts down on screen; at zero the issue button goes (the server refuses an
  // expired quote anyway: this only spares the agent a click that cannot succeed). The text is
  // the server's own format (quotes/templatetags/desk.py, validity_left): keep the two the same,
  // or it flips between them each time the results are swapped in.
  function tick() {
    var now = Date.now();
    document.querySelectorAll("[data-valid-until]").forEach(function (el) {
      var left = Math.floor((Date.parse(el.dataset.validUntil) - now) / 1000);
      if (el.classList.contains("issue")) {
        if (left <= 0) { el.replaceWith(Object.assign(document.createElement("span"), {className: "muted", textContent: "Süresi doldu"})); }
        return;
      }
      if (left <= 0) { el.textContent = "(süresi doldu)"; return; }
      var m = Math.floor(left / 60), s = left % 60;
      el.textContent = "(" + (m >= 60 ? Math.floor(m / 60) + " sa " + (m % 60) + " dk" : m + " dk " + (s < 10 ? "0" : "") + s + " sn") + " kaldı)";
    });
  }
  setInterval(tick, 1000);

  // A button marked data-print prints the page (the comparison), instead of an onclick attribute.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-print]");
    if (button) window.print();
  });

  // The new-quote form: the new customer's fields only while "+ Yeni müşteri" is ticked (or a
  // form sent back with "yeni" as its customer).
  function newCustomerBox() {
    var tick = document.getElementById("id_new_customer"), box = document.getElementById("new-customer");
    var picked = document.getElementById("id_customer");
    if (!tick || !box) return;
    if (picked && picked.value === "yeni") tick.checked = true;
    function sync() { box.hidden = !tick.checked; }
    tick.addEventListener("change", sync);
    sync();
  }

  // base.html loads this file as the body's last element: the page above it is parsed already,
  // so the new customer's box is set before the first paint, as the inline script did.
  tick();
  newCustomerBox();
})();
