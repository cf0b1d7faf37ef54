"""A run's configuration: every component's declared options composed into one value.

:class:`RunConfig` is the run's own options (:class:`RunOptions`) with the allocation
policies', the overlays' and the transport's (each declared once, in its own package:
dgdrf/options.py says how). A run is a pure function of (scenario, RunConfig). Values
come from a scenario file's settings, then CLI flags or sweep parameters; both are
checked against the declarations where they enter (:meth:`RunConfig.from_settings`,
:func:`load_scenario`), so a bad one is one line naming the file or flag.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dgdrf import options as declared_options
from dgdrf.errors import ConfigError, ScenarioError, did_you_mean
from dgdrf.model import scenario_file
from dgdrf.model.scenario import MAX_SECONDS, SCENARIO_KEYS, Scenario
from dgdrf.options import Declared, option
from dgdrf.overlay.options import OverlayOptions
from dgdrf.policies.options import AllocationOptions
from dgdrf.runtime.options import TransportOptions


@dataclass(frozen=True)
class RunOptions:
    """The run's own options: which policy, which seed, when to give up."""

    policy: str = option("drf", "allocation policy (dgdrf --help lists them)", flag=False)
    seed: int = option(1, "run seed: latencies, losses, gossip partners (also the generator seed with --servers/--users)", lo=0)
    max_time: float = option(100_000.0, "stop after this many simulated seconds", lo=0.0, lo_open=True, hi=MAX_SECONDS, unit="seconds")
    stall_time: float = option(
        120.0, "end the run as stalled after this many simulated seconds without an allocation while tasks still fit (a policy that stopped progressing)",
        lo=0.0, lo_open=True, hi=MAX_SECONDS, unit="seconds",
    )
    time_scale: float = option(
        1.0, "workload seconds per run second: every job's arrival and every task's duration is divided by it (a cluster runs an hour of trace in six minutes with 10)",
        lo=0.0, lo_open=True, hi=1e6, unit="number",
    )
    per_server: bool = option(False, "the result holds each user's tasks on each server (per_server: {user: {server: tasks}})")
    sample_every: float | None = option(
        None, "seconds between samples of every user's share and each resource's utilisation (the result's samples)", kind="float", lo=0.0, lo_open=True,
        hi=MAX_SECONDS, unit="seconds", none_means="10 when tasks end (jobs with durations), else none",
    )


@dataclass(frozen=True)
class ChurnOptions:
    """Servers leaving and joining during an emulated run (dgdrf/world.py ``Churn``:
    crashes at the events of a Poisson process, the members that must know told after the
    failure detector's delay; joins at those of another). Emulation only: in a cluster,
    servers leave when their processes stop and join when a ``dgdrf node`` starts."""

    churn_departures: int = option(0, "servers that crash and leave during the run, one at a time, picked at random (emulation only)", lo=0)
    churn_every: float = option(10.0, "mean seconds between two departures (a Poisson process)", lo=0.0, lo_open=True, hi=MAX_SECONDS, unit="seconds")
    churn_start: float = option(0.0, "virtual time from which servers leave (and join)", lo=0.0, hi=MAX_SECONDS, unit="seconds")
    churn_joins: int = option(
        0, "servers that join during the run, one at a time (a Poisson process of the same mean gap): each a new server of the kind of the earliest departed server not yet replaced, else of a scenario server drawn at random (emulation only)",
        lo=0, hi=100_000,
    )


#: the built-in option groups, in the order --help lists them
GROUPS: tuple[type, ...] = (RunOptions, AllocationOptions, OverlayOptions, TransportOptions, ChurnOptions)
declared_options.declare_built_in(*GROUPS)  # a plug-in option of the same name is refused


