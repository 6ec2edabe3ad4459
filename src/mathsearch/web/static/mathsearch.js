// mathsearch pages: MathJax for every formula element, the live preview of the query's math, keys.
// Formula elements are <span class="tex">LaTeX</span> made by mathsearch.web.render.  Each is passed
// through texcompat.js (entities, "%" comments, LaTeXML leftovers; the LaTeX shown by data-latex is
// the stored one) and typeset by MathJax 3, configured in mathjax-config.js (no \class, \style or
// javascript: link; a page's \newcommand holds for its later formulae, as on Math Stack Exchange).
// A formula MathJax cannot typeset is shown as its LaTeX, marked .tex-error with the reason; a macro
// no formula of the page defines is shown by name in red (.tex-undefined), as the source site does.
"use strict";
(function () {
  const BATCH = 60;  // formulae typeset between two frames: a long thread stays responsive

  function ready() {
    return !!(window.MathJax && window.MathJax.tex2chtml && window.mathsearchTex);
  }

  function typesetOne(el) {
    const latex = el.textContent;
    el.setAttribute("data-latex", latex);
    el.setAttribute("data-rendered", "1");
    try {
      const done = window.mathsearchTex.typeset(window.MathJax.tex2chtml, latex,
        { display: el.classList.contains("display") });
      el.textContent = "";
      el.appendChild(done.node);
      if (done.undefinedMacros.length) {  // shown by name in red, as on the source site
        el.classList.add("tex-undefined");
        el.title = "not defined on this page: " + done.undefinedMacros.join(" ");
      }
    } catch (e) {
      el.textContent = latex;
      el.classList.add("tex-error");
      el.title = "not typeset: " + String((e && e.message) || e).slice(0, 200);
    }
  }

  // A typeset formula wider than its column scrolls in itself, not the page.
  function fit(done) {
    const wide = done.filter((el) => el.firstChild && el.firstChild.tagName === "MJX-CONTAINER" &&
      el.parentElement && el.firstChild.getBoundingClientRect().width > el.parentElement.clientWidth);
    for (const el of wide) el.classList.add("tex-wide");
  }

  // Those in or near the window first: a long thread reads at once where it is opened.
  function byView(elements) {
    const near = [], far = [];
    const bottom = 2 * window.innerHeight;
    for (const el of elements) {
      const r = el.getBoundingClientRect();
      (r.bottom > -window.innerHeight && r.top < bottom ? near : far).push(el);
    }
    return near.concat(far);
  }

  // Typesets the formula elements under root not yet typeset, BATCH at a time; resolves when done.
  function renderMath(root) {
    if (!ready()) return Promise.resolve(false);
    const todo = byView((root || document.body).querySelectorAll(".tex:not([data-rendered])"));
    return new Promise((resolve) => {
      let i = 0;
      function step() {
        const batch = todo.slice(i, i + BATCH);
        i += BATCH;
        for (const el of batch) typesetOne(el);
        window.MathJax.startup.document.clear();
        window.MathJax.startup.document.updateDocument();  // the CHTML stylesheet of what is new
        fit(batch);
        if (i < todo.length) requestAnimationFrame(step);
        else resolve(true);
      }
      step();
    });
  }
  window.mathsearchRender = (root) => {
    if (ready()) return renderMath(root);
    const startup = window.MathJax && window.MathJax.startup && window.MathJax.startup.promise;
    return startup ? startup.then(() => renderMath(root)) : Promise.resolve(false);
  };

  // The $...$ parts of a query (as the server reads them: $$..$$, $..$; \$ is a dollar).
  function mathOf(text) {
    const found = [];
    const re = /\\\$|\$\$([\s\S]+?)\$\$|\$((?:[^$\\]|\\.)+?)\$/g;
    let m;
    while ((m = re.exec(text)) !== null) {
      const latex = m[1] || m[2];
      if (latex && latex.trim()) found.push(latex.trim());
    }
    return found;
  }

  // Task 2 takes a query without dollars as one formula (mathsearch.searcher.formula_query).
  // The filters a query may hold ([tag], -[tag], score:N, answers:N, is:accepted): not part of its formula
  const FILTER = /(^|\s)(-?\[(?=[^\]]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9.+#-]+\]|score:-?\d{1,9}|answers:\d{1,9}|is:accepted)(?=\s|$)/gi;

  function bareFormula(input) {
    const task2 = document.querySelector("input[name=task][value='2']");
    const text = input.value.replace(FILTER, " ").trim();
    return task2 && task2.checked && text && !/\$|\\\(|\\\[/.test(text) ? [text] : [];
  }

  function preview(input, box) {
    const found = mathOf(input.value);
    const formulae = found.length ? found : bareFormula(input);
    box.textContent = "";
    if (!formulae.length) { box.hidden = true; return; }
    box.hidden = false;
    for (const latex of formulae) {
      const span = document.createElement("span");
      span.className = "tex";
      span.textContent = latex;
      box.appendChild(span);
    }
    renderMath(box);
  }

  function isTyping(target) {
    return target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.isContentEditable);
  }

  function keys(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const q = document.getElementById("q");
    if (event.key === "Escape" && isTyping(event.target)) { event.target.blur(); return; }
    if (isTyping(event.target)) return;
    if (event.key === "/" && q) { event.preventDefault(); q.focus(); q.select(); return; }
    const links = Array.from(document.querySelectorAll(".hit-link"));
    if ((event.key === "j" || event.key === "k") && links.length) {
      event.preventDefault();
      let i = links.indexOf(document.activeElement);
      i = event.key === "j" ? Math.min(links.length - 1, i + 1) : Math.max(0, i - 1);
      links[i].focus();
      return;
    }
    const rel = event.key === "n" ? "next" : event.key === "p" ? "prev" : null;
    const a = rel && document.querySelector(`a[rel="${rel}"]`);
    if (a) { event.preventDefault(); a.click(); }
  }

  // A search that takes longer than SEARCHING_MS says so ("Searching..."), until the results page
  // replaces this one; a page restored by the back button shows it no more.
  const SEARCHING_MS = 300;
  function searching() {
    const form = document.querySelector("form.search");
    const note = document.getElementById("searching");
    if (!form || !note) return;
    let timer = null;
    form.addEventListener("submit", () => {
      clearTimeout(timer);
      timer = setTimeout(() => { note.hidden = false; document.body.setAttribute("aria-busy", "true"); }, SEARCHING_MS);
    });
    window.addEventListener("pageshow", () => { clearTimeout(timer); note.hidden = true; document.body.removeAttribute("aria-busy"); });
  }

  function start() {
    searching();
    const input = document.getElementById("q");
    const box = document.getElementById("preview");
    if (input && box) {
      let timer = null;
      input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => preview(input, box), 120); });
      for (const radio of document.querySelectorAll("input[name=task]")) radio.addEventListener("change", () => preview(input, box));
    }
    document.addEventListener("keydown", keys);
    const startup = window.MathJax && window.MathJax.startup && window.MathJax.startup.promise;
    if (!startup) { document.documentElement.setAttribute("data-math", "missing"); return; }
    startup.then(() => {
      if (input && box) preview(input, box);
      return renderMath(document.body);
    }).then((ok) => document.documentElement.setAttribute("data-math", ok ? "ready" : "missing"));
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
