#!/usr/bin/env bash
# Smoke test of the core install (no extras): a venv with mathsearch's own dependencies only
# indexes the real sample, runs Task 1 and Task 2 systems, evaluates and fuses the runs, and
# refuses `index --dense` before doing any work.  A module that needs an extra, or one that
# works only because an extra imported something first, fails here.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
DATA=../shared/data/arqmath
VENV=.venv-core
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
# (pip's warnings about this machine's extra package folders are noise here)
"$VENV/bin/python" -m pip install -q --upgrade pip 2> >(grep -v "^WARNING: Location" >&2)
"$VENV/bin/python" -m pip install -q -e . 2> >(grep -v "^WARNING: Location" >&2)
if "$VENV/bin/python" -c "import torch" 2>/dev/null || "$VENV/bin/python" -c "import pandas" 2>/dev/null; then
  echo "smoke_core: $VENV is not a core install (torch or pandas importable)" >&2; exit 1
fi
# The pyterrier extra stays out of the core: neither PyTerrier nor ir_datasets is installed, and
# mathsearch.pyterrier / mathsearch.irds say in one line which extra they need.
if "$VENV/bin/python" -c "import pyterrier" 2>/dev/null || "$VENV/bin/python" -c "import ir_datasets" 2>/dev/null; then
  echo "smoke_core: $VENV is not a core install (pyterrier or ir_datasets importable)" >&2; exit 1
fi
for module in mathsearch.pyterrier mathsearch.irds; do
  if msg=$("$VENV/bin/python" -c "import $module" 2>&1); then
    echo "smoke_core: import $module worked without the pyterrier extra" >&2; exit 1
  fi
  if ! tail -n 1 <<<"$msg" | grep -q "pip install 'mathsearch\[pyterrier\]'"; then
    echo "smoke_core: import $module without the extra should name it; it said: $msg" >&2; exit 1
  fi
done
# The package's own build step compiled the formula core (setup.py, Cython) into this venv.
"$VENV/bin/python" -c "from mathsearch import _compiled; s = _compiled.status(); assert set(s.values()) == {'compiled'}, s" \
  || { echo "smoke_core: the compiled core was not built by pip install (see the warning above)" >&2; exit 1; }
MS="$VENV/bin/mathsearch"
WORK=$(mktemp -d -t mathsearch-core-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
echo "== core smoke in $WORK"
"$MS" index "$DATA/collection" --index "$WORK/index" --json > "$WORK/index.json"
grep -q '"answers": 3395' "$WORK/index.json"
set +e
"$MS" index "$DATA/collection" --index "$WORK/dense-index" --dense 2> "$WORK/dense.err"
rc=$?
set -e
if [ $rc -ne 2 ] || [ -e "$WORK/dense-index" ] || ! grep -q "dense" "$WORK/dense.err"; then
  echo "smoke_core: index --dense without the extras should stop at once with exit 2 (got $rc)" >&2; exit 1
fi
# No --system: the default Task 1 system of an index without vectors; then a baseline.
"$MS" run --index "$WORK/index" --task 1 --topics "$DATA/topics/task1-2020.xml" \
  --formulas "$DATA/topics/formulas/formulas-2020-latex.tsv" --out "$WORK/t1-default.tsv"
"$MS" run --index "$WORK/index" --task 1 --system bm25-thread --topics "$DATA/topics/task1-2020.xml" \
  --formulas "$DATA/topics/formulas/formulas-2020-latex.tsv" --out "$WORK/t1-bm25-thread.tsv"
"$MS" run --index "$WORK/index" --task 2 --system formula --topics "$DATA/topics/task2-2020.xml" \
  --formulas "$DATA/topics/formulas/formulas-2020-latex.tsv" --out "$WORK/t2-formula.tsv"
"$MS" run --index "$WORK/index" --task 2 --system tangent-s-formula --topics "$DATA/topics/task2-2020.xml" \
  --formulas "$DATA/topics/formulas/formulas-2020-latex.tsv" --out "$WORK/t2-tangent.tsv"
"$MS" fuse --task 1 --method rrf "$WORK/t1-default.tsv" "$WORK/t1-bm25-thread.tsv" --out "$WORK/t1-fused.tsv"
"$MS" fuse --task 2 --method combsum "$WORK/t2-formula.tsv" "$WORK/t2-tangent.tsv" --out "$WORK/t2-fused.tsv"
"$MS" eval --task 1 --qrels "$DATA/qrels/task1-2020.tsv" --index "$WORK/index" --collection-only --json \
  "$WORK"/t1-*.tsv > "$WORK/eval1.json"
"$MS" eval --task 2 --qrels "$DATA/qrels/task2-2020.tsv" --index "$WORK/index" --collection-only --json \
  "$WORK"/t2-*.tsv > "$WORK/eval2.json"
"$VENV/bin/python" - "$WORK" <<'PY'
import json, sys
from pathlib import Path
work = Path(sys.argv[1])
for name, runs in (("eval1.json", 3), ("eval2.json", 3)):
    scores = json.loads((work / name).read_text())
    assert len(scores) == runs, (name, list(scores))
    for run, entry in scores.items():
        # The sample protocol: every system here finds most relevant answers of the 47 / 26 topics.
        assert entry["topics"] > 20 and entry["nDCG'"] > 0.5, (run, entry["topics"], entry["nDCG'"])
print("core smoke: index, 5 runs, 2 fusions and 2 evaluations on the sample without extras")
PY
