#!/usr/bin/env bash
# Set up (scripts/setup.sh) and run the whole test suite offline.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
ruff check src tests bench
python -m pytest -q "$@"
