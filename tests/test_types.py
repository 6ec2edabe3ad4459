"""Types checked: mypy runs over the package (settings in pyproject.toml) and every error it reports
must be one of the baseline's (tests/mypy-baseline.txt), which only shrinks: an error fixed must
leave the baseline too.  New modules are strict (pyproject's overrides)."""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE = REPO / "tests" / "mypy-baseline.txt"
MAX_BASELINE = 40
# "src/mathsearch/x.py:12: error: Message  [code]" -> "src/mathsearch/x.py: error: Message  [code]":
# line numbers move with every edit, the error stays the same.
LINE = re.compile(r"^(?P<path>[^:\s]+\.py):\d+(?::\d+)?: (?P<rest>error: .*)$")


def errors_of(output: str) -> collections.Counter[str]:
    """mypy's errors, without their line numbers, counted."""
    found: collections.Counter[str] = collections.Counter()
    for line in output.splitlines():
        m = LINE.match(line.strip())
        if m:
            found[f"{m['path']}: {m['rest']}"] += 1
    return found


def read_baseline(path: Path = BASELINE) -> collections.Counter[str]:
    return collections.Counter(line for line in path.read_text(encoding="utf-8").splitlines()
                               if line.strip() and not line.startswith("#"))


def run_mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=1800, env={**os.environ, "PYTHONPATH": str(REPO / "src")})


def test_no_type_error_beyond_the_baseline():
    done = run_mypy("--no-error-summary", "--show-error-codes")
    assert "error:" in done.stdout or done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    found, allowed = errors_of(done.stdout), read_baseline()
    new = found - allowed
    assert not new, "new type errors (fix them; the baseline only shrinks):\n" + "\n".join(sorted(new))
    fixed = allowed - found
    assert not fixed, "fixed: remove these lines from tests/mypy-baseline.txt:\n" + "\n".join(sorted(fixed))


def test_the_baseline_is_small():
    assert 0 < sum(read_baseline().values()) <= MAX_BASELINE


def test_the_comparison_sees_a_new_error(tmp_path):
    """A new error is one the baseline lacks, wherever its line; the same error twice counts twice."""
    out = ("src/mathsearch/a.py:3: error: Name \"x\" is not defined  [name-defined]\n"
           "src/mathsearch/a.py:9: error: Name \"x\" is not defined  [name-defined]\n"
           "src/mathsearch/b.py:1:5: error: Incompatible types  [assignment]\nSuccess: no issues\n")
    base = tmp_path / "baseline.txt"
    base.write_text("# comment\nsrc/mathsearch/a.py: error: Name \"x\" is not defined  [name-defined]\n")
    new = errors_of(out) - read_baseline(base)
    assert new == collections.Counter({"src/mathsearch/a.py: error: Name \"x\" is not defined  [name-defined]": 1,
                                       "src/mathsearch/b.py: error: Incompatible types  [assignment]": 1})
