"""Ray as the engine of batch work beyond one machine (the optional extra ``mathsearch[ray]``).

* :mod:`.batch`: runs of many systems over many topics as Ray tasks (``mathsearch run --ray``).
* The engines that run an index build's tasks, here or as Ray tasks on a local or existing cluster
  (``mathsearch index --ray [ADDRESS]``), are part of the build: :mod:`mathsearch.building.engine`.

Nothing here is imported unless asked for: without ``--ray`` ray need not be installed.
"""
