"""The objects a run is built from, kept out of the cyclic garbage collector's scans.

A run builds its world first (10^4 actors, their roles, views and generators; a trace's
tasks) and then runs events that make and drop short-lived objects. Python's collector
scans every tracked object at each full collection, which the new objects trigger from
time to time: at 10^4 nodes one such scan of the world costs as much as a few protocol
periods, and it finds nothing, because the world lives until the run ends.
:func:`objects_frozen` moves what exists into the collector's permanent generation
(:func:`gc.freeze`) for the run's events and back (:func:`gc.unfreeze`) when they stop,
so that a discarded world is collected as before. It changes no result: reference
counting frees what it frees either way, and the collector reclaims only unreachable
cycles, which no event can see.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def objects_frozen() -> Iterator[None]:
    """Run the block with every object made so far out of the collector's scans.

    Nested, or inside a caller's own :func:`gc.freeze`, the outermost freeze decides:
    objects leave the permanent generation only where it was empty on entry."""
    outermost = gc.get_freeze_count() == 0
    gc.freeze()
    try:
        yield
    finally:
        if outermost:
            gc.unfreeze()
