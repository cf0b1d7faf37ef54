"""What one message must cost at least, on this machine, beside what it costs in dgdrf.

An event-driven emulator delivers each message as an event: it is pushed on a heap of
pending events and popped in time order, and between processes it is also encoded and
decoded once. Three floors, each measured here and printed in ns per message:

1. **The C heap**: a binary heap of 24-byte records (due tick, sequence, payload slot;
   the compiled VirtualClock's keys are 16 bytes, sequence and slot in one word, and its
   periodic rounds wait outside the heap: runtime/clock.py), in a C program compiled by
   this script with ``cc -O2``: ``PENDING`` events pending (4 per node at 10,000 nodes,
   as a gossip round keeps), each popped event pushing one new at a uniform latency of
   1,000-5,000 ticks (1-5 ms). Nothing else: the physical limit of time order.
2. **One encode and one decode**: (a) in C, a gradient exchange frame (tag, utility,
   stamp and four [address, utility, stamp] entries) written as msgpack bytes from typed
   fields and read back into them, each address found in a hash table of the nodes'
   names, as the compiled gradient's own codec does (gradient.pxd); (b) msgpack's C
   extension called from Python, ``packb`` and ``unpackb`` of that frame and of a Cyclon
   shuffle (eight [address, age, profile] descriptors), which makes a Python object of
   every field it reads.
3. **dgdrf's runtime with an empty protocol**: the compiled VirtualClock and
   LocalTransport delivering frames between ``NODES`` actors, each of whose one role
   (a Python subclass of Role) forwards every frame it reads to the next node: the
   transport's send (counting, a latency from the drawn block, the heap) and the frame's
   delivery to its role, plus one Python call of an empty handler.

dgdrf's own protocols and PeerSim's figures come from compare.sh and the runs'
``wall_s`` (bench/results/PERFORMANCE.md puts them side by side).

    python bench/message_floor.py > bench/results/message-floor.txt
    PENDING=4000 NODES=1000 python bench/message_floor.py

Needs a C compiler (cc) for the first floor; the third needs the compiled core (it says
which core ran).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

import msgpack
import numpy as np

PENDING = int(os.environ.get("PENDING", "40000"))
NODES = int(os.environ.get("NODES", "10000"))
EVENTS = int(os.environ.get("EVENTS", "5000000"))
REPEAT = 5

HEAP_C = r"""
/* The compiled VirtualClock's heap alone: (t, seq, slot) records, sift up on push, sift
   down on pop; each popped event pushes one new at a uniform delay of 1000-5000 ticks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
typedef struct { long long t, seq; long long slot; } key_t_;
static key_t_ *keys; static long long n, seq;
static unsigned long long rng = 88172645463325252ULL;
static inline unsigned long long xorshift(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }
static inline int before(key_t_ *a, key_t_ *b) { return a->t < b->t || (a->t == b->t && a->seq < b->seq); }
static void push(long long t, long long slot) {
    long long i = n++;
    while (i > 0) { long long p = (i - 1) >> 1; if (keys[p].t <= t) break; keys[i] = keys[p]; i = p; }
    keys[i].t = t; keys[i].seq = seq++; keys[i].slot = slot;
}
static key_t_ pop(void) {
    key_t_ top = keys[0], last = keys[--n]; long long i = 0;
    for (;;) {
        long long c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && before(&keys[c + 1], &keys[c])) c++;
        if (before(&last, &keys[c])) break;
        keys[i] = keys[c]; i = c;
    }
    keys[i] = last;
    return top;
}
/* A typed codec: a gradient exchange [tag, utility, stamp, [[address, utility, stamp] x 4]]
   written as msgpack bytes from typed fields and read back into them, each address found
   in a hash table of the nodes' names (as the compiled gradient's frames are, gradient.pxd). */
