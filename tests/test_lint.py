"""ruff, pinned to pyflakes and pycodestyle's errors (pyproject.toml [tool.ruff]), finds
nothing: no unused or undefined names, no syntax pycodestyle calls an error. Part of the
default suite so that the README's test command checks it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "dgdrf", "tests", "bench"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
