"""Where a run's wall time goes, the compiled core included: py-spy samples a ``dgdrf
run`` with native frames (a Cython function appears under its .py source's name), and
this script groups the samples. Printed: the share of samples spent inside each phase
(start-up: imports, the command line, the scenario; the event loop; after it), then
within the event loop, inclusive and self, per function and per dgdrf module.

    pip install py-spy   # a sampling profiler; not a dependency of dgdrf
    python bench/profile_run.py -- --scenario configs/google-finite-1000x200.toml --policy dgdrf --max-time 600 \
        > bench/results/profile-google-finite-1000x200-dgdrf.txt

Everything after ``--`` is ``dgdrf run``'s flags (``--quiet`` is added). py-spy reads the
process from outside (ptrace): it needs the right to, as root or with ptrace allowed.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the frame of the emulation's event loop: what is under it is the run itself
LOOP = "VirtualClock__run_heap"


def frame_name(frame: str) -> tuple[str, str]:
    """(function, file) of one py-spy frame, "func (path/file.py:line)"."""
    m = re.match(r"(.*?) \((.*?)(?::\d+)?\)$", frame)
    if m is None:
        return frame, ""
    return m.group(1), m.group(2).rsplit("/", 1)[-1]


def module_of(frame: str) -> str:
    """The dgdrf module a frame runs in (dgdrf/overlay/gradient.py -> overlay.gradient),
    or where else: python, numpy, C (the interpreter and libraries without a source)."""
    m = re.search(r"\((?:.*/)?dgdrf/([\w/]+)\.(?:py|pxd)", frame)
    if m is not None:
        return m.group(1).replace("/", ".")
    if ".py" in frame:
        return "numpy" if "numpy" in frame else "python (stdlib, other packages)"
    return "C (interpreter, libraries)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=int, default=200, help="samples per second (default 200)")
    parser.add_argument("--top", type=int, default=25, help="functions listed (default 25)")
    parser.add_argument("run", nargs=argparse.REMAINDER, help="-- then dgdrf run's flags")
    args = parser.parse_args()
    flags = [a for a in args.run if a != "--"]
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(spy).exists():
        sys.exit("profile_run.py: py-spy is needed: pip install py-spy")
    with tempfile.TemporaryDirectory() as tmp:
        folded = Path(tmp) / "run.folded"
        cmd = [spy, "record", "--native", "--format", "raw", "-r", str(args.rate), "-o", str(folded), "--", sys.executable, "-m", "dgdrf", "run", *flags, "--quiet"]
        subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        stacks = []
        for line in folded.read_text().splitlines():
            stack, n = line.rsplit(" ", 1)
            stacks.append((stack.split(";"), int(n)))
    total = sum(n for _, n in stacks)
    in_loop = [(frames[next(k for k, f in enumerate(frames) if LOOP in f) + 1 :], n) for frames, n in stacks if any(LOOP in f for f in frames)]
    loop_total = sum(n for _, n in in_loop)
    from dgdrf.build_info import core

    print(f"# python bench/profile_run.py -- {' '.join(flags)}")
    print(f"# {core()} core, {total:,} samples at {args.rate}/s (py-spy --native)\n")
    print(f"event loop ({LOOP}): {loop_total / total:6.1%} of the samples; start-up and the rest: {1 - loop_total / total:6.1%}\n")
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    modules: Counter[str] = Counter()
    for frames, n in in_loop:
        if not frames:
            continue
        names = {"{} ({})".format(*frame_name(f)) for f in frames}
        for name in names:
            inclusive[name] += n
        own["{} ({})".format(*frame_name(frames[-1]))] += n
        modules[module_of(next((f for f in reversed(frames) if "dgdrf/" in f), frames[-1]))] += n
    print(f"## Within the event loop ({loop_total:,} samples = 100 %)\n")
    print("### By dgdrf module: the innermost dgdrf frame of each sample (its callees outside dgdrf count with it)\n")
    for name, n in modules.most_common():
        print(f"{n / loop_total:6.1%}  {name}")
    print(f"\n### Functions, inclusive (the sample is in it or what it calls), top {args.top}\n")
    for name, n in inclusive.most_common(args.top):
        print(f"{n / loop_total:6.1%}  {name}")
    print(f"\n### Functions, self (the sample's innermost frame), top {args.top}\n")
    for name, n in own.most_common(args.top):
        print(f"{n / loop_total:6.1%}  {name}")


if __name__ == "__main__":
    main()
