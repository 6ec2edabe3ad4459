// mathsearch pages: KaTeX for every formula element, the live preview of the query's math, keys.
// Formula elements are <span class="tex">LaTeX</span> made by mathsearch.web.render; KaTeX runs
// with trust: false (no \href, \url or \html* link or attribute is ever made) and bounded macros.
"use strict";
(function () {
  const OPTIONS = { throwOnError: false, trust: false, strict: "ignore", maxSize: 20, maxExpand: 500 };

  function renderMath(root) {
    if (!window.katex) return false;
    for (const el of root.querySelectorAll(".tex:not([data-rendered])")) {
      const latex = el.textContent;
      el.setAttribute("data-latex", latex);
      el.setAttribute("data-rendered", "1");
      try {
        // A "%" (a TeX comment) ends at the line's end; the collection's LaTeX has lost its line
        // breaks ("\\frac{1}{2% ^{n}}"), so each comment is ended where it starts.
        const tex = latex.replace(/(^|[^\\])%/g, "$1%\n");
        window.katex.render(tex, el, Object.assign({ displayMode: el.classList.contains("display") }, OPTIONS));
      } catch (e) {
        el.textContent = latex;
        el.classList.add("tex-error");
      }
    }
    return true;
  }
  window.mathsearchRender = renderMath;

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
  function bareFormula(input) {
    const task2 = document.querySelector("input[name=task][value='2']");
    const text = input.value.trim();
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

  function start() {
    renderMath(document.body);
    const input = document.getElementById("q");
    const box = document.getElementById("preview");
    if (input && box) {
      let timer = null;
      input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => preview(input, box), 120); });
      for (const radio of document.querySelectorAll("input[name=task]")) radio.addEventListener("change", () => preview(input, box));
      preview(input, box);
    }
    document.addEventListener("keydown", keys);
    document.documentElement.setAttribute("data-math", window.katex ? "ready" : "missing");
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
