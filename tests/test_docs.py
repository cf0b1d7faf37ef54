"""The front door: the documentation site builds with ``mkdocs build --strict`` (a broken
link, an anchor that is not there, a page left out of the navigation fail it), its
reference pages hold every option the command line has, and README.md stays a short front
door whose first two commands are the ones a new user runs."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("mkdocs")
pytest.importorskip("material")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    return out


def _text(page: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8")))


def test_site_builds_strict_with_every_page(site: Path) -> None:
    for page in ("index.html", "tutorials/index.html", "how-to/run/index.html", "reference/cli/index.html", "explanation/papers/index.html", "notes/index.html"):
        assert (site / page).is_file(), page
    # every lab note is a page of the site (the hook puts each in the navigation)
    for note in (ROOT / "docs" / "notes").glob("2*.md"):
        assert (site / "notes" / note.stem / "index.html").is_file(), note.name


def _long_options(*command: str) -> set[str]:
    out = subprocess.run([sys.executable, "-m", "dgdrf", *command, "--help"], capture_output=True, text=True, check=True, env={**os.environ, "COLUMNS": "200"}).stdout
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]+)", out)) - {"--help"}


def test_every_long_option_of_run_is_in_the_reference(site: Path) -> None:
    text = _text(site / "reference" / "cli" / "index.html")
    options = _long_options("run")
    assert len(options) > 30
    missing = sorted(o for o in options if o not in text)
    assert not missing, missing
    every = _text(site / "reference" / "run-options" / "index.html")
    assert "--churn-departures" in every and "DGDRF_CHURN_DEPARTURES" in every and "churn_departures" in every


def test_every_subcommand_is_in_the_reference(site: Path) -> None:
    text = _text(site / "reference" / "cli" / "index.html")
    for command in ("run", "scenario", "overlay", "node", "cluster up", "cluster keys", "oracle", "audit", "sweep", "report", "bench runtime", "schema"):
        assert f"dgdrf {command}" in text, command
    for option in _long_options("sweep") | _long_options("cluster", "up") | _long_options("audit"):
        assert option in text, option


def test_policies_and_result_keys_pages_are_drawn_from_the_code(site: Path) -> None:
    from dgdrf.policies import POLICIES
    from dgdrf.result_keys import documented

    policies = _text(site / "reference" / "policies" / "index.html")
    for name in POLICIES:
        assert name in policies, name
    keys = _text(site / "reference" / "result-keys" / "index.html")
    for key in documented():
        assert key in keys, key


def test_links_to_repository_files_are_checked(caplog: pytest.LogCaptureFixture) -> None:
    """A link from a page to a file of the repository outside docs/ is shown as the file's
    path; one to a file that does not exist is a warning (so the strict build fails, as
    for a broken link between pages)."""
    import importlib.util
    import logging
    from types import SimpleNamespace

    spec = importlib.util.spec_from_file_location("repo_links", ROOT / "docs_hooks" / "repo_links.py")
    assert spec and spec.loader
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    config = SimpleNamespace(docs_dir=str(ROOT / "docs"), config_file_path=str(ROOT / "mkdocs.yml"))
    page = SimpleNamespace(file=SimpleNamespace(src_path="how-to/reproduce.md", src_uri="how-to/reproduce.md"))
    with caplog.at_level(logging.WARNING, logger="mkdocs.hooks.repo_links"):
        out = hook.on_page_markdown(
            "[the script](../../bench/reproduce.py), [gone](../../bench/no-such-script.py), [a page](run.md)\n"
            "```\n[in code](../../nowhere.py)\n```\n",
            page, config, None,
        )
    assert "the script (`bench/reproduce.py`)" in out
    assert "[a page](run.md)" in out and "[in code](../../nowhere.py)" in out
    assert [r.getMessage() for r in caplog.records if "no-such-script.py" in r.getMessage()]
    assert not [r for r in caplog.records if "nowhere.py" in r.getMessage()]


README = ROOT / "README.md"


def test_readme_is_a_short_front_door() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    assert not re.search(r"\bissues?\s*#?\d+|\bsession\b", text, re.IGNORECASE), "README names an issue or a session"
    commands = [line.strip() for line in text.splitlines() if line.startswith("    python3 -m venv")]
    assert commands[0].endswith("pip install -e . && dgdrf run")
    assert "pip install -e '.[test]' && pytest" in commands[1]


def test_ci_runs_exactly_the_readme_test_command() -> None:
    text = README.read_text(encoding="utf-8")
    test_command = [line.strip() for line in text.splitlines() if line.startswith("    python3 -m venv")][1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test_command.replace("python3 -m venv .venv && ", "") in ci.replace("python3 -m venv .venv && ", "")


#: a pointer to a section by its heading: `README, "Heading"`, `docs/x.md "Heading"`
_SECTION_POINTER = re.compile(r"(?P<file>[\w./-]*\.md|README)\b,?\s*\(?[\"“](?P<heading>[A-Z][^\"”\n]{2,70})[\"”]")


def test_every_pointer_to_a_section_finds_its_heading() -> None:
    """A file that sends the reader to a section of another by its heading (README,
    "Jobs, constraints and weights") names a heading that is there: renamed or moved
    sections left such pointers behind once. Lab notes and recorded results are history
    and may point at what was."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    broken = []
    for name in files:
        if name.startswith(("docs/notes/", "bench/results/")) or name == "tests/test_docs.py" or not name.endswith((".md", ".py", ".toml", ".yml", ".yaml", ".pyx", ".cfg")):
            continue
        text = (ROOT / name).read_text(encoding="utf-8", errors="replace")
        for m in _SECTION_POINTER.finditer(text):
            target = "README.md" if m["file"] == "README" else m["file"]
            path = ROOT / target
            if not path.is_file():
                path = (ROOT / name).parent / target
            if not path.is_file():
                broken.append(f"{name}: {target} (no such file), {m['heading']!r}")
                continue
            text = path.read_text(encoding="utf-8")  # headings, and a list's bold lead-ins
            headings = [x.strip() for found in re.findall(r"^#+\s+(.*)$|^\s*- \*\*(.*?)\*\*", text, re.MULTILINE) for x in found if x]
            if not any(h.startswith(m["heading"]) for h in headings):
                broken.append(f"{name}: {target} has no heading {m['heading']!r}")
    assert broken == [], "\n".join(broken)
