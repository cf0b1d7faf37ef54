"""Build step: the emulator's hot modules compiled by Cython from the same .py sources.

Which modules, and why those: ``dgdrf/build_info.py``. The .py files stay the reference:
an extension module is imported in their place when it exists, and the results are the
same either way (tests/test_compiled_core.py). ``DGDRF_PURE=1`` at install time builds
nothing; a machine without a C compiler installs the pure modules (extensions optional).
"""

from __future__ import annotations

import glob
import os
import shutil
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dgdrf.build_info import COMPILED_MODULES, write_record  # noqa: E402  (stdlib only)


def extensions() -> list:
    if os.environ.get("DGDRF_PURE", "") not in ("", "0"):
        return []
    from Cython.Build import cythonize

    # the digests of the sources compiled, shipped with the extensions: the import guard
    # (build_info.StaleExtensionGuard) tells an edited source from a wheel's file times
    here = os.path.dirname(os.path.abspath(__file__))
    write_record(os.path.join(here, "dgdrf"))
    project_pxd = glob.glob(os.path.join(here, "dgdrf", "**", "*.pxd"), recursive=True)
    stale, fresh = [], []
    for name in COMPILED_MODULES:
        py = name.replace(".", "/") + ".py"
        c_file = py[:-3] + ".c"
        # C that Cython made of this very source (and of the project's .pxd files) is used
        # as it is: Cython's own dependency check counts its freshly installed headers
        # (pip's isolated build) and made all of it again at every install
        if all(_newer(os.path.join(here, c_file), dep) for dep in [os.path.join(here, py), *project_pxd]):
            fresh.append(Extension(name, [c_file]))
        else:
            stale.append(py)
    modules = fresh + cythonize(
        stale,
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


class ReusingBuildExt(build_ext):
    """build_ext that reuses an extension this checkout already holds, built from the C
    file Cython made of the current source (it is newer than that C file, which is newer
    than its .py): pip builds an editable install in a fresh directory each time, so the
    README's second command (``pip install -e '.[test]'`` after ``pip install -e .``)
    compiled the whole core again. Anything else is compiled as usual."""

    def build_extension(self, ext) -> None:  # type: ignore[no-untyped-def]
        here = os.path.dirname(os.path.abspath(__file__))
        built = os.path.join(here, *ext.name.split(".")) + sysconfig.get_config_var("EXT_SUFFIX")
        c_file = next((src for src in ext.sources if src.endswith(".c")), None)
        target = self.get_ext_fullpath(ext.name)
        if c_file is not None and os.path.abspath(built) != os.path.abspath(target) and _newer(built, os.path.join(here, c_file)) and _newer(os.path.join(here, c_file), os.path.join(here, c_file[:-2] + ".py")):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(built, target)
            print(f"reusing {os.path.relpath(built, here)} (built from the current source)")
            return
        super().build_extension(ext)


def _newer(a: str, b: str) -> bool:
    """``a`` exists and is at least as new as ``b`` (which exists)."""
    return os.path.exists(a) and os.path.exists(b) and os.path.getmtime(a) >= os.path.getmtime(b)


setup(ext_modules=extensions(), cmdclass={"build_ext": ReusingBuildExt})
