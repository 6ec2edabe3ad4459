"""The formula build's grouping of instances by visual formula, read as the store is read: the
chunks it hands the analysis workers (while it still reads) are the chunks the whole list of new
visual formulae would be cut into, on the real sample."""

from __future__ import annotations

import numpy as np
import pytest

from mathsearch.formula import FormulaAnalyzer
from mathsearch.indexes.formula import build
from mathsearch.store import Store


def _first_seen(store: Store) -> tuple[list[str], list[int], int]:
    """The reference: each group's first LaTeX and each instance's group, in store order (an
    instance without a visual id grouped by our visual key), and how many had none."""
    analyzer = FormulaAnalyzer()
    groups: dict[str, int] = {}
    latex_of: list[str] = []
    group_of: list[int] = []
    keyed = 0
    for f in store.iter_formulas():
        key = f.visual_id
        if key is None:
            key = "k:" + analyzer.analyze(f.latex).visual_key
            keyed += 1
        if key not in groups:
            groups[key] = len(latex_of)
            latex_of.append(f.latex)
        group_of.append(groups[key])
    return latex_of, group_of, keyed


@pytest.mark.parametrize("size", [1, 7, 2000, 10_000, 10**7])
def test_the_chunks_are_the_first_seen_visual_formulae_cut_in_order(sample_index, size):
    with Store.open(sample_index) as store:
        latex_of, group_of, keyed = _first_seen(store)
        grouping = build._Grouping(store, None)
        chunks = list(grouping.chunks(size))
    assert len(latex_of) > 30_000  # the sample's visual formulae
    assert all(len(c) == size for c in chunks[:-1]) and 0 < len(chunks[-1]) <= size
    assert [latex for c in chunks for latex in c] == latex_of
    assert grouping.n_groups == len(latex_of) and grouping.keyed_here == keyed > 0  # the sample has instances without one
    assert np.frombuffer(grouping.inst.group, dtype=np.int64).tolist() == group_of
    assert len(grouping.inst.formula) == len(grouping.inst.post) == len(grouping.inst.kind) == len(group_of)


def test_the_count_grows_while_the_chunks_come(sample_index):
    """The progress line reads ``n_groups`` while the workers run: it counts the visual formulae
    read so far, not only at the end."""
    with Store.open(sample_index) as store:
        grouping = build._Grouping(store, None)
        seen = [grouping.n_groups for _ in grouping.chunks(2000)]
    assert seen[0] >= 2000 and seen == sorted(seen) and seen[-1] == grouping.n_groups
    assert len(set(seen)) > 5
