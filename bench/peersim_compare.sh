#!/usr/bin/env bash
# dgdrf against PeerSim (the field's reference simulator) on the same gossip workloads:
# the workspace's anchor kit (../shared/anchors/peersim/compare.sh: PeerSim, then
# `dgdrf overlay`, one after the other, and the ratio of their wall times) on Cyclon and
# push-sum at 1,000, 10,000 and 100,000 nodes. Prints compare.sh's output verbatim, one
# block per workload, for bench/results/PERFORMANCE.md.
#
#   bench/peersim_compare.sh > bench/results/peersim-compare.txt
#   ANCHOR=/path/to/anchors/peersim SIZES="1000 10000" bench/peersim_compare.sh
#   SIZES=10000 REPEAT=5 bench/peersim_compare.sh
#
# REPEAT (default 1): run each workload that many times, one after the other, and end
# with each workload's median ratio and range: on a shared machine one run's ratio moves
# with both sides' noise.
#
# Needs java and the project's virtual environment active (dgdrf on PATH). Run it with
# nothing else on the machine: both sides are timed by the wall clock.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
anchor="${ANCHOR:-$here/../../shared/anchors/peersim}"
[ -x "$anchor/compare.sh" ] || { echo "peersim_compare.sh: no $anchor/compare.sh (set ANCHOR)" >&2; exit 2; }
sizes="${SIZES:-1000 10000 100000}"
repeat="${REPEAT:-1}"
ratios="$(mktemp)"
trap 'rm -f "$ratios"' EXIT
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(python3 -c 'from dgdrf.build_info import core; print(core())') core, git $(git -C "$here" rev-parse --short HEAD)$(git -C "$here" diff --quiet || echo '+dirty'), $(nproc) cpus"
for n in $sizes; do
    for workload in "cyclon $n 100 20 8" "pushsum $n 30"; do
        for _ in $(seq "$repeat"); do
            echo
            echo "\$ compare.sh $workload"
            out="$("$anchor/compare.sh" $workload 2>/dev/null)"
            printf '%s\n' "$out"
            printf '%s\t%s\n' "$workload" "$(printf '%s\n' "$out" | sed -n 's/.*dgdrf_wall = \([0-9.]*\).*/\1/p')" >> "$ratios"
        done
    done
done
if [ "$repeat" -gt 1 ]; then
    echo
    python3 - "$ratios" <<'PY'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    w, r = line.rstrip("\n").split("\t")
    by.setdefault(w, []).append(float(r))
for w, rs in by.items():
    print(f"{w}: ratio median {statistics.median(rs):.3f}, range {min(rs):.3f}-{max(rs):.3f} over {len(rs)} runs")
PY
fi
