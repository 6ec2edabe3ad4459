#!/usr/bin/env bash
# Set up (scripts/setup.sh), smoke-test the core install (scripts/smoke_core.sh), build the docs site
# (mkdocs build --strict) and run the whole test suite offline.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The core install (no extras) indexes, runs, fuses and evaluates the sample in a venv of its own.
bash scripts/smoke_core.sh
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
ruff check src tests bench
# The documentation site: broken links, missing pages and docstrings that do not render fail (into site/, ignored).
# (tests/test_docs.py checks the generated CLI page and runs the API examples as doctests.)
# Not --quiet: it hides the warnings from --strict too, and a broken link then passed.
NO_MKDOCS_2_WARNING=1 mkdocs build --strict --site-dir site
# Two test processes (pytest-xdist; a file's tests stay in one, files in the order tests/conftest.py
# gives: the longest first): the suite is mostly one core's
# work, and CI has two.  MATHSEARCH_TEST_JOBS=0 runs it in this one process.
python -m pytest -q -n "${MATHSEARCH_TEST_JOBS:-2}" --dist loadfile --no-loadscope-reorder "$@"
