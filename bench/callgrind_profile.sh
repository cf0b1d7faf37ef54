#!/usr/bin/env bash
# Where a dgdrf run's instructions go, inclusive: callgrind (valgrind) counts instructions
# only inside VirtualClock.run (the message loop, the nodes' start at time 0 included) of
# one `dgdrf run` or `dgdrf overlay`, and prints the total, the messages, and each of
# dgdrf's own compiled functions with the share of the loop spent in it and below it.
# Instruction counts do not depend on what else the machine runs, unlike wall time.
#
#   bench/callgrind_profile.sh > bench/results/callgrind-dgdrf-100x20.txt
#   ARGS="overlay --protocol cyclon --nodes 1000 --cycles 20" bench/callgrind_profile.sh
#
# ARGS: the dgdrf command line (default: dgdrf on thesis-100x20 at P = 4 for 30 simulated
# seconds). Needs valgrind (callgrind_annotate comes with it), the project's virtual
# environment active and the compiled core. A minute or two for the default.
set -euo pipefail
read -r -a args <<< "${ARGS:-run --scenario configs/thesis-100x20.toml --policy dgdrf --neighbors 4 --max-time 30 --seed 1}"
script=callgrind_profile.sh
. "$(dirname "${BASH_SOURCE[0]}")/callgrind_common.sh"
echo "# ARGS=\"${args[*]}\" bench/callgrind_profile.sh: $(date -u +%Y-%m-%dT%H:%MZ), compiled core, git $(git -C "$here" rev-parse --short HEAD), $(valgrind --version), PYTHONHASHSEED=$PYTHONHASHSEED"
valgrind --tool=callgrind --toggle-collect="$loop" --callgrind-out-file="$tmp/cg.out" dgdrf "${args[@]}" --quiet --json "$tmp/run.json" >/dev/null 2>&1
callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$tmp/cg.out" > "$tmp/inclusive.txt"
python3 - "$tmp/inclusive.txt" "$tmp/run.json" <<'PY'
import json, re, sys

def demangle(fn: str) -> str:
    """Cython's __pyx_f_5dgdrf_7overlay_8gradient_8Gradient__merge -> overlay.gradient.Gradient._merge
    (length-prefixed names, then the function's own name)."""
    rest, parts = fn[len("__pyx_f_"):], []
    while (m := re.match(r"(\d+)", rest)):
        k = int(m.group(1))
        parts.append(rest[len(m.group(1)):len(m.group(1)) + k])
        rest = rest[len(m.group(1)) + k:].lstrip("_") if not rest[len(m.group(1)) + k:].startswith("__") else rest[len(m.group(1)) + k + 1:]
    return ".".join(parts[1:] + ([rest] if rest else []))


best: dict[str, int] = {}  # a function's largest inclusive count (inlined pieces are listed apart)
for line in open(sys.argv[1]):
    m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(\S+):(\S+)", line)
    if m and re.search(r"(^|/)dgdrf/", m.group(2)) and m.group(3).startswith("__pyx_f_5dgdrf_"):
        n = int(m.group(1).replace(",", ""))
        best[m.group(3)] = max(best.get(m.group(3), 0), n)
total = best.pop("__pyx_f_5dgdrf_7runtime_5clock_12VirtualClock__run_heap")
run = json.load(open(sys.argv[2]))
run = run[0] if isinstance(run, list) else run
msgs = run["messages"]["total"]
print(f"{msgs:,} messages, {total:,} instructions in the loop: {total / msgs:,.0f} a message\n")
print(f"{'function (inclusive: itself and what it calls)':<72} {'share':>7} {'per message':>12}")
for fn, n in sorted(best.items(), key=lambda kv: -kv[1]):
    if n < total / 100:
        break
    print(f"{demangle(fn):<72} {100 * n / total:6.1f}% {n / msgs:12,.0f}")
PY
