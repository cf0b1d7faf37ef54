"""fewest-tasks: a central scheduler that gives the next task to the waiting user that
holds the fewest tasks, on the first server it fits. A policy of your own in one file
(docs/tutorials/own-policy.md).

    python examples/tutorials/fewest_tasks.py run --policy drf,fewest-tasks
"""

import sys

from dgdrf.cli import main
from dgdrf.nodes.gateway import FixedRouting
from dgdrf.policies import POLICIES, Policy
from dgdrf.policies.base import AnnounceCapacity
from dgdrf.policies.centralized import CentralScheduler, waiting_mask


def select_fewest_tasks(ledger, pending):
    """The next placement as (user index, server index), or None if no waiting task fits."""
    held = ledger.placed.sum(axis=1).astype(float)  # tasks each user holds, over all servers
    user = ledger.lowest_user(waiting_mask(ledger, pending), held)  # ties: the lower user id
    if user is None:
        return None
    return user, ledger.first_fit(user)


class FewestTasks(Policy):
    name = "fewest-tasks"
    description = "central server, the user holding the fewest tasks first, first-fit server"

    def gateway_routing(self):
        return FixedRouting(self.options.central)  # every user asks the central server

    def server_roles(self, server):
        roles = [AnnounceCapacity(self.options.central, self.options.retry)]  # every server registers there
        if server.address == self.options.central:
            roles.append(CentralScheduler(select_fewest_tasks, retry=self.options.retry))
        return roles


POLICIES[FewestTasks.name] = FewestTasks

if __name__ == "__main__":
    sys.exit(main())
