"""Print what runs of finite jobs say about fairness over time, from their ``--json``
result (one run, or the list ``dgdrf run --policy tsf,drf --json OUT`` writes).

    python examples/tutorials/fairness_over_time.py OUT [USER]

Per policy: the part of the users' wanting time during which they envied another user's
bundle (``envy_over_time``), and the user that spent the largest part of its active time
below its guaranteed share (``sharing_over_time``). With USER, also that user's jobs
(``jobs``): how long each waited for its first task, and its completion time.
docs/tutorials/tsf-vs-drf.md uses it.
"""

import json
import sys


def main(path, user=None):
    doc = json.load(open(path))
    runs = doc if isinstance(doc, list) else [doc]
    for r in runs:
        users = r["sharing_over_time"]["users"]
        worst = max(users, key=lambda u: users[u]["below"])
        print(f"{r['policy']}: users envied another's bundle {r['envy_over_time']['envious_overall']:.1%} of their wanting time;"
              f" {worst} was below its guarantee {users[worst]['below']:.1%} of its active time")
    if user is not None:
        print(f"{user}'s jobs: waited for a first task / completion time (s)")
        print("job   " + "".join(f"{r['policy']:>16}" for r in runs))
        for k, job in enumerate(j for j in runs[0]["jobs"] if j["user"] == user):
            cells = []
            for r in runs:
                j = [j for j in r["jobs"] if j["user"] == user][k]
                cells.append(f"{j['first_start'] - j['arrival']:7,.0f} / {j['jct']:6,.0f}")
            print(f"{job['job']:6}" + "".join(f"{c:>16}" for c in cells))


if __name__ == "__main__":
    main(*sys.argv[1:])
