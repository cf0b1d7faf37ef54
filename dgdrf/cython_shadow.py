"""The few names of Cython's pure-Python mode that the compiled core's sources use, for
running them where Cython is not installed (it is a build requirement, not a runtime one).

The hot modules (``dgdrf/build_info.py``) are plain Python with their C types declared in
augmenting ``.pxd`` files beside them; where a module needs to know whether it runs
compiled (``cython.compiled``: a C data structure instead of a Python one) it imports
``cython``, and falls back to this module. Compiled, Cython replaces every name here at
build time; interpreted, they do what Cython's own shadow module does: nothing, or the
Python meaning.
"""

from __future__ import annotations

from typing import Any

#: False when interpreted; the compiled modules see True (a compile-time constant)
compiled = False
#: the C integer type of sizes and indices: a Python int when interpreted
Py_ssize_t = int


def cast(kind: Any, value: Any) -> Any:
    """Interpreted, a cast is the value itself, but a cast to an integer type truncates
    (as C's does, and as Cython's own shadow module's does)."""
    if kind is int:
        return int(value)
    return value
