#!/usr/bin/env bash
# Create .venv and install mathsearch with every extra (dense models, web, benchmark peers, Ray, tests, docs, PyTerrier).
# torch is pinned to the CPU wheel 2.13.0 first, so nothing else pulls a CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
. .venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q "torch==2.13.0"
python -m pip install -q -e ".[dense,web,bench,ray,test,docs,pyterrier]"
bash scripts/setup_web.sh  # Chromium (Debian), MathJax and Swagger UI (npm) for mathsearch serve and its browser tests
