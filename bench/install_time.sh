#!/usr/bin/env bash
# How long README's two commands take a new user: a fresh clone of this checkout's HEAD
# in a scratch directory, README's first command as written (install, build the compiled
# core, `dgdrf run`), then the second's install (`pip install -e '.[test]'`, which reuses
# the first's build) without its test run (the suite's own time: bench/suite_time.py).
#
#   bench/install_time.sh > bench/results/install-time.txt
#
# Wall times of this machine: they vary with its load and with what pip has cached.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
git clone -q "$here" "$scratch/dgdrf"
cd "$scratch/dgdrf"
first="$(grep -m1 '^    python3 -m venv .venv && . .venv/bin/activate && pip install -e \. && dgdrf run$' README.md | sed 's/^ *//')"
second_install="$(grep -m1 "^    python3 -m venv .venv .*pip install -e '.\[test\]'" README.md | sed 's/^ *//; s/ && pytest.*//')"
[ -n "$first" ] && [ -n "$second_install" ] || { echo "install_time.sh: README's two commands not found" >&2; exit 2; }
echo "# $(date -u +%Y-%m-%dT%H:%MZ), git $(git rev-parse --short HEAD), $(nproc) cpus, load $(cut -d' ' -f1 /proc/loadavg)"
t0=$(date +%s.%N)
bash -c "$first" > run.out 2> install.err
t1=$(date +%s.%N)
grep -q "stopped because" run.out || { echo "install_time.sh: dgdrf run printed no table" >&2; exit 1; }
bash -c "$second_install" > /dev/null 2>> install.err
t2=$(date +%s.%N)
reused=$(ls dgdrf/*/*.so 2>/dev/null | wc -l)
printf "first command (%s): %.0f s\n" "$first" "$(echo "$t1 - $t0" | bc)"
printf "second command's install (%s): %.0f s\n" "$second_install" "$(echo "$t2 - $t1" | bc)"
echo "compiled modules in the checkout after both: $reused"
