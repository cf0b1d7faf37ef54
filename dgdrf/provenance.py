"""Provenance: which code, on which interpreter and libraries, made a result.

A recorded result can only be compared with another (or trusted as the current code's)
when one knows what made it: the git commit of the package, whether its tracked files
differed from that commit (``dirty``: then the commit alone does not name the code), the
dgdrf, Python and library versions (numpy and msgpack can change results: numbers and
encoded message sizes). ``dgdrf sweep`` writes :func:`provenance` into every record and
into the manifest.

Collected once per process and cached: a sweep writes thousands of records, and
spawning git for each would cost more than some runs. The parent collects it before
its workers start, so a record says what the sweep started with. Outside a git
checkout (an installed package), without git, or with git failing, the commit and the
dirty flag are ``None``: never an error, as provenance must not stop a result being
recorded. Stdlib only.
"""

from __future__ import annotations

import copy
import functools
import importlib.metadata
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

#: the package's source directory: the commit and dirty flag are read here
PACKAGE_DIR = Path(__file__).resolve().parent
#: the git command (a module attribute so that tests can take it away)
GIT = "git"
#: libraries whose versions can change results
LIBRARIES = ("numpy", "msgpack")
#: seconds any one git command may take
GIT_TIMEOUT = 10.0


def _git(directory: Path, *args: str) -> str | None:
    """``git args`` run in ``directory``: its stripped output, or None if it fails.
    Optional locks are off (no index refresh written while someone else commits) and
    GIT_DIR-like variables of a calling hook are dropped (they would name another repo)."""
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR")}
    env["GIT_OPTIONAL_LOCKS"] = "0"
    try:
        done = subprocess.run(
            [GIT, "-C", str(directory), *args], capture_output=True, text=True, timeout=GIT_TIMEOUT, env=env, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_state(directory: Path | None = None) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the package's source in ``directory`` (default
    :data:`PACKAGE_DIR`): the full hex of HEAD, and whether tracked files under
    ``directory`` differ from it (staged or not; untracked files do not count). (None,
    None) when ``directory`` is not tracked in a git checkout: not in one, or in an
    untracked or ignored directory of one (a virtualenv inside a checkout), whose HEAD
    did not make the code."""
    directory = Path(directory if directory is not None else PACKAGE_DIR)
    if not directory.is_dir():
        return None, None
    if not _git(directory, "ls-files", "--", "."):
        return None, None
    commit = _git(directory, "rev-parse", "--verify", "HEAD")
    if not commit:
        return None, None
    status = _git(directory, "status", "--porcelain", "--untracked-files=no", "--", ".")
    return commit, (None if status is None else status != "")


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def provenance() -> dict[str, Any]:
    """What made this process's results (collected once per process; see the module's
    docstring)::

        {"commit": "<40 hex>" | None, "dirty": bool | None, "dgdrf": "0.1.0",
         "python": "3.11.7", "libraries": {"numpy": "2.1.0", "msgpack": "1.0.8"}}

    A copy of the cached collection, so that a caller may add keys to it."""
    return copy.deepcopy(_collected())


def cache_clear() -> None:
    """Forget the collection: the next :func:`provenance` reads git and versions again."""
    _collected.cache_clear()


@functools.cache
def _collected() -> dict[str, Any]:
    from dgdrf import __version__

    commit, dirty = git_state()
    return {
        "commit": commit,
        "dirty": dirty,
        "dgdrf": __version__,
        "python": platform.python_version(),
        "libraries": {name: _version(name) for name in LIBRARIES},
    }


#: the package files whose content is its code (compiled_sources.json is made by the build)
SOURCE_PATTERNS = ("**/*.py", "**/*.pxd", "data/*.toml", "data/*.json")


@functools.cache
def source_digest(directory: Path | None = None) -> str:
    """SHA-256 (16 hex digits) of the package's code: every .py and .pxd file and its data,
    by path and content. The same on a git checkout and on a wheel's install of the same
    code, which a commit is not (an install has none); a Dask worker's must be the
    client's (dgdrf/bench/executors.py)."""
    import hashlib

    root = Path(directory if directory is not None else PACKAGE_DIR)
    files = sorted({f for pattern in SOURCE_PATTERNS for f in root.glob(pattern) if "__pycache__" not in f.parts})
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.relative_to(root).as_posix().encode() + b"\0")
        digest.update(f.read_bytes() + b"\0")
    return digest.hexdigest()[:16]

