"""Structured logs (structlog) to stderr; quiet unless asked (``dgdrf run -v``).

Logs are for following a run, never for results: results go to the RunResult / JSON.
"""

from __future__ import annotations

import logging
import sys

import structlog


def configure(verbose: bool = False) -> None:
    """Key-value lines on stderr at INFO with ``verbose``, WARNING otherwise."""
    structlog.configure(
        processors=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="%H:%M:%S"), structlog.dev.ConsoleRenderer(colors=False)],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO if verbose else logging.WARNING),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


def get_logger(name: str) -> structlog.typing.FilteringBoundLogger:
    """A logger; quiet (warnings only) unless :func:`configure` asked for more."""
    if not structlog.is_configured():
        configure(verbose=False)
    return structlog.get_logger(name)
