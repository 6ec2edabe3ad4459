"""mathsearch: math-aware search and an evaluation lab for ARQMath-style collections.

Data flow: ``readers`` -> ``formula`` and text analysis -> ``indexes`` -> ``systems``
-> ``runs`` -> ``evaluation``; ``cli`` is a thin face over this library.
"""

__version__ = "0.1.0"
