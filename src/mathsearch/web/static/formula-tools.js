// mathsearch pages: the formula editor beside the search box, and a menu on every formula
// ("search this formula", "add to query", "every representation").  Issue 42, items 3 and 5.
//
// - The editor is MathLive (npm "mathlive", copied by scripts/setup_web.sh into /static/mathlive/:
//   no CDN).  Its 0.8 MB script is loaded only when the editor is opened; its fonts come from
//   /static/mathlive/fonts, its sounds are off.  What it makes goes into the query as $LaTeX$.
//   Keys: the "Formula editor" button (or Alt+E) opens it; Enter in the field adds the formula and
//   searches; "Add to query" only adds it; Escape closes it and goes back to the search box.
// - A formula on a result, thread or formula page is a button: a click (or Enter / Space when it
//   has the focus) opens a small menu; arrows move in it, Escape closes it.  A formula whose
//   matched part is boxed (.part-match) is searched as the stored LaTeX (data-query-latex).
"use strict";
(function () {
  const MATHLIVE = "/static/mathlive/mathlive.min.js";
  const FONTS = "/static/mathlive/fonts";

  // -- the search box ----------------------------------------------------------------------------
  function queryBox() { return document.getElementById("q"); }

  function taskNow() {
    const r = document.querySelector("input[name=task]:checked");
    return r ? r.value : new URLSearchParams(location.search).get("task") || "1";
  }

  // The query with "$latex$" added at its end (a space between, none doubled).
  function withFormula(query, latex) {
    const text = (query || "").replace(/\s+$/, "");
    return (text ? text + " " : "") + "$" + latex + "$";
  }

  function addToBox(latex) {
    const q = queryBox();
    q.value = withFormula(q.value, latex);
    q.dispatchEvent(new Event("input", { bubbles: true }));  // mathsearch.js previews it
    return q;
  }

  // -- the formula editor (MathLive) -------------------------------------------------------------
  let loading = null;
  function loadMathLive() {
    if (window.MathLive && window.MathfieldElement) return Promise.resolve();
    if (!loading) {
      loading = new Promise((resolve, reject) => {
        const s = document.createElement("script");
        s.src = MATHLIVE;
        s.onload = resolve;
        s.onerror = () => { loading = null; reject(new Error("MathLive is not installed")); };
        document.head.appendChild(s);
      }).then(() => {
        const MF = window.MathfieldElement || (window.MathLive && window.MathLive.MathfieldElement);
        MF.fontsDirectory = location.origin + FONTS;  // a whole URL: MathLive asks nothing to resolve it
        MF.soundsDirectory = null;  // no sound files are served
        MF.plonkSound = null;
        MF.keypressSound = null;
      });
    }
    return loading;
  }

  function makeEditor(form) {
    const row = form.querySelector(".row");
    const toggle = document.createElement("button");
    toggle.type = "button";
    toggle.id = "editor-toggle";
    toggle.className = "editor-toggle";
    toggle.setAttribute("aria-expanded", "false");
    toggle.setAttribute("aria-controls", "formula-editor");
    toggle.title = "Write a formula visually (Alt+E)";
    toggle.textContent = "Formula editor";
    row.appendChild(toggle);

    const panel = document.createElement("div");
    panel.id = "formula-editor";
    panel.className = "formula-editor";
    panel.hidden = true;
    panel.setAttribute("role", "group");
    panel.setAttribute("aria-label", "Formula editor");
    panel.innerHTML =
      '<div class="editor-field"><span class="muted" id="editor-status">Loading the editor\u2026</span></div>' +
      '<div class="editor-actions">' +
      '<button type="button" id="editor-add">Add to query</button>' +
      '<button type="button" id="editor-search">Add and search</button>' +
      '<span class="hint">Type as on paper (<kbd>x^2</kbd>, <kbd>1/n</kbd>, arrows to move) or a LaTeX command (<kbd>\\alpha</kbd>); ' +
      '<kbd>Enter</kbd> adds and searches, <kbd>Esc</kbd> closes.</span></div>';
    row.insertAdjacentElement("afterend", panel);
    const status = panel.querySelector("#editor-status");
    let field = null;

    function latexOf() { return field ? field.getValue("latex").trim() : ""; }
    function add(search) {
      const latex = latexOf();
      if (!latex) { if (field) field.focus(); return; }
      addToBox(latex);
      field.setValue("");
      if (search) form.requestSubmit();
      else queryBox().focus();
    }
    function close() {
      panel.hidden = true;
      toggle.setAttribute("aria-expanded", "false");
      queryBox().focus();
    }
    function open() {
      panel.hidden = false;
      toggle.setAttribute("aria-expanded", "true");
      loadMathLive().then(() => {
        if (!field) {
          field = document.createElement("math-field");
          field.id = "editor-field";
          field.setAttribute("aria-label", "Formula");
          field.setAttribute("math-virtual-keyboard-policy", "auto");
          field.addEventListener("keydown", (e) => {
            if (field.mode === "latex") return;  // Enter or Esc ends a \command being typed
            if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); e.stopPropagation(); add(true); }
            else if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); close(); }
          }, { capture: true });
          // keys typed in the field are the field's: not the page's shortcuts (/, j, k, n, p)
          field.addEventListener("keydown", (e) => e.stopPropagation());
          // "ready" once MathLive has mounted the field and it holds the focus: keys typed before
          // that were lost on a slow machine. MathLive moves the focus 60 ms after focus() is
          // called, so "ready" waits for the focus itself (or 2 s, if something took it meanwhile)
          const ready = () => panel.setAttribute("data-editor", "ready");
          field.addEventListener("mount", () => {
            field.addEventListener("focusin", ready, { once: true });
            field.focus();
            setTimeout(ready, 2000);
          }, { once: true });
          status.replaceWith(field);
          return;
        }
        field.focus();
      }).catch((err) => {
        status.textContent = String(err.message || err) + ": run `bash scripts/setup_web.sh`.";
        status.className = "error";
        panel.setAttribute("data-editor", "missing");
      });
    }
    toggle.addEventListener("click", () => (panel.hidden ? open() : close()));
    panel.querySelector("#editor-add").addEventListener("click", () => add(false));
    panel.querySelector("#editor-search").addEventListener("click", () => add(true));
    panel.addEventListener("keydown", (e) => { if (e.key === "Escape") { e.preventDefault(); close(); } });
    document.addEventListener("keydown", (e) => {
      if (e.altKey && !e.ctrlKey && !e.metaKey && (e.key === "e" || e.key === "E" || e.code === "KeyE")) {
        e.preventDefault();
        if (panel.hidden) open(); else close();
      }
    });
  }

  // -- the menu on every formula -----------------------------------------------------------------
  const SKIP = "#preview, .formula-editor, .formula-menu, #assess";
  let menu = null;
  let owner = null;

  function formulaOf(el) {
    return el.getAttribute("data-query-latex") || el.getAttribute("data-latex") || el.textContent;
  }

  function searchHref(latex) {
    return "/?" + new URLSearchParams({ q: "$" + latex + "$", task: "2" }).toString();
  }

  function addHref(latex) {
    const here = new URLSearchParams(location.search);
    const task = here.get("task") === "2" ? "1" : here.get("task") || "1";
    return "/?" + new URLSearchParams({ q: withFormula(here.get("q") || "", latex), task: task }).toString();
  }

  function closeMenu(refocus) {
    if (!menu) return;
    menu.remove();
    menu = null;
    if (owner) {
      owner.setAttribute("aria-expanded", "false");
      if (refocus) owner.focus();
    }
    owner = null;
  }

  function item(label, href, onClick) {
    const a = document.createElement("a");
    a.setAttribute("role", "menuitem");
    a.tabIndex = -1;
    a.href = href;
    a.textContent = label;
    if (onClick) a.addEventListener("click", (e) => { e.preventDefault(); onClick(); });
    return a;
  }

  function openMenu(el) {
    closeMenu(false);
    const latex = formulaOf(el).trim();
    if (!latex) return;
    owner = el;
    el.setAttribute("aria-expanded", "true");
    menu = document.createElement("div");
    menu.className = "formula-menu";
    menu.setAttribute("role", "menu");
    menu.setAttribute("aria-label", "This formula");
    menu.appendChild(item("Search this formula", searchHref(latex)));
    const box = queryBox();
    menu.appendChild(box
      ? item("Add to query", "#q", () => { closeMenu(false); addToBox(latex).focus(); })
      : item("Add to query", addHref(latex)));
    menu.appendChild(item("Every representation", "/formula?" + new URLSearchParams({ latex: latex }).toString()));
    document.body.appendChild(menu);
    const r = el.getBoundingClientRect();
    const width = menu.offsetWidth;
    const left = Math.max(4, Math.min(r.left + window.scrollX, window.scrollX + document.documentElement.clientWidth - width - 4));
    menu.style.left = left + "px";
    menu.style.top = (r.bottom + window.scrollY + 4) + "px";
    menu.querySelector("[role=menuitem]").focus();
  }

  function menuKeys(e) {
    if (!menu || !menu.contains(e.target)) return;
    const items = Array.from(menu.querySelectorAll("[role=menuitem]"));
    const i = items.indexOf(document.activeElement);
    if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); closeMenu(true); }
    else if (e.key === "ArrowDown") { e.preventDefault(); items[(i + 1) % items.length].focus(); }
    else if (e.key === "ArrowUp") { e.preventDefault(); items[(i - 1 + items.length) % items.length].focus(); }
    else if (e.key === "Home") { e.preventDefault(); items[0].focus(); }
    else if (e.key === "End") { e.preventDefault(); items[items.length - 1].focus(); }
    else if (e.key === "Tab") closeMenu(false);
    else if (e.key === " ") { e.preventDefault(); document.activeElement.click(); }
  }

  function formulaAt(target) {
    const el = target && target.closest ? target.closest(".tex") : null;
    return el && !el.closest(SKIP) ? el : null;
  }

  function armFormulae(root) {
    for (const el of root.querySelectorAll("main .tex")) {
      if (el.closest(SKIP) || el.closest("a") || el.hasAttribute("tabindex")) continue;  // a link's own formula stays the link
      el.tabIndex = 0;
      el.setAttribute("role", "button");
      el.setAttribute("aria-haspopup", "menu");
      el.setAttribute("aria-expanded", "false");
      el.classList.add("has-tools");
    }
  }

  function start() {
    const form = document.querySelector("form.search[role=search]");
    if (form && queryBox()) makeEditor(form);
    if (document.getElementById("assess")) return;  // the assessors' page keeps its own keys
    armFormulae(document);
    document.addEventListener("click", (e) => {
      if (menu && menu.contains(e.target)) return;
      const el = formulaAt(e.target);
      if (!el || e.target.closest("a") || String(window.getSelection() || "").length) { closeMenu(false); return; }
      if (owner === el) { closeMenu(true); return; }
      openMenu(el);
    });
    document.addEventListener("keydown", (e) => {
      menuKeys(e);
      const el = formulaAt(e.target);
      if (el && e.target === el && (e.key === "Enter" || e.key === " ")) { e.preventDefault(); openMenu(el); }
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
