// Suggestions under the Search page's query box (searchapp/ui/suggestions.py injects this
// into the page once). As one types, it asks the app's own API (same origin: the login
// cookie opens it) for completions, debounced, and shows them in a listbox under the box;
// ArrowDown/ArrowUp move, Enter chooses (the box gets the text the React way, then the
// search form is submitted), Escape closes. Nothing leaves the machine.
(function () {
  "use strict";
  if (window.__searchappSuggest) return;
  var BOX = 'input[aria-label="Query"]';
  var DEBOUNCE_MS = 120;
  var state = { choosing: false, timer: null, asked: 0, items: [], active: -1, list: null,
                box: null };
  window.__searchappSuggest = state;

  function base() {
    var hint = window.__streamlit && window.__streamlit.BACKEND_BASE_URL;
    return hint || location.origin + "/";
  }

  function listbox() {
    if (state.list && document.body.contains(state.list)) return state.list;
    var list = document.createElement("div");
    list.id = "searchapp-suggestions";
    list.setAttribute("role", "listbox");
    list.setAttribute("aria-label", "Suggestions");
    list.style.cssText = "position:absolute;z-index:100000;display:none;background:#fff;" +
      "border:1px solid rgba(49,51,63,.2);border-radius:.5rem;box-shadow:0 4px 12px " +
      "rgba(0,0,0,.12);padding:.25rem 0;font:inherit;max-height:22rem;overflow-y:auto";
    list.addEventListener("mousedown", function (event) {
      var option = event.target.closest('[role="option"]');
      if (!option) return;
      event.preventDefault(); // keep the focus in the box
      choose(Number(option.dataset.index));
    });
    document.body.appendChild(list);
    state.list = list;
    return list;
  }

  function close() {
    state.items = [];
    state.active = -1;
    if (state.list) state.list.style.display = "none";
    if (state.box) {
      state.box.setAttribute("aria-expanded", "false");
      state.box.removeAttribute("aria-activedescendant");
    }
  }

  function draw() {
    var list = listbox();
    list.textContent = "";
    if (!state.items.length || !state.box) return close();
    state.items.forEach(function (item, i) {
      var option = document.createElement("div");
      option.id = "searchapp-suggestion-" + i;
      option.dataset.index = String(i);
      option.setAttribute("role", "option");
      option.setAttribute("aria-selected", i === state.active ? "true" : "false");
      option.style.cssText = "padding:.35rem .75rem;cursor:pointer;display:flex;gap:.75rem;" +
        "justify-content:space-between" + (i === state.active ? ";background:#f0f2f6" : "");
      var text = document.createElement("span");
      text.textContent = item.text; // text, never markup
      var kind = document.createElement("span");
      kind.textContent = item.kind === "recent" ? "recent" : item.kind;
      kind.style.cssText = "color:rgba(49,51,63,.6);font-size:.8em";
      option.appendChild(text);
      option.appendChild(kind);
      list.appendChild(option);
    });
    var r = state.box.getBoundingClientRect();
    list.style.left = r.left + window.scrollX + "px";
    list.style.top = r.bottom + window.scrollY + 2 + "px";
    list.style.width = r.width + "px";
    list.style.display = "block";
    state.box.setAttribute("aria-expanded", "true");
    if (state.active >= 0) {
      state.box.setAttribute("aria-activedescendant", "searchapp-suggestion-" + state.active);
    } else {
      state.box.removeAttribute("aria-activedescendant");
    }
  }

  function ask(box) {
    var corpus = window.__searchappSuggestCorpus;
    if (!corpus) return;
    var asked = ++state.asked;
    var url = base() + "api/v1/corpora/" + encodeURIComponent(corpus) + "/suggest?limit=8&q=" +
      encodeURIComponent(box.value);
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : []; })
      .then(function (items) {
        if (asked !== state.asked || document.activeElement !== box) return; // a newer ask
        state.box = box;
        state.items = Array.isArray(items) ? items : [];
        state.active = -1;
        draw();
      })
      .catch(close);
  }

  function choose(i) {
    var item = state.items[i];
    var box = state.box;
    if (!item || !box) return;
    clearTimeout(state.timer);
    close();
    var setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
    setter.call(box, item.text); // React sees the change only through the native setter
    state.choosing = true; // our own input event: nothing to ask
    try {
      box.dispatchEvent(new Event("input", { bubbles: true }));
    } finally {
      state.choosing = false;
    }
    state.asked++; // an answer still on its way is for the text before
    var form = box.closest('[data-testid="stForm"]');
    var submit = form && form.querySelector('[data-testid="stFormSubmitButton"] button');
    if (submit) submit.click();
  }

  document.addEventListener("input", function (event) {
    var box = event.target;
    if (!(box instanceof HTMLInputElement) || !box.matches(BOX) || state.choosing) return;
    state.box = box;
    box.setAttribute("aria-autocomplete", "list");
    box.setAttribute("aria-controls", "searchapp-suggestions");
    clearTimeout(state.timer);
    state.timer = setTimeout(function () { ask(box); }, DEBOUNCE_MS);
  }, true);

  document.addEventListener("keydown", function (event) {
    var box = event.target;
    if (!(box instanceof HTMLInputElement) || !box.matches(BOX) || !state.items.length) return;
    var n = state.items.length;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      state.active = event.key === "ArrowDown" ? (state.active + 1) % n
        : (state.active <= 0 ? n - 1 : state.active - 1);
      draw();
    } else if (event.key === "Enter" && state.active >= 0) {
      choose(state.active);
    } else if (event.key === "Escape") {
      close();
    } else {
      return;
    }
    event.preventDefault();
    event.stopPropagation(); // the form sees the chosen text, not this key
  }, true);

  document.addEventListener("focusout", function (event) {
    if (event.target instanceof HTMLInputElement && event.target.matches(BOX)) close();
  }, true);
  window.addEventListener("resize", close);
})();