@dataclass(frozen=True, kw_only=True)
class RunConfig(RunOptions, AllocationOptions, OverlayOptions, TransportOptions, ChurnOptions):
    """Everything besides the scenario that determines a run. ``extras``: values of
    option groups registered from outside the package (:func:`dgdrf.options.register`)."""

    extras: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def options(cls) -> list[Declared]:
        """Every declared option: the built-in groups', then the registered groups'."""
        return list(declared_options.declared(*GROUPS, *declared_options.registered()))

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], source: str | None = None, **overrides: Any) -> RunConfig:
        """The configuration a scenario file's run settings give (its ``policy`` aside),
        with ``overrides`` (CLI flags, sweep parameters) taking precedence. Every value is
        checked against its declaration: a bad one raises ScenarioError naming ``source``
        when it came from the file, ConfigError otherwise."""
        known = cls.options()

        def bad_setting(name: str, problem: str) -> Exception:
            return ScenarioError(f"{source}: {name}: {problem}") if source else ConfigError(f"{name}: {problem}")

        values = declared_options.check(known, {k: v for k, v in settings.items() if k != "policy"}, bad_setting)
        values.update(declared_options.check(known, overrides, lambda name, problem: ConfigError(f"{name}: {problem}")))
        builtin = {d.name for d in declared_options.declared(cls)}
        extras = {k: v for k, v in values.items() if k not in builtin}
        config = cls(**{k: v for k, v in values.items() if k in builtin})
        if extras:
            config = replace(config, extras={**config.extras, **extras})
        return config

    def validate(self) -> RunConfig:
        """Every option holds a valid value (a RunConfig built in code is checked too)."""
        declared_options.validate(self, lambda name, problem: ConfigError(f"{name}: {problem}"))
        for d in declared_options.declared(*declared_options.registered()):
            try:
                d.option.check(self.extras.get(d.name, d.default))
            except ValueError as exc:
                raise ConfigError(f"{d.name}: {exc}") from None
        return self

    def get(self, name: str) -> Any:
        """An option's value by name, built-in or registered (its default when unset)."""
        if name in self.__dataclass_fields__ and name != "extras":
            return getattr(self, name)
        for d in declared_options.declared(*declared_options.registered()):
            if d.name == name:
                return self.extras.get(name, d.default)
        raise KeyError(name)

    def group(self, group: type) -> Any:
        """The values of a registered option group, as an instance of it."""
        return group(**{d.name: self.get(d.name) for d in declared_options.declared(group)})

    def values(self) -> dict[str, Any]:
        """Every option's value by name (what a cluster's members are told)."""
        return {d.name: self.get(d.name) for d in self.options()}


def option_names() -> list[str]:
    """The names of every declared option (scenario-file settings, sweep parameters)."""
    return [d.name for d in RunConfig.options()]


def load_scenario(path: str | Path, lenient: bool = False) -> Scenario:
    """A scenario file with its run settings checked against every declared option: a
    bad setting, or a key that is neither part of a scenario nor an option, is a
    ScenarioError naming the file and the key (``lenient``: an unknown key is kept out of
    the settings with a warning instead)."""
    scenario = scenario_file.read_scenario_file(path)
    return checked_settings(scenario, str(path), lenient)


def checked_settings(scenario: Scenario, source: str, lenient: bool = False) -> Scenario:
    """``scenario`` with its settings checked (:func:`load_scenario`)."""
    names = set(option_names())
    settings = {k: v for k, v in scenario.settings.items() if k in names}
    unknown = [k for k in scenario.settings if k not in names]
    known = SCENARIO_KEYS + tuple(sorted(names))
    if unknown and not lenient:
        raise ScenarioError(f"{source}: {unknown_key(unknown[0], known)}; `dgdrf schema scenario` lists every key (--lenient: ignore unknown keys)")
    warnings = [f"{source}: {unknown_key(k, known)}, ignored (--lenient)" for k in unknown]
    if "policy" in settings and not isinstance(settings["policy"], str):
        raise ScenarioError(f"{source}: policy: must be a policy name, got {settings['policy']!r}")
    checked = declared_options.check(RunConfig.options(), {k: v for k, v in settings.items() if k != "policy"}, lambda name, problem: ScenarioError(f"{source}: {name}: {problem}"))
    if "policy" in settings:
        checked["policy"] = settings["policy"]
    return replace(scenario, settings=checked, warnings=scenario.warnings + tuple(warnings))


def unknown_key(key: str, known: Sequence[str]) -> str:
    """The error for an unknown key: "unknown key 'polcy' (did you mean 'policy'?)"."""
    return f"unknown key {key!r}{did_you_mean(key, known)}"


def variant_labels(params: Mapping[str, Any]) -> list[str]:
    """``name=value`` for each variant option (declared ``label``) a run's parameters set
    to other than its default, by name: what a report writes next to the policy's name."""
    return [
        f"{d.name}={params[d.name]}"
        for d in sorted(RunConfig.options(), key=lambda d: d.name)
        if d.option.label and params.get(d.name) is not None and params.get(d.name) != d.default
    ]
