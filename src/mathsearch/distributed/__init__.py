"""Ray as the engine of batch work beyond one machine (the optional extra ``mathsearch[ray]``).

* :mod:`.engine`: where the tasks of a plan run: here (:class:`~mathsearch.parallel.LocalEngine`)
  or as Ray tasks on a local or existing cluster (:class:`~.engine.RayEngine`, ``mathsearch index
  --ray [ADDRESS]``).  The index build's tasks (:mod:`mathsearch.indexes.steps`) are one
  (partition, index) pair each: the split of the store into a shard, a shard's text analysis and
  tantivy index, its formula analysis and postings, its embedding (dense).
* :mod:`.batch`: runs of many systems over many topics as Ray tasks (``mathsearch run --ray``).

Nothing here is imported unless asked for: without ``--ray`` the build is the one of
:mod:`mathsearch.indexes.build`, and ray need not be installed.
"""

from .engine import RayEngine, make_engine

__all__ = ["RayEngine", "make_engine"]  # Engine, LocalEngine and run_task live in mathsearch.parallel
