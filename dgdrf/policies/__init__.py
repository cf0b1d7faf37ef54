"""Allocation policies, by name: centralized (thesis 4.1) and distributed (4.2-4.5)."""

from __future__ import annotations

from dgdrf.errors import ConfigError
from dgdrf.policies.base import Policy, PolicyOptions
from dgdrf.policies.centralized import CentralizedBundleDRF, CentralizedDRF, CentralizedDRFBestFit, CentralizedFIFO, CentralizedUDRF
from dgdrf.policies.ddrf import DdrfGradient, DdrfRandom
from dgdrf.policies.dgdrf import DGDRF, DGTSF, PDGDRF, PDGTSF
from dgdrf.policies.dpsdsf import DPSDSF
from dgdrf.policies.offers import CDRF, PSDSF, RPSDSF, TSF, CMMFCpu, CMMFMemory
from dgdrf.policies.probes import Probes

POLICIES: dict[str, type[Policy]] = {
    cls.name: cls for cls in (CentralizedDRF, CentralizedDRFBestFit, CentralizedFIFO, Probes, DdrfRandom, DdrfGradient, DGDRF, PDGDRF, DGTSF, PDGTSF, DPSDSF, TSF, CDRF, PSDSF, RPSDSF, CMMFCpu, CMMFMemory, CentralizedUDRF, CentralizedBundleDRF)
}


def make_policy(name: str, options: PolicyOptions) -> Policy:
    """The policy called ``name``; an unknown name is a :class:`ConfigError` listing the known."""
    cls = POLICIES.get(name)
    if cls is None:
        raise ConfigError(f"unknown policy {name!r}; known policies: {', '.join(POLICIES)}")
    return cls(options)


__all__ = ["POLICIES", "Policy", "PolicyOptions", "make_policy"]