#define NAMES 16384
static char names[NAMES][12]; static int name_len[NAMES]; static int table[2 * NAMES];
static unsigned hash(const unsigned char *p, int n) { unsigned h = 2166136261u; while (n--) h = (h ^ *p++) * 16777619u; return h; }
static int find(const unsigned char *p, int n) {
    unsigned h = hash(p, n) & (2 * NAMES - 1);
    while (table[h] >= 0) { int i = table[h]; if (name_len[i] == n && !memcmp(names[i], p, n)) return i; h = (h + 1) & (2 * NAMES - 1); }
    return -1;
}
static unsigned char *put_double(unsigned char *q, double x) { unsigned long long b; memcpy(&b, &x, 8); *q++ = 0xcb; for (int k = 7; k >= 0; k--) *q++ = (unsigned char)(b >> (8 * k)); return q; }
static const unsigned char *get_double(const unsigned char *p, double *x) { unsigned long long b = 0; p++; for (int k = 0; k < 8; k++) b = (b << 8) | *p++; memcpy(x, &b, 8); return p; }
static unsigned char *put_int(unsigned char *q, long long v) { if (v < 128) { *q++ = (unsigned char)v; return q; } *q++ = 0xcd; *q++ = (unsigned char)(v >> 8); *q++ = (unsigned char)v; return q; }
static const unsigned char *get_int(const unsigned char *p, long long *v) { if (*p < 0x80) { *v = *p; return p + 1; } *v = (p[1] << 8) | p[2]; return p + 3; }
typedef struct { int id; double u; long long s; } entry_t;
static double codec(long long n) {
    unsigned char buf[256]; entry_t out[4], in[4]; double u = -0.3125, ru; long long s = 1234, rs, sum = 0; struct timespec a, b;
    for (int i = 0; i < NAMES; i++) { name_len[i] = sprintf(names[i], "s%d", i); }
    for (int i = 0; i < 2 * NAMES; i++) table[i] = -1;
    for (int i = 0; i < NAMES; i++) { unsigned h = hash((unsigned char *)names[i], name_len[i]) & (2 * NAMES - 1); while (table[h] >= 0) h = (h + 1) & (2 * NAMES - 1); table[h] = i; }
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long long e = 0; e < n; e++) {
        for (int k = 0; k < 4; k++) { out[k].id = (int)(xorshift() % NAMES); out[k].u = -0.25 - k / 64.0; out[k].s = 1200 + k; }
        unsigned char *q = buf; *q++ = 0x94; *q++ = 40; q = put_double(q, u); q = put_int(q, s); *q++ = 0x94;
        for (int k = 0; k < 4; k++) { int ln = name_len[out[k].id]; *q++ = 0x93; *q++ = (unsigned char)(0xa0 | ln); memcpy(q, names[out[k].id], ln); q += ln; q = put_double(q, out[k].u); q = put_int(q, out[k].s); }
        const unsigned char *p = buf + 2; p = get_double(p, &ru); p = get_int(p, &rs); p++;
        for (int k = 0; k < 4; k++) { int ln = p[1] & 0x1f; in[k].id = find(p + 2, ln); p = get_double(p + 2 + ln, &in[k].u); p = get_int(p, &in[k].s); sum += in[k].id + in[k].s; }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (sum == 42) printf("#");  /* keeps the loop's work */
    return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
}
int main(int argc, char **argv) {
    long long pending = atoll(argv[1]), events = atoll(argv[2]), e; struct timespec a, b;
    keys = malloc(sizeof(key_t_) * (pending + 1));
    for (e = 0; e < pending; e++) push(1000 + (long long)(xorshift() % 4001), e);
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (e = 0; e < events; e++) { key_t_ k = pop(); push(k.t + 1000 + (long long)(xorshift() % 4001), k.slot); }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.2f %.2f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / events, codec(events));
    return 0;
}
"""


def c_floors() -> tuple[list[float], list[float]]:
    """ns per event (pop and push) of the C heap, and per message of the typed codec in
    C (encode and decode), REPEAT runs."""
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp) / "floor.c", Path(tmp) / "floor"
        src.write_text(HEAP_C)
        subprocess.run(["cc", "-O2", "-o", str(exe), str(src)], check=True)
        runs = [subprocess.run([str(exe), str(PENDING), str(EVENTS)], check=True, capture_output=True, text=True).stdout.split() for _ in range(REPEAT)]
        return [float(r[0]) for r in runs], [float(r[1]) for r in runs]


def codec_floor() -> dict[str, list[float]]:
    """ns per message of one packb and one unpackb, for a gradient exchange and a Cyclon
    shuffle, REPEAT runs of timeit."""
    gradient = [40, -0.3125, 1234, [[f"s{i}", -0.25 - i / 64, 1200 + i] for i in range(4)]]
    cyclon = [30, [[f"n{i}", i % 20, -0.5 + i / 16] for i in range(8)]]
    out = {}
    for name, msg in (("gradient exchange (4 entries)", gradient), ("Cyclon shuffle (8 entries)", cyclon)):
        frame = msgpack.packb(msg, use_bin_type=True)
        pack = msgpack.Packer(use_bin_type=True, autoreset=True).pack
        unpack = msgpack.unpackb
        number = 200_000
        out[f"encode + decode, {name}, {len(frame)} bytes"] = [
            1e9 * min(timeit.repeat(lambda: unpack(pack(msg)), number=number, repeat=1)) / number for _ in range(REPEAT)
        ]
    return out


def runtime_floor() -> tuple[str, list[float]]:
    """ns per message of dgdrf's runtime delivering frames between NODES actors whose
    one role forwards each frame to the next node, REPEAT runs."""
    from dgdrf.build_info import core
    from dgdrf.runtime.actor import Actor, Role
    from dgdrf.runtime.addresses import BOOK
    from dgdrf.runtime.clock import VirtualClock
    from dgdrf.runtime.messages import _BY_TAG
    from dgdrf.runtime.transport import LocalTransport

    import dgdrf.overlay.messages  # noqa: F401  (every tag registered: the floor's must be free)
    import dgdrf.policies.messages  # noqa: F401

    tag = max(t for t in range(128) if t not in _BY_TAG)

    class Forward(Role):
        """Forwards every frame to the next node: the protocol that does nothing."""

        FRAME_TAGS = (tag,)

        def __init__(self, nxt: int) -> None:
            super().__init__()
            self.nxt = nxt

        def on_frame(self, src: int, data: bytes) -> None:
            Role.send_frame(self, self.nxt, tag, data)

    class Node(Actor):
        pass

    ns = []
    for _ in range(REPEAT):
        clock = VirtualClock()
        transport = LocalTransport(clock, np.random.default_rng(1))
        names = [f"floor{i}" for i in range(NODES)]
        ids = [BOOK.id_of(a) for a in names]
        roles = []
        for i, name in enumerate(names):
            node = Node(name)
            roles.append(node.add_role(Forward(ids[(i + 1) % NODES])))
            transport.register(node)
        transport.start_all()
        frame = msgpack.packb([tag, -0.3125, 1234, [[f"s{i}", -0.25, 1200 + i] for i in range(4)]])
        per_node = max(1, PENDING // NODES)  # frames in flight, as the heap's floor keeps pending
        for role in roles:
            for _ in range(per_node):
                Role.send_frame(role, role.nxt, tag, frame)
        before = clock.events
        t0 = time.perf_counter()
        clock.run(until=EVENTS / (per_node * NODES) * 0.003)  # a latency is 3 ms on average
        wall = time.perf_counter() - t0
        ns.append(1e9 * wall / (clock.events - before))
    return core(), ns


def main() -> None:
    med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    fmt = lambda xs: " ".join(f"{x:.0f}" for x in xs)  # noqa: E731
    print(f"# python bench/message_floor.py: {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f}, Python {platform.python_version()}, msgpack {msgpack.version}")
    print(f"# PENDING={PENDING} NODES={NODES} EVENTS={EVENTS}; ns per message, median of {REPEAT} (each run)\n")
    print(f"{'floor':72s} {'median':>7s}  runs")
    heap, typed = c_floors()
    print(f"{'1. C heap, pop and push, ' + f'{PENDING:,} pending':72s} {med(heap):7.0f}  {fmt(heap)}")
    print(f"{'2a. typed codec in C, encode + decode, gradient exchange (4 entries)':72s} {med(typed):7.0f}  {fmt(typed)}")
    codec = codec_floor()
    for name, xs in codec.items():
        print(f"{'2b. msgpack ' + name:72s} {med(xs):7.0f}  {fmt(xs)}")
    which, rt = runtime_floor()
    print(f"{'3. dgdrf runtime, an empty Python handler, ' + f'{NODES:,} nodes ({which} core)':72s} {med(rt):7.0f}  {fmt(rt)}")
    print(f"\nthe floor in C (1 + 2a): {med(heap) + med(typed):.0f} ns a message, {1e9 / (med(heap) + med(typed)):,.0f} messages/s")
    print(f"the floor with msgpack's objects in Python (1 + the cheaper of 2b): {med(heap) + min(med(xs) for xs in codec.values()):.0f} ns a message")


if __name__ == "__main__":
    sys.exit(main())
