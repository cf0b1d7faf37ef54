"""dgdrf: a peer-to-peer distributed scheduler emulator for multi-resource fair allocation.

The primary spec is Östman (2017), "Distributed Dominant Resource Fairness using Gradient
Overlay". docs/ARCHITECTURE.md gives the layering, model (pure) -> runtime -> overlay ->
nodes -> policies -> emulation/bench/cli; docs/EXTENDING.md where new things go.
"""

__version__ = "0.1.0"

from dgdrf.build_info import install_guard as _install_guard

_install_guard()  # compiled modules built from other sources are not used (build_info.py)
