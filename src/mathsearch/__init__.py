"""mathsearch: math-aware search and an evaluation lab for ARQMath-style collections.

Data flow: ``readers`` -> ``formula`` and text analysis -> ``indexes`` -> ``systems``
-> ``runs`` -> ``evaluation``; ``cli`` is a thin face over this library.
"""

# MATHSEARCH_PURE_PYTHON=1: the compiled core's .py source instead of its extension modules.
from . import _compiled

_compiled.install()

__version__ = "0.1.0"
