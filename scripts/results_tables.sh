#!/usr/bin/env bash
# Regenerate the result tables that docs/results.md includes (docs/generated/task{1,2,3}.md) from the
# bench scripts' own output, so those tables are made by the code, not typed by hand.
# Usage: bash scripts/results_tables.sh INDEX_DIR
#   INDEX_DIR: the real sample indexed with MiniLM vectors:
#   mathsearch index ../shared/data/arqmath/collection --index INDEX_DIR --dense minilm
# Takes minutes (every Task 1, 2 and 3 system over the 2020 and 2021 topics); the ms/topic columns
# are wall times on whatever machine runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
IDX=${1:?usage: bash scripts/results_tables.sh INDEX_DIR (the sample indexed with --dense minilm)}
if [ ! -f "$IDX/dense/manifest.json" ]; then
  echo "results_tables.sh: $IDX has no dense vectors; build it with: mathsearch index ../shared/data/arqmath/collection --index $IDX --dense minilm" >&2
  exit 2
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
OUT=docs/generated
mkdir -p "$OUT"
rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- src 2>/dev/null || echo "+changes")
made() {  # made FILE COMMAND...: run the command, write its table to FILE with a line saying how it was made
  local file=$1; shift
  local tmp
  tmp=$(mktemp)
  "$@" > "$tmp"
  local shown="$*"
  { echo "Made $(date -u +%Y-%m-%d) at revision $rev by \`${shown//$IDX/INDEX_DIR}\` (INDEX_DIR: the sample with MiniLM vectors):"
    echo
    # Markdown wants a blank line between a table and the text around it; the scripts print none.
    awk '{ t = ($0 ~ /^\|/) } NR > 1 && t != pt && $0 != "" && prev != "" { print "" } { print; prev = $0; pt = t }' "$tmp"; } > "$file"
  rm -f "$tmp"
  echo "results_tables.sh: wrote $file"
}
made "$OUT/task1.md" python bench/task1_table.py --index "$IDX"
made "$OUT/task2.md" python bench/task2_table.py --index "$IDX"
made "$OUT/task3.md" python bench/task3_table.py --index "$IDX" --system ours --system bm25-thread --system first-hit --system extract
