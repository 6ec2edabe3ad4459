// What the collection's LaTeX needs before MathJax typesets it as Math Stack Exchange does.
// The stored LaTeX is never changed: the page (mathsearch.js) and bench/typeset_share.js both
// typeset each formula through typeset() below: prepareTex() first; if MathJax then refuses it,
// groups that an environment's \end closes are mended (repairGroups) and it is tried again; a macro
// that no formula of the page defines is shown by name in red, as the site's noUndefined does.
//
// - HTML entities left in the LaTeX are decoded ("&amp;lt;", "&lt;"), also when a "%" line break
//   cut one ("&% lt;") or LaTeXML took its "&" for a cell ("x\hfil&\displaystyle gt;0" is x>0),
//   and LaTeXML's "&\displaystyle amp;" cells lose their stray "amp;".
// - A "%" ends a line in TeX: the comment, the line break and the next line's leading spaces are
//   skipped.  The collection's LaTeX has lost its line breaks ("\frac{1}{2% }", "\left% ("), so
//   the "%" and the spaces after it are taken out (the rest of the formula is kept).
// - LaTeXML's "\qvar@construct{)}" (a character it could not place) is that character (nothing
//   when the formula ends inside it);
// - LaTeXML's eqnarray ("\@@eqnarray$a$&$=$&$b$\\ ...") is typeset as the eqnarray it was, and its
//   "\par" is a line break; "\hfil" (glue MathJax knows only inside \halign) is dropped;
//   "\lx@sectionsign" is \S.  "\require{cancel}" is dropped: every extension is loaded already.
"use strict";
(function (root, factory) {
  if (typeof module === "object" && module.exports) module.exports = factory();
  else root.mathsearchTex = factory();
})(typeof self !== "undefined" ? self : this, function () {
  const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "~", "#39": "'", "#34": '"' };
  const ENTITY = /&(?:%\s*)?(amp|lt|gt|quot|apos|nbsp|#39|#34);/g;
  const CELL_ENTITY = /(?:\\hfil\s*)?&(?:%\s*)?\\displaystyle\s*(lt|gt);/g;

  function decodeEntities(tex) {
    tex = tex.replace(CELL_ENTITY, (m, name) => ENTITIES[name]);
    let before;
    do {  // "&amp;lt;" was escaped twice
      before = tex;
      tex = tex.replace(ENTITY, (m, name) => ENTITIES[name]);
    } while (tex !== before && tex.indexOf("&") >= 0);
    // LaTeXML's cells: "&\displaystyle amp;=" is "&\displaystyle =" ("&amp;" half decoded)
    return tex.replace(/(&\s*\$?\s*(?:\\displaystyle\s*)?)amp;/g, "$1");
  }

  function endComments(tex) {
    // a control word before the "%" ends there ("\alpha% x" is \alpha then x, not \alphax)
    return tex.replace(/(\\[a-zA-Z]+)(%\s*)?|\\[^a-zA-Z]|%\s*/g,
      (m, word, comment) => (word ? (comment ? word + " " : word) : m[0] === "\\" ? m : ""));
  }

  function eqnarray(tex) {
    const at = tex.indexOf("\\@@eqnarray");
    if (at < 0) return tex;
    // LaTeXML wraps each cell in $...$; the environment ends with the formula or its group
    let depth = 0, end = tex.length;
    for (let i = at; i < tex.length; i++) {
      const c = tex[i];
      if (c === "\\") { i++; continue; }
      if (c === "{") depth++;
      else if (c === "}" && --depth < 0) { end = i; break; }
    }
    const body = tex.slice(at + "\\@@eqnarray".length, end).replace(/(^|[^\\])\$+/g, "$1").replace(/(^|[^\\])\$+/g, "$1");
    return tex.slice(0, at) + "\\begin{eqnarray}" + body + "\\end{eqnarray}" + tex.slice(end);
  }

  function prepareTex(tex) {
    if (tex.indexOf("%") >= 0) tex = endComments(tex);  // first: a "%" may cut an entity ("lt% ;")
    if (tex.indexOf("&") >= 0) tex = decodeEntities(tex);
    if (tex.indexOf("\\qvar@construct") >= 0) {
      tex = tex.replace(/\\qvar@construct\{(\\?.)\}(?:amp;)?/g, (m, c) => (c === "$" ? "" : c))
        .replace(/\\qvar@construct\{?\s*$/, "");
    }
    if (tex.indexOf("\\@@eqnarray") >= 0) tex = eqnarray(tex);
    // LaTeXML's "\lim\limits_{x}" is "\lim_{\limits}{x}", which MathJax refuses
    if (tex.indexOf("_{\\limits}") >= 0) tex = tex.replace(/_\{\\limits\}\s*\{/g, "\\limits_{");
    if (tex.indexOf("\\lx@") >= 0) tex = tex.replace(/\\lx@sectionsign/g, "\\S").replace(/\\lx@paragraphsign/g, "\\P");
    if (tex.indexOf("\\require") >= 0) tex = tex.replace(/\\require\s*\{[A-Za-z]+\}/g, "");
    return tex.replace(/\\par(?![a-zA-Z])/g, "\\\\").replace(/\\hfil{1,3}(?![a-zA-Z])/g, "");
  }

  // LaTeXML's (and some authors') groups that an environment's \end closes: "\begin{pmatrix}{a&b
  // \end{pmatrix}}", "&{\text{if }n>3\end{cases}}}".  Each group opened inside an environment and
  // still open at its \end loses its "{", and the "}" left over after it is dropped.  Tried only when
  // MathJax refuses the formula as it stands (Misplaced &, extra \end, extra close brace).
  function repairGroups(tex) {
    const drop = new Set();
    const stack = [];  // "{" positions and environment names
    const re = /\\(begin|end)\s*\{([A-Za-z]+\*?)\}|\\.|[{}]/g;
    let surplus = 0, m;
    while ((m = re.exec(tex)) !== null) {
      if (m[0] === "{") stack.push(m.index);
      else if (m[0] === "}") {
        if (typeof stack[stack.length - 1] === "number") stack.pop();
        else if (surplus > 0) { drop.add(m.index); surplus--; }
      } else if (m[1] === "begin") stack.push(m[2]);
      else if (m[1] === "end" && stack.includes(m[2])) {
        while (stack[stack.length - 1] !== m[2]) { drop.add(stack.pop()); surplus++; }
        stack.pop();
      }
    }
    return drop.size ? Array.from(tex).filter((c, i) => !drop.has(i)).join("") : tex;
  }
  const REPAIRABLE = /^(Misplaced &|Missing \\begin\{.*\} or extra \\end|Extra close brace)/;

  // An undefined macro is shown as its name in red and the rest of the formula typeset, as Math
  // Stack Exchange's MathJax (noUndefined) shows it.  convert(tex, options) is MathJax's tex2chtml;
  // returns the node and the undefined macros' names; any other TeX error is thrown.
  const UNDEFINED = /^Undefined control sequence (\\[a-zA-Z]+)$/;

  function typeset(convert, latex, options) {
    let tex = prepareTex(latex);
    const undefinedMacros = [];
    let repaired = false;
    for (;;) {
      try {
        return { node: convert(tex, options), undefinedMacros };
      } catch (e) {
        const message = String((e && e.message) || "");
        if (!repaired && REPAIRABLE.test(message)) {
          repaired = true;
          const again = repairGroups(tex);
          if (again !== tex) { tex = again; continue; }
        }
        const m = UNDEFINED.exec(message);
        if (!m || undefinedMacros.length >= 8 || undefinedMacros.includes(m[1])) throw e;
        undefinedMacros.push(m[1]);
        const shown = "{\\color{#c01c28}{\\mathtt{\\backslash " + m[1].slice(1) + "}}}";
        tex = tex.replace(new RegExp("\\\\" + m[1].slice(1) + "(?![a-zA-Z])", "g"), () => shown);
      }
    }
  }

  return { prepareTex, typeset, repairGroups, decodeEntities, endComments };
});
