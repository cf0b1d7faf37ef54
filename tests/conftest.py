"""Shared fixtures: the ORACLES.md instances as scenarios; how many workers ``-n auto``
starts."""

from __future__ import annotations

import os

import pytest

from dgdrf.model.scenario import build_scenario


@pytest.fixture(scope="session", autouse=True)
def _temporary_files_in_a_directory_of_the_session(tmp_path_factory: pytest.TempPathFactory):
    """What the suite's code and its processes put in the system's temporary directory
    (a cluster's logs and keys, Dask's scratch space, browser profiles) goes into one
    directory of this worker's session instead, emptied when the session ends (within
    pytest's own base directory, which pytest rotates): the suite leaves nothing behind
    in /tmp."""
    import shutil
    import tempfile

    here = tmp_path_factory.mktemp("tmp", numbered=False)
    before = (tempfile.tempdir, os.environ.get("TMPDIR"))
    tempfile.tempdir = str(here)
    os.environ["TMPDIR"] = str(here)  # the processes the tests start
    yield here
    tempfile.tempdir = before[0]
    if before[1] is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before[1]
    for entry in here.iterdir():
        if entry.name.startswith("pymp-"):
            continue  # multiprocessing's own, which it removes at exit (after this)
        if entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (README's test command): one worker more than the cores this process may
    use. The clusters of processes the suite starts wait on the wall clock much of their
    time, and a third worker on two cores keeps the cores busy meanwhile (the default
    suite on 2 cores, one right after the other: 329 s on 2 workers, 271 s on 3;
    bench/suite_time.py, recorded in bench/results/suite-time.txt)."""
    return len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) + 1


@pytest.fixture
def oracle1():
    """ORACLES.md 1: DRF paper, one server <9 CPU, 18 GB>, A <1, 4>, B <3, 1>."""
    return build_scenario(["cpu", "memory"], [("S", [9, 18])], [("A", [1, 4]), ("B", [3, 1])], name="oracle1")


@pytest.fixture
def oracle2():
    """ORACLES.md 2: <28 CPU, 56 GB>, A <1, 2>, B <1, 4>."""
    return build_scenario(["cpu", "memory"], [("S", [28, 56])], [("A", [1, 2]), ("B", [1, 4])], name="oracle2")


@pytest.fixture
def oracle3():
    """ORACLES.md 3: S1 <1.2, 1.2>, S2 <1, 1>, U1 <1, 1>, U2 <0.1, 0.1> (thesis table 3.1)."""
    return build_scenario(["cpu", "memory"], [("S1", [1.2, 1.2]), ("S2", [1, 1])], [("U1", [1, 1]), ("U2", [0.1, 0.1])], name="oracle3")


@pytest.fixture
def oracle5():
    """ORACLES.md 5: Ru et al. 3-D DRF, one pool <24, 36, 54>."""
    return build_scenario(["cpu", "memory", "disk"], [("P", [24, 36, 54])], [("a", [2, 4, 3]), ("b", [3, 2, 6]), ("c", [1, 3, 6])], name="oracle5")
