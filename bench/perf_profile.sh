#!/usr/bin/env bash
# Where a dgdrf run's wall time goes, sampled: `perf record -e cpu-clock` (this VM has no
# hardware counters) over one `dgdrf overlay` or `dgdrf run`, the whole process (start-up
# and end-of-run figures included: make the run long enough that its loop dominates), and
# the functions with the most samples in their own code (self time). Unlike callgrind's
# instruction counts this sees cache misses: a load that misses is slow, and its samples
# land on the instruction after it. ANNOTATE names functions whose hottest instructions to
# print (perf annotate), to see which load that is. Timings move with the machine's load;
# compare shares within one profile, and profiles of two checkouts run one after the other.
#
#   bench/perf_profile.sh > bench/results/perf-pushsum-10k.txt
#   ARGS="overlay --protocol cyclon --nodes 10000 --cycles 100" TOP=20 bench/perf_profile.sh
#   ANNOTATE="__pyx_f_5dgdrf_7runtime_5actor_8Periodic_fire" bench/perf_profile.sh
#
# ARGS: the dgdrf command line (default: push-sum on 10,000 nodes for 60 cycles); TOP: how
# many functions (default 25). Needs perf (Debian: linux-perf) and the project's virtual
# environment active. Under a minute for the default.
set -euo pipefail
command -v perf >/dev/null || { echo "perf_profile.sh: perf is not installed" >&2; exit 2; }
read -r -a args <<< "${ARGS:-overlay --protocol pushsum --nodes 10000 --cycles 60 --metrics-every 60 --seed 1}"
top="${TOP:-25}"
pkg="$(python3 -c 'import dgdrf, os; print(os.path.dirname(dgdrf.__file__))')"  # the checkout that runs
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "# ARGS=\"${args[*]}\" bench/perf_profile.sh: $(date -u +%Y-%m-%dT%H:%MZ), $(python3 -c 'from dgdrf.build_info import core; print(core())') core, git $(git -C "$pkg" rev-parse --short HEAD)$(git -C "$pkg" diff --quiet HEAD -- . || echo +dirty), $(perf --version)"
perf record -q -e cpu-clock -F 4000 -o "$tmp/perf.data" dgdrf "${args[@]}" --quiet --json "$tmp/run.json" >/dev/null 2>&1
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d=d[0] if isinstance(d,list) else d; print(f\"loop wall_s {d['wall_s']:.2f}, {d['messages']['total']:,} messages\")" "$tmp/run.json"
echo
echo "self time  function"
perf report -i "$tmp/perf.data" --no-children --sort symbol --stdio > "$tmp/report.txt" 2>/dev/null
grep -E '^ +[0-9.]+%' "$tmp/report.txt" | awk -v top="$top" 'NR <= top {printf "%8s   %s\n", $1, $3}'
for fn in ${ANNOTATE:-}; do
    echo
    echo "perf annotate $fn: its three hottest instructions (share of the function's samples), then the code before the hottest"
    perf annotate -i "$tmp/perf.data" --stdio -s "$fn" > "$tmp/annotate.txt" 2>/dev/null || true
    grep -E '^ +[0-9]+\.[0-9]+ :' "$tmp/annotate.txt" | sort -rn > "$tmp/hot.txt" || true
    awk 'NR <= 3' "$tmp/hot.txt"
    hot="$(awk 'NR == 1 {print $3}' "$tmp/hot.txt")"
    if [ -n "$hot" ]; then
        grep -B10 -- " $hot" "$tmp/annotate.txt" | awk 'NR <= 11' || true
    fi
done
