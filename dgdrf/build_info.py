"""Which of the emulator's hot modules run compiled (Cython, from the same .py sources).

``pip install -e .`` compiles :data:`COMPILED_MODULES` (setup.py) where a C compiler is
present; each one is then imported from its extension module instead of its .py file,
with the same results (tests/test_compiled_core.py). Without a compiler, or with
``DGDRF_PURE=1`` at install time, they stay pure Python. Results record which ran
(``core`` in a run's JSON and a sweep's manifest), since only the wall time differs.
Stdlib only: setup.py reads the list before anything is installed.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util

#: the modules compiled, in the order of their share of a dgdrf/pdgdrf run's time
#: (cProfile of thesis-100x20, P = 4: bench/README.md, "A compiled core")
COMPILED_MODULES = (
    "dgdrf.overlay.gradient",
    "dgdrf.overlay.toolbox_gradient",
    "dgdrf.runtime.clock",
    "dgdrf.runtime.transport",
    "dgdrf.overlay.cyclon",
    "dgdrf.policies.local",
    "dgdrf.runtime.actor",
    "dgdrf.nodes.server",
    "dgdrf.policies.dgdrf",
    "dgdrf.model.metrics",
    "dgdrf.model.resources",
)


def compiled_modules() -> list[str]:
    """The modules of :data:`COMPILED_MODULES` that import from an extension module."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    out = []
    for name in COMPILED_MODULES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin is not None and spec.origin.endswith(suffixes):
            out.append(name)
    return out


def core() -> str:
    """``compiled``, ``pure``, or ``partly compiled (k of n)``."""
    k, n = len(compiled_modules()), len(COMPILED_MODULES)
    if k == n:
        return "compiled"
    return "pure" if k == 0 else f"partly compiled ({k} of {n})"
