#!/usr/bin/env bash
# Where a Cyclon message's instructions go in the compiled build: callgrind (valgrind)
# counts instructions only inside VirtualClock.run (the message loop, with the nodes'
# start at time 0; not the start-up, not the end-of-run figures) of `dgdrf overlay
# --protocol cyclon`, and the functions are grouped by the source file they are in.
# Instruction counts do not depend on what else the machine runs, unlike wall time.
#
#   bench/instructions_per_message.sh > bench/results/instructions-per-message.txt
#   NODES=1000 CYCLES=20 bench/instructions_per_message.sh
#   ARGS="run --scenario configs/thesis-100x20.toml --policy dgdrf --neighbors 4 --max-time 30 --seed 1" bench/instructions_per_message.sh
#
# ARGS: another dgdrf command line instead of the Cyclon overlay (a policy's run: the
# gradients, the servers' and users' code and the policies are groups of their own).
#
# Needs valgrind (callgrind_annotate comes with it), the project's virtual environment
# active and the compiled core (the loop is found by its C symbol). About a minute.
set -euo pipefail
nodes="${NODES:-1000}" cycles="${CYCLES:-20}"
script=instructions_per_message.sh
. "$(dirname "${BASH_SOURCE[0]}")/callgrind_common.sh"
if [ -n "${ARGS:-}" ]; then
  read -r -a extra <<< "$ARGS"
  cmd=(dgdrf "${extra[@]}" --quiet --json "$tmp/run.json")
  what="ARGS=\"$ARGS\""
else
  cmd=(dgdrf overlay --protocol cyclon --nodes "$nodes" --cycles "$cycles" --view-size 20 --shuffle-length 8 --metrics-every "$cycles" --seed 1 --quiet --json "$tmp/run.json")
  what="NODES=$nodes CYCLES=$cycles"
fi
echo "# $what bench/instructions_per_message.sh: $(date -u +%Y-%m-%dT%H:%MZ), compiled core, git $(git -C "$here" rev-parse --short HEAD), $(valgrind --version), PYTHONHASHSEED=$PYTHONHASHSEED"
echo "\$ valgrind --tool=callgrind --toggle-collect=$loop ${cmd[*]:0:${#cmd[@]}-2} --json OUT"
valgrind --tool=callgrind --toggle-collect="$loop" --callgrind-out-file="$tmp/cg.out" "${cmd[@]}" 2>/dev/null
callgrind_annotate --auto=no --threshold=100 "$tmp/cg.out" > "$tmp/functions.txt"
python3 - "$tmp/functions.txt" "$tmp/run.json" <<'PY'
import json, re, sys
from collections import defaultdict

# first matching pattern wins, against "file:function [object]": a function inlined from a
# header is listed under the header's file, so its name decides
GROUPS = [
    ("msgpack (pack and unpack)", r"msgpack|:unpack_execute"),
    ("Cyclon (its compiled code)", r"overlay/cyclon|overlay_6cyclon"),
    ("gradients (their compiled code)", r"overlay/(toolbox_)?gradient|overlay_8gradient|overlay_16toolbox_gradient"),
    ("push-sum (its compiled code)", r"overlay/pushsum|overlay_7pushsum"),
    ("servers, users, policies, metrics (compiled)", r"(nodes|policies|model)/|nodes_\d+|policies_\d+|model_\d+"),
    ("typed frames and node ids (descriptors, addresses)", r"overlay/descriptors|overlay_11descriptors|runtime/addresses|runtime_9addresses"),
    ("clock, transport, actors (compiled)", r"runtime/(clock|transport|actor)|runtime_\d+(clock|transport|actor)"),
    ("dictionaries", r"dictobject\.c|:(PyDict_|_PyDict_|dict|insertdict|delitem_common|unicodekeys_)"),
    ("allocation and freeing", r"obmalloc\.c|gcmodule\.c|GC_|_Py_NewReference|_Py_Dealloc|GenericAlloc|PyObject_IS_GC|:_PyObject_(Malloc|Free|Realloc|Calloc)"),
    ("ints, floats, strings, tuples, lists", r"(long|float|unicode|tuple|list|bytes)object\.[ch]|pyhash\.c|:(PyList_|PyTuple_|PyLong_|PyFloat_|PyUnicode_|PyBytes_|_PyLong_|list_|tuple|float_|unicode_|long_|ascii_)"),
    ("type and attribute lookups", r"typeobject\.c|object\.c|descrobject\.c|abstract\.c|:(PyType_|_PyType_|getset_get|_PyObject_GenericGetAttr|object_isinstance|PyObject_IsInstance|_PyObject_GetMethod|method_get|PyNumber_)"),
    ("interpreted frames and calls", r"ceval\.c|call\.c|frameobject\.c|funcobject\.c|classobject\.c|errors\.c|:(_PyFrame_|_PyEval|_PyEvalFrame|PyErr_|method_vectorcall|_PyFunction_|PyThreadState_)"),
    ("random numbers (Cyclon's MT19937; numpy's latency blocks)", r"_randommodule|numpy|runtime/twister|runtime_7twister"),
    ("libc (memcpy, memset, malloc)", r"libc\.so|:(__mem|malloc|free)"),
]
total, groups = 0, defaultdict(int)
seen_header = False
for line in open(sys.argv[1]):
    if "file:function" in line:
        seen_header = True
        continue
    m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)", line)
    if not seen_header or not m:
        continue
    n, where = int(m.group(1).replace(",", "")), m.group(2)
    total += n
    groups[next((name for name, pat in GROUPS if re.search(pat, where)), "other")] += n
run = json.load(open(sys.argv[2]))
messages = run["messages"]["total"]
print(f"{messages:,} messages, {total:,} instructions in the loop: {total / messages:,.0f} a message\n")
print(f"{'where':<52} {'share':>7} {'per message':>12}")
for name, n in sorted(groups.items(), key=lambda kv: -kv[1]):
    print(f"{name:<52} {100 * n / total:6.1f}% {n / messages:12,.0f}")
PY
