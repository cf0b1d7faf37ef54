#!/usr/bin/env bash
# The compiled core against pure Python (DGDRF_PURE=1 at run time imports every .py file)
# on the same runs, one right after the other: bare gossip (dgdrf overlay, Cyclon and
# push-sum on 5,000 nodes) and the gradient policies (dgdrf run, 1,000 servers x 79 users,
# a Google cell's proportion, 15 simulated seconds). Prints each run's loop wall time
# (wall_s of its --json) and the ratio; the JSON outputs go to OUT (default a temp dir).
#
#   bench/pure_vs_compiled.sh > bench/results/pure-vs-compiled.txt
set -euo pipefail
out="${1:-$(mktemp -d)}"
echo "# $(date -u +%Y-%m-%dT%H:%MZ), git $(git -C "$(dirname "$0")" rev-parse --short HEAD), $(nproc) cpus, load $(cut -d' ' -f1 /proc/loadavg)"
runs=(
  "cyclon5000|dgdrf overlay --protocol cyclon --nodes 5000 --cycles 20 --view-size 20 --shuffle-length 8"
  "pushsum5000|dgdrf overlay --protocol pushsum --nodes 5000 --cycles 30"
  "dgdrf1000|dgdrf run --servers 1000 --users 79 --policy dgdrf --neighbors 4 --max-time 15 --quiet"
  "pdgdrf1000|dgdrf run --servers 1000 --users 79 --policy pdgdrf --neighbors 4 --max-time 15 --quiet"
)
wall() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d=d[0] if isinstance(d,list) else d; print(f\"{d['wall_s']:.2f}\")" "$1"; }
printf "%-12s %10s %10s %8s\n" run compiled_s pure_s pure/compiled
for r in "${runs[@]}"; do
  name="${r%%|*}"; cmd="${r#*|}"
  DGDRF_PURE=0 $cmd --json "$out/$name-compiled.json" > /dev/null
  DGDRF_PURE=1 $cmd --json "$out/$name-pure.json" > /dev/null 2>&1
  c=$(wall "$out/$name-compiled.json"); p=$(wall "$out/$name-pure.json")
  printf "%-12s %10s %10s %8s\n" "$name" "$c" "$p" "$(python3 -c "print(f'{$p/$c:.2f}x')")"
done
