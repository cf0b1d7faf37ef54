"""Structured logs (structlog) to stderr; quiet unless asked (``dgdrf run -v``); JSON lines
when stderr is not a terminal.

Logs are for following a run, never for results: results go to the RunResult / JSON.
"""

from __future__ import annotations

import logging
import sys

import structlog


class _StderrLogger:
    """Writes each line to whatever ``sys.stderr`` is at that moment (not the stream
    that was current when logging was configured, which a test runner may have closed
    since), and never lets a failed write escape into the code that logged."""

    def msg(self, message: str) -> None:
        try:
            print(message, file=sys.stderr, flush=True)
        except (ValueError, OSError):
            pass

    debug = info = warning = warn = error = critical = exception = fatal = failure = err = msg


class _StderrLoggerFactory:
    def __call__(self, *args: object) -> _StderrLogger:
        return _StderrLogger()


def configure(verbose: bool = False, json: bool | None = None) -> None:
    """Lines on stderr at INFO with ``verbose``, WARNING otherwise: key-value text on a
    terminal, one JSON object per line otherwise (``json`` forces either), which is what
    a log collector of a real cluster wants from ``dgdrf node``."""
    as_json = (not sys.stderr.isatty()) if json is None else json
    renderer = structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso" if as_json else "%H:%M:%S"),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO if verbose else logging.WARNING),
        logger_factory=_StderrLoggerFactory(),
        cache_logger_on_first_use=False,
    )


def get_logger(name: str) -> structlog.typing.FilteringBoundLogger:
    """A logger; quiet (warnings only) unless :func:`configure` asked for more."""
    if not structlog.is_configured():
        configure(verbose=False)
    return structlog.get_logger(name)
