"""Headless Chromium for the page tests (dgdrf/pages/browser.py): a test that needs it
is skipped, saying why, where there is none."""

from __future__ import annotations

from pathlib import Path

import pytest

from dgdrf.pages import browser
from dgdrf.pages.browser import drawn_figures

__all__ = ["click_point", "drawn_figures", "dump_dom", "live_dom", "screenshot"]


def _need() -> None:
    if browser.find_chromium() is None:
        pytest.skip(browser.MISSING)


def dump_dom(target: str | Path, budget_ms: int = 10_000) -> tuple[str, list[str]]:
    _need()
    return browser.dump_dom(target, budget_ms)


def live_dom(url: str, wait_s: float) -> tuple[str, list[str]]:
    _need()
    return browser.live_dom(url, wait_s)


def screenshot(target: str | Path, out: Path, width: int = 1400, height: int = 2400) -> None:
    _need()
    browser.screenshot(target, out, width, height)


def click_point(target: str | Path, figure: str, trace: str, point: int) -> tuple[list[str], list[str]]:
    _need()
    return browser.click_point(target, figure, trace, point)
