"""The bench scripts (bench/**/*.py) as modules, for their tests: they are files to run, not
a package to import."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def load(relative: str) -> ModuleType:
    """The script at ``relative`` (from the repository's root), executed as a module named
    after its path (``bench/papers/wang_trace.py``: ``bench_papers_wang_trace``)."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(Path(relative).with_suffix("").as_posix().replace("/", "_"), path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look their module up by name
    spec.loader.exec_module(module)
    return module


def committed_raw(page_script: ModuleType, name: str | None = None) -> Any:
    """The raw figures a paper's page script (bench/papers/*.py, with its ``NAME``) committed
    beside its page: bench/results/papers/NAME.json, as json reads it back (``name``: one
    of the pages of a script that makes several, its ``NAMES``)."""
    return json.loads((ROOT / "bench" / "results" / "papers" / f"{name or page_script.NAME}.json").read_text(encoding="utf-8"))


def page_names(page_script: ModuleType) -> tuple[str, ...]:
    """Every page a paper's script makes: its ``NAMES``, or its one ``NAME``."""
    return tuple(getattr(page_script, "NAMES", (page_script.NAME,)))
