# Sourced by the callgrind scripts (callgrind_profile.sh, cache_misses.sh,
# instructions_per_message.sh): what each needs before valgrind runs. Set `script` first.
#
# - valgrind and the compiled core are there (the loop is found by its C symbol);
# - $tmp, a scratch directory removed on exit; $here, bench/; $loop, the message loop's
#   C symbol, the only code whose instructions are counted;
# - PYTHONHASHSEED fixed (0 unless set; `random` salts as Python does by default): str
#   hashes are salted per process and dictionaries probe accordingly, so with salting the
#   same run's count moves a little (the dgdrf default: 33,608 and 33,623 a message,
#   33,619 at seed 0 every time: results/callgrind-dgdrf-100x20.txt, its last section).
command -v valgrind >/dev/null || { echo "$script: valgrind is not installed" >&2; exit 2; }
[ "$(python3 -c 'from dgdrf.build_info import core; print(core())')" = compiled ] || { echo "$script: needs the compiled core (pip install -e .)" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
loop='__pyx_pw_5dgdrf_7runtime_5clock_12VirtualClock_*run'  # Cython numbers the methods: the wildcard keeps up with new ones
export PYTHONHASHSEED="${PYTHONHASHSEED:-0}"
