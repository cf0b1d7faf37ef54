"""Process hygiene shared by everything that starts child processes (sweeps, clusters)."""

from __future__ import annotations

import ctypes
import signal

_PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """Linux: have the kernel send ``sig`` to this process when its parent dies, so no
    child outlives whatever started it (however that died). A no-op elsewhere."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, sig)
    except OSError:
        pass
