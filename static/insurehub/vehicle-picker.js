// The kasko form's vehicle picker (templates/vehicles/_vehicle_picker.html): brand → type → year
// from the current TSB kasko value list, asked of vehicles/views.py as the agent types. It writes
// the codes into the form's own fields, which are what the insurers get, and shows the vehicle's
// kasko value. The codes stay the form: typed by hand, the picker follows them. A file, not
// inline <script>: the Content-Security-Policy runs scripts from 'self' only.
(function () {
  "use strict";

  var root = document.querySelector("[data-vehicle-picker]");
  if (!root) return;
  function byId(id) { return document.getElementById(id); }
  var codes = {brand: byId("id_brand_code"), type: byId("id_model_code"), year: byId("id_model_year")};
  if (!codes.brand || !codes.type || !codes.year) return;
  var brandSearch = byId("vehicle-brand-search"), brandSelect = byId("vehicle-brand"), brandStatus = byId("vehicle-brand-status");
  var typeSearch = byId("vehicle-type-search"), typeSelect = byId("vehicle-type"), typeStatus = byId("vehicle-type-status");
  var yearSelect = byId("vehicle-year"), valueOut = byId("vehicle-value");
  root.hidden = false;

  // What the picker shows as chosen: {code, name} for brand and type, and the type's years.
  var chosen = {brand: null, type: null};
  var years = [];

  // Each list answers only its latest question: an answer to an older one (the agent typed on
  // meanwhile) is dropped instead of overwriting the newer list.
  var asked = {brands: 0, types: 0, years: 0};
  function ask(kind, url, params) {
    var ticket = ++asked[kind];
    return fetch(url + "?" + new URLSearchParams(params).toString(), {
      headers: {Accept: "application/json"},
      credentials: "same-origin",
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (answer) {
        if (!response.ok) {
          var problem = new Error("HTTP " + response.status);
          problem.detail = answer.detail;  // the view's own sentence, e.g. a session that ended
          throw problem;
        }
        return ticket === asked[kind] ? answer : null;
      });
    });
  }
  function failed(statusLine) {
    return function (error) {
      statusLine.textContent = (error && error.detail ? error.detail + " " : "") +
        "Liste şu anda alınamadı; kodları aşağıya elle girebilirsiniz.";
    };
  }

  function fill(select, items, placeholder, keep) {
    select.replaceChildren(new Option(placeholder, ""));
    var listed = items.some(function (item) { return keep && item.code === keep.code; });
    // The chosen one stays on the list while the agent searches for something else.
    if (keep && !listed) select.add(new Option(keep.name, keep.code));
    items.forEach(function (item) { select.add(new Option(item.name, item.code)); });
    select.value = keep ? keep.code : "";
  }
  function counted(statusLine, answer, noun) {
    var n = answer.results.length;
    statusLine.textContent = !n ? "Eşleşen " + noun + " yok." :
      answer.more ? "İlk " + n + " " + noun + " gösteriliyor; aramayı daraltın." : n + " " + noun + ".";
  }
  function picked(select) {
    var option = select.selectedOptions[0];
    return option && option.value ? {code: option.value, name: option.textContent} : null;
  }

  // --- brand ------------------------------------------------------------------------------------

  function loadBrands(query) {
    return ask("brands", root.dataset.brandsUrl, {q: query}).then(function (answer) {
      if (!answer) return;
      var only = query.trim() && answer.results.length === 1 ? answer.results[0] : null;
      fill(brandSelect, answer.results, "Seçiniz", only || chosen.brand);
      counted(brandStatus, answer, "marka");
      if (only) chooseBrand(only);
    }, failed(brandStatus));
  }

  // `typeCode`: a type to keep (the form came back with codes); otherwise a new brand clears it.
  function chooseBrand(brand, typeCode) {
    if (brand && chosen.brand && brand.code === chosen.brand.code && typeCode === undefined) return Promise.resolve();
    chosen.brand = brand;
    chosen.type = null;
    codes.brand.value = brand ? brand.code : "";
    codes.type.value = typeCode || "";
    typeSearch.value = "";
    typeSearch.disabled = !brand;
    typeSelect.disabled = !brand;
    showYears([]);
    if (!brand) {
      fill(typeSelect, [], "Önce marka seçin", null);
      typeStatus.textContent = "";
      return Promise.resolve();
    }
    return loadTypes("", typeCode);
  }

  // --- type -------------------------------------------------------------------------------------

  // `wantedCode`: a type to choose once it is on the list (the codes typed by hand); one not on
  // the first page is asked for by its code (`retried`), and said to be missing if not there either.
  function loadTypes(query, wantedCode, retried) {
    var brand = chosen.brand;
    return ask("types", root.dataset.typesUrl, {marka: brand.code, q: query}).then(function (answer) {
      if (!answer || chosen.brand !== brand) return;
      var wanted = wantedCode ? answer.results.filter(function (t) { return t.code === wantedCode; })[0] : null;
      if (wantedCode && !wanted && !retried) return loadTypes(wantedCode, wantedCode, true);
      var only = query.trim() && !wantedCode && answer.results.length === 1 ? answer.results[0] : null;
      var keep = wanted || only || chosen.type;
      fill(typeSelect, answer.results, "Seçiniz", keep);
      counted(typeStatus, answer, "tip");
      if (wantedCode && !wanted) typeStatus.textContent = "Tip kodu " + wantedCode + " bu markada yok.";
      if (keep && keep !== chosen.type) return chooseType(keep);
    }, failed(typeStatus));
  }

  function chooseType(vehicleType) {
    if (vehicleType && chosen.type && vehicleType.code === chosen.type.code) return Promise.resolve();
    chosen.type = vehicleType;
    codes.type.value = vehicleType ? vehicleType.code : "";
    showYears([]);
    if (!vehicleType) return Promise.resolve();
    var brand = chosen.brand;
    return ask("years", root.dataset.yearsUrl, {marka: brand.code, tip: vehicleType.code}).then(function (answer) {
      if (answer && chosen.type === vehicleType) showYears(answer.results);
    }, failed(typeStatus));
  }

  // --- year and value ---------------------------------------------------------------------------

  function showYears(list) {
    years = list;
    yearSelect.replaceChildren(new Option(list.length ? "Seçiniz" : "Önce tip seçin", ""));
    list.forEach(function (entry) {
      yearSelect.add(new Option(entry.year + " · " + entry.value_text, String(entry.year)));
    });
    yearSelect.disabled = !list.length;
    showValue();
  }

  // The year typed in the form (by hand, or by the year list) decides the value shown.
  function showValue() {
    var year = codes.year.value.trim();
    var entry = years.filter(function (e) { return String(e.year) === year; })[0];
    yearSelect.value = entry ? year : "";
    if (entry) valueOut.textContent = entry.value_text;
    else if (year && years.length) valueOut.textContent = "— (" + year + " model yılı için listede değer yok)";
    else valueOut.textContent = "—";
  }

  // --- the agent's moves ------------------------------------------------------------------------

  function debounced(action) {
    var timer = null;
    return function () {
      clearTimeout(timer);
      timer = setTimeout(action, 200);
    };
  }
  brandSearch.addEventListener("input", debounced(function () { loadBrands(brandSearch.value); }));
  typeSearch.addEventListener("input", debounced(function () { if (chosen.brand) loadTypes(typeSearch.value); }));
  brandSelect.addEventListener("change", function () { chooseBrand(picked(brandSelect)); });
  typeSelect.addEventListener("change", function () { chooseType(picked(typeSelect)); });
  yearSelect.addEventListener("change", function () {
    if (yearSelect.value) codes.year.value = yearSelect.value;
    showValue();
  });

  // The codes typed by hand (or brought back by a form with errors): the picker follows them.
  function followCodes() {
    var brandCode = codes.brand.value.trim(), typeCode = codes.type.value.trim();
    return ask("brands", root.dataset.brandsUrl, {q: ""}).then(function (answer) {
      if (!answer) return;
      var brand = answer.results.filter(function (b) { return b.code === brandCode; })[0] || null;
      fill(brandSelect, answer.results, "Seçiniz", brand);
      counted(brandStatus, answer, "marka");
      if (brandCode && !brand) brandStatus.textContent = "Marka kodu " + brandCode + " listede yok.";
      chosen.brand = null;
      return brand ? chooseBrand(brand, typeCode) : chooseBrand(null, typeCode).then(function () {
        codes.brand.value = brandCode;
      });
    }, failed(brandStatus));
  }
  codes.brand.addEventListener("change", followCodes);
  codes.type.addEventListener("change", function () {
    if (!chosen.brand) return;
    chosen.type = null;
    showYears([]);
    loadTypes("", codes.type.value.trim() || undefined);
  });
  codes.year.addEventListener("input", showValue);

  followCodes();
})();
