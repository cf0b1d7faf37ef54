"""Which of the emulator's hot modules run compiled (Cython, from the same .py sources).

``pip install -e .`` compiles :data:`COMPILED_MODULES` (setup.py) where a C compiler is
present; each one is then imported from its extension module instead of its .py file,
with the same results (tests/test_compiled_core.py). Without a compiler, or with
``DGDRF_PURE=1`` at install time, they stay pure Python. Results record which ran
(``core`` in a sweep's records and manifest), since only the wall time differs.

An extension module older than its .py file, or than the .pxd file beside it that declares
its C types, was built from other sources (a file was edited or checked out since
``pip install -e .``): :class:`StaleExtensionGuard` imports the .py file instead, and says
so once on stderr, so an edit always takes effect.
``DGDRF_PURE=1`` when running (not only when installing) imports every .py file.
Stdlib only: setup.py reads the list before anything is installed.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

#: the modules compiled, in the order of their share of a dgdrf/pdgdrf run's time
#: (cProfile of thesis-100x20, P = 4: bench/results/PERFORMANCE.md)
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
    # last: a small share of those runs (their estimate of C); compiled for compare.sh's push-sum
    "dgdrf.overlay.pushsum",
)


def _pure_requested() -> bool:
    return os.environ.get("DGDRF_PURE", "") not in ("", "0")


class StaleExtensionGuard:
    """A meta-path finder for :data:`COMPILED_MODULES`: their .py source instead of an
    extension module when the extension is older than the source, or with ``DGDRF_PURE``
    set; otherwise the usual finders decide."""

    warned: set[str] = set()

    @classmethod
    def find_spec(cls, fullname: str, path=None, target=None):
        if fullname not in COMPILED_MODULES:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.origin is None or not spec.origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            return None
        source = os.path.join(os.path.dirname(spec.origin), fullname.rpartition(".")[2] + ".py")
        if not os.path.exists(source):
            return None
        if not _pure_requested():
            declarations = source[:-3] + ".pxd"
            newest = max(os.path.getmtime(source), os.path.getmtime(declarations) if os.path.exists(declarations) else 0.0)
            if os.path.getmtime(spec.origin) >= newest:
                return None
            if fullname not in cls.warned:
                cls.warned.add(fullname)
                print(f"dgdrf: warning: {source} (or its .pxd) changed since it was compiled; running it as pure Python (pip install -e . compiles it again)", file=sys.stderr)
        return importlib.util.spec_from_file_location(fullname, source)


def install_guard() -> None:
    """Put :class:`StaleExtensionGuard` first on ``sys.meta_path`` (once)."""
    if StaleExtensionGuard not in sys.meta_path:
        sys.meta_path.insert(0, StaleExtensionGuard)


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
