"""mypy, configured in pyproject.toml [tool.mypy] (the package and the tests; the package's
unannotated functions checked too), finds no type errors. Part of the default suite so
that the README's test command checks it, like tests/test_lint.py does for ruff."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_nothing(tmp_path: Path) -> None:
    # a fresh cache each time: nothing left from another checkout or mypy version
    proc = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path / "mypy_cache")], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
