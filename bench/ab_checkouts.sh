#!/usr/bin/env bash
# Two checkouts of dgdrf on the same runs, alternated so the machine's load falls on both
# alike: each run's loop wall time (wall_s of its --json) from checkout A and checkout B,
# compiled and pure Python (DGDRF_PURE=1), REPEAT times, and the median B/A ratio. Each
# checkout needs its own built venv (python3 -m venv .venv && .venv/bin/pip install -e .).
# For a change to a hot path (the message loop): was it free?
#
#   A=/tmp/old-checkout [B=.] [REPEAT=3] bench/ab_checkouts.sh > bench/results/ab-NAME.txt
#   A=/tmp/old-checkout RUNS="cyclon10000 pushsum10000" CORES=compiled bench/ab_checkouts.sh
#
# RUNS: which runs (default: cyclon5000 pushsum5000 dgdrf1000; also cyclon10000 and
# pushsum10000, compare.sh's 10k gossip workloads, and grid100dgdrf, grid100pdgdrf,
# grid200dgdrf and grid200pdgdrf, runs of the thesis grid to saturation at P = 4 on each of its
# two clusters: 1.5, 2, 7 and 12 minutes before issue 34; and google1000dgdrf, the first 600
# simulated seconds of the 1,000-server Google cell under dgdrf: per simulated hour, wall_s x 6);
# CORES: compiled, pure or both (default).
set -euo pipefail
a="${A:?set A to the other checkout (built)}"; b="${B:-.}"; repeat="${REPEAT:-3}"
want="${RUNS:-cyclon5000 pushsum5000 dgdrf1000}"; cores="${CORES:-compiled pure}"
out="$(mktemp -d)"
rev() { echo "$(git -C "$1" rev-parse --short HEAD)$(git -C "$1" diff --quiet HEAD -- . || echo +dirty)"; }  # +dirty: the work tree differs from HEAD
echo "# $(date -u +%Y-%m-%dT%H:%MZ), A = $(rev "$a"), B = $(rev "$b"), $(nproc) cpus, load $(cut -d' ' -f1 /proc/loadavg), $repeat alternations"
runs=(
  "cyclon5000|overlay --protocol cyclon --nodes 5000 --cycles 20 --view-size 20 --shuffle-length 8"
  "pushsum5000|overlay --protocol pushsum --nodes 5000 --cycles 30"
  "dgdrf1000|run --servers 1000 --users 79 --policy dgdrf --neighbors 4 --max-time 15 --quiet"
  "cyclon10000|overlay --protocol cyclon --nodes 10000 --cycles 100 --view-size 20 --shuffle-length 8 --metrics-every 100"
  "pushsum10000|overlay --protocol pushsum --nodes 10000 --cycles 30 --metrics-every 30"
  "grid100dgdrf|run --scenario configs/thesis-100x20.toml --policy dgdrf --neighbors 4 --seed 1 --quiet"
  "grid100pdgdrf|run --scenario configs/thesis-100x20.toml --policy pdgdrf --neighbors 4 --seed 1 --quiet"
  "grid200dgdrf|run --scenario configs/thesis-200x40.toml --policy dgdrf --neighbors 4 --seed 1 --quiet"
  "grid200pdgdrf|run --scenario configs/thesis-200x40.toml --policy pdgdrf --neighbors 4 --seed 1 --quiet"
  "google1000dgdrf|run --scenario configs/google-finite-1000x200.toml --policy dgdrf --max-time 600 --quiet"
)
# the loop's wall time; an overlay run's nodes' start (start_wall_s, timed apart since issue 34's
# fourth part) added back, so both checkouts' figures cover the same events
wall() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d=d[0] if isinstance(d,list) else d; print(d['wall_s'] + d.get('start_wall_s', 0.0))" "$1"; }
median() { python3 -c "import statistics,sys; print(f'{statistics.median(map(float, sys.argv[1:])):.3f}')" "$@"; }
printf "%-12s %-8s %24s %24s %8s\n" run core "A wall_s (each)" "B wall_s (each)" "B/A"
for r in "${runs[@]}"; do
  name="${r%%|*}"; cmd="${r#*|}"
  [[ " $want " == *" $name "* ]] || continue
  for core in $cores; do
    case "$core" in compiled) pure=0 ;; pure) pure=1 ;; *) echo "ab_checkouts.sh: CORES takes compiled and pure, got $core" >&2; exit 2 ;; esac
    as=(); bs=()
    for i in $(seq "$repeat"); do
      (cd "$a" && DGDRF_PURE=$pure .venv/bin/python -m dgdrf $cmd --json "$out/a.json" > /dev/null 2>&1); as+=("$(wall "$out/a.json")")
      (cd "$b" && DGDRF_PURE=$pure .venv/bin/python -m dgdrf $cmd --json "$out/b.json" > /dev/null 2>&1); bs+=("$(wall "$out/b.json")")
    done
    ma=$(median "${as[@]}"); mb=$(median "${bs[@]}")
    fmt() { python3 -c "import sys; print(' '.join(f'{float(x):.2f}' for x in sys.argv[1:]))" "$@"; }
    printf "%-12s %-8s %24s %24s %8s\n" "$name" "$([ $pure = 1 ] && echo pure || echo compiled)" "$(fmt "${as[@]}")" "$(fmt "${bs[@]}")" "$(python3 -c "print(f'{$mb/$ma:.3f}')")"
  done
done
