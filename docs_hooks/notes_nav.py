"""MkDocs hook: every lab note (docs/notes/*.md) in the navigation, newest first, under
"Explanation" / "Lab notes", titled by its first heading; a new note needs no edit of
mkdocs.yml, and none is left out of the site."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    notes = sorted((Path(config.docs_dir) / "notes").glob("2*.md"), reverse=True)
    entries = [{_title(p): f"notes/{p.name}"} for p in notes]
    section = _find(config.nav or [], ["Explanation", "Lab notes"])
    if section is None:
        raise ValueError("mkdocs.yml: the nav has no Explanation / Lab notes section for the lab notes")
    section.extend(entries)
    return config


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return f"{path.name[:10]}: {line[2:].strip()}"
    return path.stem


def _find(nav: list[Any], titles: list[str]) -> list[Any] | None:
    """The list under the nested sections ``titles`` of ``nav``."""
    for item in nav:
        if isinstance(item, dict) and titles[0] in item:
            inner = item[titles[0]]
            return inner if len(titles) == 1 else _find(inner, titles[1:])
    return None
