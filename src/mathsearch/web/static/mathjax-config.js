// MathJax's configuration for every page of mathsearch serve and for bench/typeset_share.js (the
// same object, so the bench measures what the page shows).  MathJax 3 (npm "mathjax", the
// tex-chtml-full component: every TeX extension preloaded) is served from /static/mathjax/: no CDN.
//
// - A formula that MathJax cannot parse throws (formatError), so the page shows its LaTeX as text
//   marked .tex-error, and the bench counts it; noerrors and noundefined are therefore left out.
// - Nothing is fetched at typesetting time: autoload and \require are left out.
// - Safe: \class, \style, \cssId and \data (the "html" extension) and \setOptions are left out,
//   and the "ui/safe" component keeps only http(s) links for \href (javascript: is never linked).
// - A post's \newcommand and \def hold for the rest of the page, as on Math Stack Exchange.
"use strict";
(function (root, factory) {
  const config = factory();
  if (typeof module === "object" && module.exports) module.exports = config;
  else root.MathJax = config;
})(typeof self !== "undefined" ? self : this, function () {
  return {
    loader: { load: ["ui/safe"] },
    tex: {
      packages: { "[-]": ["noerrors", "noundefined", "autoload", "require", "html", "setoptions"] },
      formatError: (jax, err) => { throw err; },
      maxMacros: 2000,  // macro expansions a formula may make (a looping \def stops here)
      maxBuffer: 20 * 1024,
    },
    chtml: { fontURL: "/static/mathjax/output/chtml/fonts/woff-v2", scale: 1.1 },  // beside 16px sans text
    options: {
      enableMenu: false,
      safeOptions: {
        allow: { URLs: "safe", classes: "none", cssIDs: "none", styles: "safe" },  // \bbox[border:..] as on the site
        safeProtocols: { http: true, https: true, file: false, javascript: false, data: false },
      },
    },
    startup: { typeset: false },
  };
});
