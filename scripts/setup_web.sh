#!/usr/bin/env bash
# What `mathsearch serve` and its browser tests need beyond the Python extras (web, test):
#   - Debian's Chromium at /usr/bin/chromium (Playwright drives it; no browser is ever downloaded),
#   - MathJax 3 from npm (package-lock.json): the parts the page loads (tex-chtml-full.js, ui/safe.js,
#     the CHTML woff fonts) copied into src/mathsearch/web/static/mathjax (gitignored), which the app
#     serves at /static/mathjax/: no CDN.  node_modules/ keeps MathJax and KaTeX for
#     bench/bench_typeset.py (node typesets the collection's formulae with each).
#   - MathLive from npm (the page's optional formula editor): mathlive.min.js and its KaTeX woff2
#     fonts copied into src/mathsearch/web/static/mathlive (gitignored), loaded only when the editor
#     is opened; its sounds are not copied (the page switches them off).
#   - Swagger UI from npm (swagger-ui-dist), copied into src/mathsearch/web/static/swagger-ui
#     (gitignored), which the API page /docs serves; its @scarf/scarf install ping is switched off.
# Run as root on a fresh Debian machine (apt-get needs it); with Chromium already there it is not.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup_web.sh: /usr/bin/chromium is missing; run this script as root to install it" >&2
    exit 1
  fi
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium
fi
if ! command -v npm >/dev/null; then
  echo "setup_web.sh: npm is missing (Debian: apt-get install -y npm)" >&2
  exit 1
fi
SCARF_ANALYTICS=false npm ci --no-audit --no-fund --loglevel=error
dest=src/mathsearch/web/static/mathjax
mj=node_modules/mathjax/es5
rm -rf "$dest" src/mathsearch/web/static/katex  # (static/katex: the page's renderer before MathJax)
mkdir -p "$dest/ui" "$dest/output/chtml/fonts"
cp "$mj/tex-chtml-full.js" "$dest/"
cp "$mj/ui/safe.js" "$dest/ui/"
cp -r "$mj/output/chtml/fonts/woff-v2" "$dest/output/chtml/fonts/"
cp node_modules/mathjax/LICENSE "$dest/"
mathlive=src/mathsearch/web/static/mathlive
rm -rf "$mathlive"
mkdir -p "$mathlive"
cp node_modules/mathlive/mathlive.min.js node_modules/mathlive/LICENSE.txt "$mathlive"/
cp -r node_modules/mathlive/fonts "$mathlive"/
echo "setup_web.sh: MathLive $(node -p 'require("./node_modules/mathlive/package.json").version') in $mathlive"
swagger=src/mathsearch/web/static/swagger-ui
rm -rf "$swagger"
mkdir -p "$swagger"
cp node_modules/swagger-ui-dist/swagger-ui-bundle.js node_modules/swagger-ui-dist/swagger-ui.css \
   node_modules/swagger-ui-dist/LICENSE "$swagger"/
echo "setup_web.sh: Swagger UI $(node -p 'require("./node_modules/swagger-ui-dist/package.json").version') in $swagger"
echo "setup_web.sh: MathJax $(node -p 'require("./node_modules/mathjax/package.json").version') in $dest; chromium: $(/usr/bin/chromium --version 2>/dev/null || echo '?')"
