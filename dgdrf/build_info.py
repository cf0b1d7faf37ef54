"""Which of the emulator's hot modules run compiled (Cython, from the same .py sources).

``pip install -e .`` compiles :data:`COMPILED_MODULES` (setup.py) where a C compiler is
present; each one is then imported from its extension module instead of its .py file,
with the same results (tests/test_compiled_core.py). Without a compiler, or with
``DGDRF_PURE=1`` at install time, they stay pure Python. Results record which ran
(``core`` in a sweep's records and manifest), since only the wall time differs.

An extension module built from other sources than the ones beside it (a file was edited
or checked out since ``pip install -e .``) is stale. The build records a digest of each
compiled module's .py and .pxd files (:data:`RECORD`, written by setup.py and shipped in
wheels); a module whose sources no longer match is stale. File times are not evidence: a
wheel's install writes its files in zip order, so a .py file may be newer than its
extension without any change (the compose image's did). Only an older build, with no
record, is judged by times. When any module is stale, :class:`StaleExtensionGuard` imports
*every* compiled module from its .py file and says so once on stderr: the extensions share
C types through their .pxd files (gradient's nodes are actor's ``Role``), so a compiled
module beside the pure version of one it cimports fails to import.
``DGDRF_PURE=1`` when running (not only when installing) imports every .py file.
Stdlib only: setup.py reads the list before anything is installed.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys

#: the modules compiled, in the order of their share of a dgdrf/pdgdrf run's time
#: (cProfile of thesis-100x20, P = 4: docs/notes/2026-11-29-performance-history.md)
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
    # the typed hot path: node ids and Cyclon's descriptor frames
    "dgdrf.runtime.addresses",
    "dgdrf.overlay.descriptors",
    "dgdrf.runtime.twister",
    # the bootstrap and its draws of peers: every node's first Join, answered in the first
    # protocol period
    "dgdrf.runtime.draws",
    "dgdrf.nodes.bootstrap",
)


#: the digests of the compiled modules' sources at build time, beside this file
RECORD = "compiled_sources.json"
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _pure_requested() -> bool:
    return os.environ.get("DGDRF_PURE", "") not in ("", "0")


def _base(package_dir: str, fullname: str) -> str:
    """A compiled module's path without suffix (dgdrf.overlay.gradient: PACKAGE/overlay/gradient)."""
    return os.path.join(package_dir, *fullname.split(".")[1:])


def _sources(package_dir: str, fullname: str) -> list[str]:
    """A compiled module's .py file and, where there is one, the .pxd that declares its C types."""
    base = _base(package_dir, fullname)
    return [path for path in (base + ".py", base + ".pxd") if os.path.exists(path)]


def module_digest(package_dir: str, fullname: str) -> str:
    """SHA-256 of a compiled module's sources (.py, then .pxd)."""
    digest = hashlib.sha256()
    for path in _sources(package_dir, fullname):
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def write_record(package_dir: str) -> None:
    """Record the digests of the sources about to be compiled (setup.py, before cythonize)."""
    record = {name: module_digest(package_dir, name) for name in COMPILED_MODULES}
    with open(os.path.join(package_dir, RECORD), "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")


def _extension(package_dir: str, fullname: str) -> str | None:
    base = _base(package_dir, fullname)
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        if os.path.exists(base + suffix):
            return base + suffix
    return None


def stale_modules(package_dir: str = _PACKAGE_DIR) -> list[str]:
    """The compiled modules whose extension was built from other sources than the ones
    beside it: by the build's digests, or (no record: an older build) by file times."""
    try:
        with open(os.path.join(package_dir, RECORD)) as f:
            record = json.load(f)
    except (OSError, ValueError):
        record = {}
    stale = []
    for name in COMPILED_MODULES:
        extension = _extension(package_dir, name)
        if extension is None:
            continue
        if name in record:
            if record[name] != module_digest(package_dir, name):
                stale.append(name)
        elif os.path.getmtime(extension) < max(os.path.getmtime(p) for p in _sources(package_dir, name)):
            stale.append(name)
    return stale


class StaleExtensionGuard:
    """A meta-path finder for :data:`COMPILED_MODULES`: their .py sources instead of the
    extension modules when any of them is stale or ``DGDRF_PURE`` is set; otherwise the
    usual finders decide."""

    _all_pure: bool | None = None  # decided at the first import of a compiled module

    @classmethod
    def _decide(cls) -> bool:
        if cls._all_pure is None:
            if _pure_requested():
                cls._all_pure = True
            else:
                stale = stale_modules()
                cls._all_pure = bool(stale)
                if stale:
                    names = ", ".join(name.rpartition(".")[2] + ".py" for name in stale)
                    print(f"dgdrf: warning: {names} (or .pxd) changed since compiled; running the core as pure Python (pip install -e . compiles it again)", file=sys.stderr)
        return cls._all_pure

    @classmethod
    def find_spec(cls, fullname: str, path=None, target=None):
        if fullname not in COMPILED_MODULES:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.origin is None or not spec.origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            return None
        source = os.path.join(os.path.dirname(spec.origin), fullname.rpartition(".")[2] + ".py")
        if not os.path.exists(source) or not cls._decide():
            return None
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
