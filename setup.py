"""Build step: the emulator's hot modules compiled by Cython from the same .py sources.

Which modules, and why those: ``dgdrf/build_info.py``. The .py files stay the reference:
an extension module is imported in their place when it exists, and the results are the
same either way (tests/test_compiled_core.py). ``DGDRF_PURE=1`` at install time builds
nothing; a machine without a C compiler installs the pure modules (extensions optional).
"""

from __future__ import annotations

import os
import sys

from setuptools import setup

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dgdrf.build_info import COMPILED_MODULES, write_record  # noqa: E402  (stdlib only)


def extensions() -> list:
    if os.environ.get("DGDRF_PURE", "") not in ("", "0"):
        return []
    from Cython.Build import cythonize

    # the digests of the sources compiled, shipped with the extensions: the import guard
    # (build_info.StaleExtensionGuard) tells an edited source from a wheel's file times
    write_record(os.path.join(os.path.dirname(os.path.abspath(__file__)), "dgdrf"))
    modules = cythonize(
        [name.replace(".", "/") + ".py" for name in COMPILED_MODULES],
        language_level=3,
        # Python semantics everywhere: annotations stay hints (no C int or double
        # arithmetic where Python has int and float), so the compiled modules compute
        # exactly what the .py files do
        compiler_directives={"annotation_typing": False, "binding": True},
        quiet=True,
    )
    for ext in modules:
        ext.optional = True  # no compiler (python:*-slim images): the module stays pure Python
    return modules


setup(ext_modules=extensions())
