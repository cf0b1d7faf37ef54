"""MkDocs hook: links from a page to files of the repository outside docs/ (a record under
bench/results/, a script, a config), which the site does not hold.

The lab notes and guides cite records and scripts by relative links that work when the
markdown is read in the repository. In the site such a link is shown as the file's path
in the repository (code), its text kept; a link that resolves neither to a page nor to a
file of the repository is a warning, which ``mkdocs build --strict`` turns into a
failure, as MkDocs does for a broken link between pages. An image from outside docs/ (a
figure of a report) is copied into the site, under ``_repo/`` and its path in the
repository, and shown.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

log = logging.getLogger("mkdocs.hooks.repo_links")

#: a markdown link or image: [text](target) with no scheme, not an anchor alone
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")
#: where images from outside docs/ go in the site
REPO_DIR = "_repo"


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add every image a page shows from outside docs/ to the site's files."""
    docs = Path(config.docs_dir).resolve()
    root = Path(config.config_file_path).resolve().parent
    added: set[str] = set()
    for page in [f for f in files if f.src_uri.endswith(".md") and f.abs_src_path]:
        here = Path(page.abs_src_path).parent
        for bang, _, target in LINK.findall(Path(page.abs_src_path).read_text(encoding="utf-8")):
            rel = _repo_path(bang, target, here, docs, root)
            if rel and rel not in added:
                added.add(rel)
                files.append(File.generated(config, f"{REPO_DIR}/{rel}", abs_src_path=str(root / rel)))
    return files


def _outside_docs(target: str, here: Path, docs: Path) -> Path | None:
    """Where a relative link ``target`` from a page in ``here`` leads, when it leaves docs/
    (None: a URL, an anchor, or a page or file of the site, which MkDocs checks itself)."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
        return None
    resolved = (here / target.split("#", 1)[0]).resolve()
    return None if resolved.is_relative_to(docs) else resolved


def _repo_path(bang: str, target: str, here: Path, docs: Path, root: Path) -> str | None:
    """The repository path of an image ``target`` outside docs/ that exists, else None."""
    resolved = _outside_docs(target, here, docs) if bang else None
    if resolved is None or not resolved.is_relative_to(root) or not resolved.is_file():
        return None
    return resolved.relative_to(root).as_posix()


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    docs = Path(config.docs_dir).resolve()
    root = Path(config.config_file_path).resolve().parent
    here = (docs / page.file.src_path).parent
    # leave fenced code alone: split on fences, rewrite the even (outside) parts only
    parts = re.split(r"(^```.*?^```[^\n]*$)", markdown, flags=re.MULTILINE | re.DOTALL)
    for i in range(0, len(parts), 2):
        parts[i] = LINK.sub(lambda m: _rewrite(m, page, here, docs, root), parts[i])
    return "".join(parts)


def _rewrite(m: re.Match[str], page: Page, here: Path, docs: Path, root: Path) -> str:
    bang, text, target = m.groups()
    resolved = _outside_docs(target, here, docs)
    if resolved is None:
        return m.group(0)
    if not resolved.is_relative_to(root):
        log.warning("%s links to %r, outside the repository", page.file.src_path, target)
        return m.group(0)
    rel = resolved.relative_to(root).as_posix()
    if not resolved.exists():
        log.warning("%s links to %r: no such file in the repository (%s)", page.file.src_path, target, rel)
        return m.group(0)
    if bang:  # copied into the site by on_files
        up = "../" * page.file.src_uri.count("/")
        return f"![{text}]({up}{REPO_DIR}/{rel})"
    shown = rel + ("/" if resolved.is_dir() else "")
    if text.strip("`") in (rel, shown, target.split("#", 1)[0], target):
        return f"`{shown}`"
    return f"{text} (`{shown}`)"
