// The quote form's customer search box (templates/quotes/_customer_pick.html): as the agent types
// part of a name or the start of an identity number, the agency's matching customers are asked
// of customers/views.py (customer_pick) and listed; the one picked goes into the hidden
// `customer` field, which is what the form sends. The term goes in a POST body, never a URL (an
// identity number must not land in access logs). A file, not inline <script>: the
// Content-Security-Policy runs scripts from 'self' only. Without it the box is a plain field the
// server looks up.
(function () {
  "use strict";

  var box = document.querySelector("[data-customer-search]");
  var picked = document.getElementById("id_customer");
  var list = document.getElementById("customer-matches");
  var status = document.getElementById("customer-pick-status");
  if (!box || !picked || !list || !status) return;
  var url = box.dataset.customerSearch;
  var shownPick = box.value;  // the box's text for the pick in `customer`, if any
  var items = [], active = -1, asked = 0, timer = null;

  function csrfToken() {
    var input = box.form && box.form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function close() {
    list.hidden = true;
    list.replaceChildren();
    items = [];
    active = -1;
    box.setAttribute("aria-expanded", "false");
    box.removeAttribute("aria-activedescendant");
  }

  function choose(item) {
    picked.value = String(item.id);
    box.value = shownPick = item.label;
    status.textContent = "";
    close();
  }

  function highlight(index) {
    active = index;
    Array.prototype.forEach.call(list.children, function (option, i) {
      option.setAttribute("aria-selected", i === index ? "true" : "false");
    });
    if (index >= 0) box.setAttribute("aria-activedescendant", list.children[index].id);
    else box.removeAttribute("aria-activedescendant");
  }

  function show(answer) {
    close();
    items = answer.results || [];
    items.forEach(function (item, i) {
      var option = document.createElement("li");
      option.id = "customer-match-" + i;
      option.setAttribute("role", "option");
      option.setAttribute("aria-selected", "false");
      option.dataset.customerId = String(item.id);
      option.textContent = item.label;  // a name is data, never markup
      // mousedown, not click: the box's blur would close the list before a click lands.
      option.addEventListener("mousedown", function (event) { event.preventDefault(); choose(item); });
      list.append(option);
    });
    list.hidden = !items.length;
    box.setAttribute("aria-expanded", items.length ? "true" : "false");
    status.textContent = !items.length ? "Eşleşen müşteri yok." :
      answer.more ? "İlk " + items.length + " müşteri gösteriliyor; aramayı daraltın." : "";
  }

  function search() {
    var term = box.value.trim(), ticket = ++asked;
    if (term.length < 2) { close(); status.textContent = ""; return; }
    fetch(url, {
      method: "POST",
      body: new URLSearchParams({q: term}),
      credentials: "same-origin",
      headers: {Accept: "application/json", "X-CSRFToken": csrfToken()},
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (answer) {
        if (!response.ok) throw new Error(answer.detail || "Müşteri listesi şu anda alınamadı.");
        return answer;
      });
    }).then(function (answer) {
      if (ticket === asked) show(answer);  // an answer to an older term is dropped
    }).catch(function (error) {
      if (ticket !== asked) return;
      close();
      status.textContent = error.message + " Müşterinin adını tam yazıp formu gönderebilirsiniz.";
    });
  }

  box.addEventListener("input", function () {
    if (box.value !== shownPick) picked.value = "";  // typing again drops the earlier pick
    clearTimeout(timer);
    timer = setTimeout(search, 200);
  });
  box.addEventListener("keydown", function (event) {
    if (list.hidden || !items.length) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      var step = event.key === "ArrowDown" ? 1 : -1;
      highlight((active + step + items.length) % items.length);
    } else if (event.key === "Enter" && active >= 0) {
      event.preventDefault();  // pick, do not send the form
      choose(items[active]);
    } else if (event.key === "Escape") {
      close();
    }
  });
  box.addEventListener("blur", close);
})();
