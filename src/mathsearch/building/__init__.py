"""The build of an INDEX_DIR, above the indexes it makes: the whole build and the partitioned one
(:mod:`.build`), its steps and tasks (:mod:`.steps`), the engines that run them here or on Ray
(:mod:`.engine`), the split of a sharded index and its collection statistics (:mod:`.shard_build`),
how the dense vectors are made (:mod:`.dense_plan`, the student's training :mod:`.train`) and the
resumable vectors of a long embedding (:mod:`.resume`).

The indexes themselves (their formats, how each is built from a store and searched) live in
:mod:`mathsearch.indexes`; which kinds there are is :data:`mathsearch.indexes.kinds.INDEX_KINDS`.
"""

from .build import IndexCounts, build_artifacts, build_index, build_partitioned

__all__ = ["IndexCounts", "build_artifacts", "build_index", "build_partitioned"]
