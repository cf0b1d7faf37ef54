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


def committed_raw(page_script: ModuleType) -> Any:
    """The raw figures a paper's page script (bench/papers/*.py, with its ``NAME``) committed
    beside its page: bench/results/papers/NAME.json, as json reads it back."""
    return json.loads((ROOT / "bench" / "results" / "papers" / f"{page_script.NAME}.json").read_text(encoding="utf-8"))
