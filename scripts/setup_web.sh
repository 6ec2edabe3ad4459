#!/usr/bin/env bash
# What `mathsearch serve` and its browser tests need beyond the Python extras (web, test):
#   - Debian's Chromium at /usr/bin/chromium (Playwright drives it; no browser is ever downloaded),
#   - KaTeX from npm (package-lock.json), copied into src/mathsearch/web/static/katex (gitignored),
#     which the app serves at /static/katex/: no CDN,
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
dest=src/mathsearch/web/static/katex
rm -rf "$dest"
mkdir -p "$dest"
cp -r node_modules/katex/dist/katex.min.css node_modules/katex/dist/katex.min.js node_modules/katex/dist/fonts "$dest"/
mkdir -p "$dest/contrib"
cp node_modules/katex/dist/contrib/auto-render.min.js "$dest/contrib/"
cp node_modules/katex/LICENSE "$dest/" 2>/dev/null || true
swagger=src/mathsearch/web/static/swagger-ui
rm -rf "$swagger"
mkdir -p "$swagger"
cp node_modules/swagger-ui-dist/swagger-ui-bundle.js node_modules/swagger-ui-dist/swagger-ui.css \
   node_modules/swagger-ui-dist/LICENSE "$swagger"/
echo "setup_web.sh: Swagger UI $(node -p 'require("./node_modules/swagger-ui-dist/package.json").version') in $swagger"
echo "setup_web.sh: KaTeX $(node -p 'require("./node_modules/katex/package.json").version') in $dest; chromium: $(/usr/bin/chromium --version 2>/dev/null || echo '?')"
