"""``mathsearch serve``: the search page, the thread and formula pages and the JSON API (FastAPI).

A thin face over :class:`mathsearch.searcher.Searcher` and :mod:`mathsearch.browse`:
``app.create_app(index_dir)`` builds the application, :mod:`.render` turns stored text and HTML
into safe markup for MathJax.  :mod:`.serving` answers many people at once: searches in the worker
processes of :mod:`.workers`, rankings kept in :mod:`.cache`.  Nothing here is imported by the
core: fastapi, uvicorn and jinja2 are the ``web`` extra.
"""
