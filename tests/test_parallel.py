"""The one process helper of the builds: order, errors from children, stopped children."""

from __future__ import annotations

import os
import signal

import pytest

from mathsearch.errors import InputError, MathsearchError
from mathsearch.parallel import batched, ordered_map, side_by_side


def _square(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


def _fail_on_7(x: int) -> int:
    if x == 7:
        raise InputError(f"item {x} is bad")
    return x


class Unpicklable(Exception):
    def __init__(self, a, b):  # pickling keeps args (the message), loading then lacks b
        super().__init__(f"{a} and {b}")


def test_batched_covers_every_item_once():
    assert list(batched(range(7), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(batched([], 3)) == []


def test_ordered_map_keeps_order_in_workers_and_here():
    out = list(ordered_map(_square, range(50), workers=2))
    assert [v for v, _ in out] == [x * x for x in range(50)]
    assert {pid for _, pid in out} - {os.getpid()}  # the work ran in other processes
    here = list(ordered_map(_square, range(5), workers=1))
    assert {pid for _, pid in here} == {os.getpid()}


def test_a_worker_error_is_raised_as_itself():
    with pytest.raises(InputError, match="item 7 is bad"):
        list(ordered_map(_fail_on_7, range(20), workers=2))


def _ok(progress):
    if progress:
        progress("stage", 1, 2)
    return os.getpid()


def _raises_input_error(progress):
    raise InputError("the collection is unreadable")


def _raises_unpicklable(progress):
    raise Unpicklable("x", "y")


def _dies(progress):
    os.kill(os.getpid(), signal.SIGKILL)


def test_side_by_side_runs_children_and_passes_their_progress():
    seen = []
    out = side_by_side([("here", _ok), ("child", _ok)], lambda *a: seen.append(a))
    assert out["here"] == os.getpid() and out["child"] != os.getpid()
    assert seen.count(("stage", 1, 2)) == 2  # the child's progress reached this process


def _niceness(progress):
    return os.nice(0)


def test_side_by_side_nices_the_children_only():
    """The student plan's lexical steps yield the cores to the dense part running here; this
    process keeps its niceness, also when the steps run one after another in it."""
    before = os.nice(0)
    out = side_by_side([("here", _niceness), ("child", _niceness)], nice=3)
    assert out == {"here": before, "child": min(before + 3, 19)}
    assert side_by_side([("alone", _niceness)], nice=3) == {"alone": before}
    assert os.nice(0) == before


@pytest.mark.parametrize("step, kind, words", [
    (_raises_input_error, InputError, "the collection is unreadable"),
    (_raises_unpicklable, MathsearchError, "Unpicklable: x and y"),
    (_dies, MathsearchError, r"the child step stopped \(exit code -9\)"),
])
def test_a_child_error_comes_back_one_way(step, kind, words):
    with pytest.raises(kind, match=words):
        side_by_side([("here", _ok), ("child", step)])


_RECORDING_HANDLER = """
import signal, sys
from mathsearch.parallel import ordered_map
came = []
signal.signal(signal.SIGTERM, lambda signum, frame: came.append(signum))  # records, never exits
for _ in range(5):
    assert list(ordered_map(abs, range(-40, 0), 2)) == list(range(40, 0, -1))
    it = ordered_map(abs, range(-40, 0), 2)
    next(it)
    it.close()  # left early: the pool ends its workers with SIGTERM
print("done", came)
"""


def test_pool_workers_end_whatever_sigterm_handler_the_parent_has():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _RECORDING_HANDLER], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "done []"  # every pool ended; the parent's handler saw nothing


def _sleeps(progress):
    import time

    time.sleep(1.5)
    return "slept"


def test_side_by_side_gives_this_process_work_while_a_child_runs():
    """``meanwhile``: this process's step done, it works on the core it would leave idle until the
    children are done (``waiting()`` turns false then); not called when nothing runs any more."""
    import time

    polls: list[int] = []

    def meanwhile(waiting):
        n = 0
        while waiting():
            n += 1
            time.sleep(0.02)
        polls.append(n)
        return "spare"

    out = side_by_side([("here", _ok), ("child", _sleeps)], meanwhile=meanwhile)
    assert out["meanwhile"] == "spare" and out["child"] == "slept" and out["here"] == os.getpid()
    assert polls[0] > 10  # it ran while the child slept, and stopped when the child was done
    out = side_by_side([("here", _sleeps), ("child", _ok)], meanwhile=meanwhile)
    assert "meanwhile" not in out and len(polls) == 1  # the child was done first: nothing to do
