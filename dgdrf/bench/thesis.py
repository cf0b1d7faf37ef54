"""The figures Östman's thesis publishes (ch. 5), for the report to hold ours against.

Each table is by neighbour count P = 2..10. Our data sets are stand-ins generated like
the thesis's (bench/README.md), so absolute minimum shares differ (DRF's own too: 0.0561
there; ours: docs/notes/2026-11-25-thesis-100x20-rerun.md); the report therefore compares
shares as a fraction of DRF's on the same data set, and error ratios and run-time ratios
as they are.
"""

from __future__ import annotations

NEIGHBOURS = tuple(range(2, 11))

#: table 5.1: minimum global dominant share, 100 machines and 20 users
MIN_SHARE_100X20 = {
    "drf": (0.0561,) * 9,
    "fifo": (0.0059,) * 9,
    "probes": (0.0317, 0.0280, 0.0356, 0.0343, 0.0365, 0.0402, 0.0343, 0.0288, 0.0357),
    "ddrf-random": (0.0122, 0.0100, 0.0224, 0.0122, 0.0104, 0.0098, 0.0113, 0.0354, 0.0506),
    "ddrf-gradient": (0.0537, 0.0518, 0.0506, 0.0549, 0.0549, 0.0550, 0.0537, 0.0549, 0.0546),
    "dgdrf": (0.0549, 0.0549, 0.0549, 0.0549, 0.0549, 0.0549, 0.0554, 0.0549, 0.0549),
    "pdgdrf": (0.0546, 0.0549, 0.0549, 0.0543, 0.0549, 0.0554, 0.0549, 0.0546, 0.0549),
}

#: tables 5.3 and 5.4: fraction of wrong allocations (thesis 5.3), by data set (servers, users)
ERROR_RATIO = {
    (100, 20): {
        "probes": (0.8353, 0.8305, 0.7964, 0.7922, 0.7589, 0.7626, 0.8000, 0.7586, 0.7528),
        "ddrf-random": (0.8671, 0.8632, 0.8591, 0.8923, 0.8842, 0.8641, 0.8889, 0.8296, 0.7451),
        "ddrf-gradient": (0.7900, 0.7174, 0.6135, 0.4875, 0.2392, 0.2603, 0.1517, 0.0957, 0.1019),
        "dgdrf": (0.0,) * 9,
        "pdgdrf": (0.3845, 0.2228, 0.1573, 0.1605, 0.1756, 0.2045, 0.2045, 0.2241, 0.2330),
    },
    (200, 40): {
        "probes": (0.8632, 0.8266, 0.8378, 0.8435, 0.8195, 0.7921, 0.8313, 0.8186, 0.8252),
        "ddrf-random": (0.9557, 0.9557, 0.9486, 0.9493, 0.9483, 0.9428, 0.8823, 0.8547, 0.8194),
        "ddrf-gradient": (0.9030, 0.8946, 0.7680, 0.6985, 0.6738, 0.6496, 0.6243, 0.5721, 0.5568),
        "dgdrf": (0.0,) * 9,
        "pdgdrf": (0.6401, 0.4835, 0.3780, 0.3014, 0.2334, 0.1765, 0.1167, 0.0569, 0.0504),
    },
}

#: 5.4, in the text: PDGDRF's run-time at P = 2 against centralized DRF's (seconds)
PDGDRF_P2_RUNTIME = {(100, 20): (794.0, 398.0), (200, 40): (783.0, 804.0)}

#: fig. 5.11: PDGDRF's run-time equals DRF's at 40 users (100 and 200 machines)
PDGDRF_EVEN_USERS = 40
#: fig. 5.12: gradient exchanges per allocation tick at which PDGDRF's run-time equals
#: DRF's, 100 machines, by users (20 users: 3 per tick; 100 users: one every 5 ticks)
PDGDRF_EVEN_EXCHANGES = {20: 3.0, 100: 0.2}


#: the minimum shares the thesis prints, by data set (servers, users): table 5.1 only. Of
#: 200x40 it draws fig. 5.4 and prints no figure (tables 5.2-5.4 are the standard
#: deviations of 100x20 and the error ratios)
MIN_SHARE = {(100, 20): MIN_SHARE_100X20}


def min_share_vs_drf(size: tuple[int, int], policy: str) -> dict[int, float] | None:
    """``policy``'s minimum share at each neighbour count P as a fraction of DRF's, as
    printed for the data set of ``size`` (None: the thesis prints none)."""
    table = MIN_SHARE.get((size[0], size[1]))
    if table is None or policy not in table:
        return None
    return {nb: share / drf for nb, share, drf in zip(NEIGHBOURS, table[policy], table["drf"])}
