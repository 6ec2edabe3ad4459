// Typesets formulae as the page does and counts those that fail: run by bench/bench_typeset.py
// (which writes the threads' formulae from an index's store), not alone.
//
//   node bench/typeset_share.js THREADS.jsonl mathjax|katex
//
// THREADS.jsonl: one page a line, {"thread": ID, "formulae": [[formula id, LaTeX], ...]} in the
// order the thread page shows them.  Each formula goes through static/texcompat.js and is typeset,
// with "mathjax", by MathJax 3 configured by static/mathjax-config.js, as the page does (texcompat's
// typeset(): a page's \newcommand holds for its later formulae, a new page starts afresh; a macro
// defined nowhere on the page is shown by name in red, counted in undefinedShown), or, with "katex",
// by KaTeX as the page used it before (throwOnError, the page's macros carried by globalGroup; an
// undefined macro is an error).  Prints one JSON object: counts, seconds, the commonest error
// messages and a few failing formulae.
"use strict";
const fs = require("fs");
const path = require("path");

const ROOT = path.join(__dirname, "..");
const STATIC = path.join(ROOT, "src", "mathsearch", "web", "static");
const { prepareTex, typeset } = require(path.join(STATIC, "texcompat.js"));
const DEFINES = /\\(?:newcommand|renewcommand|def|let|DeclareMathOperator|newenvironment|renewenvironment)(?![a-zA-Z])/;

async function mathjaxTypesetter() {
  const config = require(path.join(STATIC, "mathjax-config.js"));
  config.loader.load = ["input/tex-full", "output/chtml", "adaptors/liteDOM"];
  config.options = {};  // the menu and ui/safe act on the browser's page only (links, attributes)
  const MathJax = await require(path.join(ROOT, "node_modules", "mathjax")).init(config);
  return {
    typeset: (latex) => typeset(MathJax.tex2chtml, latex, {}).undefinedMacros.length,
    newPage: () => MathJax.startup.getComponents(),  // a fresh TeX input: no macro of the last page
    version: MathJax.version,
  };
}

function katexTypesetter() {
  const katex = require(path.join(ROOT, "node_modules", "katex"));
  let macros = {};
  const options = { throwOnError: true, trust: false, strict: "ignore", maxSize: 20, maxExpand: 500, globalGroup: true };
  return {
    typeset: (latex) => katex.renderToString(prepareTex(latex), Object.assign({ macros }, options)) && 0,
    newPage: () => { macros = {}; },
    version: katex.version,
  };
}

async function main() {
  const [file, renderer] = process.argv.slice(2);
  if (!file || !["mathjax", "katex"].includes(renderer)) {
    console.error("usage: node bench/typeset_share.js THREADS.jsonl mathjax|katex");
    process.exit(2);
  }
  const pages = fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map(JSON.parse);
  const t = renderer === "mathjax" ? await mathjaxTypesetter() : katexTypesetter();
  const messages = {};
  const failed = [];
  let formulae = 0, errors = 0, undefinedShown = 0, dirty = false;
  const start = process.hrtime.bigint();
  for (const page of pages) {
    if (dirty) t.newPage();
    dirty = false;
    for (const [id, latex] of page.formulae) {
      formulae++;
      if (DEFINES.test(latex)) dirty = true;
      try {
        if (t.typeset(latex)) undefinedShown++;
      } catch (e) {
        errors++;
        const message = String(e.message || e).split("\n")[0].replace(/^KaTeX parse error: /, "").slice(0, 70);
        messages[message] = (messages[message] || 0) + 1;
        if (failed.length < 30) failed.push([id, message, latex.slice(0, 160)]);
      }
    }
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const top = Object.entries(messages).sort((a, b) => b[1] - a[1]).slice(0, 15);
  console.log(JSON.stringify({ renderer, version: t.version, pages: pages.length, formulae, errors, undefinedShown, seconds, top, failed }));
}

main().catch((e) => { console.error(e && e.stack || e); process.exit(1); });
