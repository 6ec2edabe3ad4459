#!/usr/bin/env bash
# The main job: set up, index a collection (default: the real ARQMath sample), then show what we have.
# Usage: bash scripts/main.sh [COLLECTION_DIR] [YEAR]
set -euo pipefail
cd "$(dirname "$0")/.."
COLLECTION=${1:-../shared/data/arqmath/collection}
YEAR=${2:-2020}
bash scripts/setup.sh
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
echo "== index $COLLECTION"
mathsearch index "$COLLECTION" --index index --json
