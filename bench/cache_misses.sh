#!/usr/bin/env bash
# Where a dgdrf run's cache misses fall: callgrind (valgrind) with its cache simulation
# counts, only inside VirtualClock.run (the message loop, the nodes' start at time 0
# included), the instructions, first-level data misses (D1mr + D1mw) and last-level data
# misses (DLmr + DLmw) of one `dgdrf overlay` or `dgdrf run`, and prints them per message,
# in total and for each function that has at least 1 % of the last-level misses (self
# cost: the function's own code, not what it calls). The simulated caches are this
# machine's (AMD EPYC here: D1 64 KiB 2-way, LL 32 MiB 16-way; set D1 and LL to change).
# Simulated counts do not depend on what else the machine runs, unlike wall time, but
# they model the caches, they do not measure them (this VM exposes no cache counters).
#
#   bench/cache_misses.sh > bench/results/cache-misses-cyclon-10k.txt
#   ARGS="overlay --protocol pushsum --nodes 10000 --cycles 10" bench/cache_misses.sh
#
# ARGS: the dgdrf command line (default: Cyclon on 10,000 nodes, c = 20, l = 8, 20 cycles).
# Needs valgrind, the project's virtual environment active and the compiled core. About
# five minutes for the default.
set -euo pipefail
read -r -a args <<< "${ARGS:-overlay --protocol cyclon --nodes 10000 --cycles 20 --view-size 20 --shuffle-length 8 --metrics-every 20 --seed 1}"
d1="${D1:-65536,2,64}" ll="${LL:-33554432,16,64}"
script=cache_misses.sh
. "$(dirname "${BASH_SOURCE[0]}")/callgrind_common.sh"
echo "# ARGS=\"${args[*]}\" bench/cache_misses.sh: $(date -u +%Y-%m-%dT%H:%MZ), compiled core, git $(git -C "$here" rev-parse --short HEAD), $(valgrind --version), PYTHONHASHSEED=$PYTHONHASHSEED, D1=$d1 LL=$ll"
valgrind --tool=callgrind --cache-sim=yes --D1="$d1" --LL="$ll" --toggle-collect="$loop" --callgrind-out-file="$tmp/cg.out" \
    dgdrf "${args[@]}" --quiet --json "$tmp/run.json" >/dev/null 2>&1
callgrind_annotate --auto=no --threshold=100 --show=Ir,D1mr,D1mw,DLmr,DLmw --sort=DLmr "$tmp/cg.out" > "$tmp/self.txt"
python3 - "$tmp/self.txt" "$tmp/run.json" <<'PY'
import json, re, sys

CELL = r"(?:[\d,]+\s+\(\s*[\d.]+%\)|\.)"  # a count and its share, or "." for none
LINE = re.compile(rf"^\s*((?:{CELL}\s+){{5}})(\S.*)$")


def counts(cells: str) -> list[int]:
    return [int(c.replace(",", "")) if c else 0 for c in re.findall(r"([\d,]+)\s+\(|(?<!\S)\.(?!\S)", cells)]


total, rows = None, []
for line in open(sys.argv[1]):
    m = LINE.match(line)
    if not m:
        continue
    vals, where = counts(m.group(1)), m.group(2)
    if "PROGRAM TOTALS" in where:
        total = vals
    elif total is not None:
        rows.append((where.rsplit(":", 1)[-1].split(" [")[0], vals))
run = json.load(open(sys.argv[2]))
run = run[0] if isinstance(run, list) else run
msgs = run["messages"]["total"]
ir, d1, ll = total[0], total[1] + total[2], total[3] + total[4]
print(f"{msgs:,} messages; a message: {ir / msgs:,.0f} instructions, {d1 / msgs:,.1f} first-level and {ll / msgs:,.2f} last-level data misses\n")
print(f"{'function (self cost)':<64} {'LL misses':>10} {'share':>7} {'D1 misses':>10} {'instr.':>8}   (per message)")
for fn, (i, r1, w1, rl, wl) in sorted(rows, key=lambda r: -(r[1][3] + r[1][4])):
    if rl + wl < ll / 100:
        break
    print(f"{fn[:64]:<64} {(rl + wl) / msgs:10.2f} {100 * (rl + wl) / ll:6.1f}% {(r1 + w1) / msgs:10.1f} {i / msgs:8.0f}")
PY
