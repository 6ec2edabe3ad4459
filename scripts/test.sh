#!/usr/bin/env bash
# Set up (scripts/setup.sh), smoke-test the core install (scripts/smoke_core.sh) and run the whole
# test suite offline.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The core install (no extras) indexes, runs, fuses and evaluates the sample in a venv of its own.
bash scripts/smoke_core.sh
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
ruff check src tests bench
python -m pytest -q "$@"
