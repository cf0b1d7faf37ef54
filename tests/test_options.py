"""Options declared once (dgdrf/options.py): the flags, scenario settings, sweep parameters,
validation, cluster forwarding and environment all come from the declarations, so an
option added in one place (here: in this file) is everywhere."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, make_dataclass

import pytest

from dgdrf.errors import DgdrfError

from dgdrf import options
from dgdrf.bench.grid import parse_sweep
from dgdrf.cli import _run_flags, build_parser, main
from dgdrf.config import RunConfig, load_scenario, option_names, variant_labels
from dgdrf.emulation import policy_options
from dgdrf.errors import ConfigError, ScenarioError
from dgdrf.model.scenario import build_scenario
from dgdrf.options import option


@dataclass(frozen=True)
class ChurnOptions:
    """An experiment's option group, declared outside the package."""

    churn_rate: float = option(0.0, "fraction of servers replaced per simulated second", lo=0.0, hi=1.0, thesis="not in the thesis")
    churn_after: int = option(3, "ticks before churn starts", lo=0)


@pytest.fixture
def churn():
    options.register(ChurnOptions)
    yield ChurnOptions
    options.unregister(ChurnOptions)


def test_an_option_declared_in_one_file_is_a_flag_a_setting_and_a_sweep_parameter(churn, tmp_path, capsys):
    # --help
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    help_text = capsys.readouterr().out
    assert "--churn-rate" in help_text and "fraction of servers replaced" in help_text and "--churn-after" in help_text
    # the flag
    args = build_parser().parse_args(["run", "--churn-rate", "0.25"])
    assert args.churn_rate == 0.25
    # a scenario file's setting
    f = tmp_path / "s.toml"
    f.write_text('churn_rate = 0.5\nresources = ["cpu"]\n[[servers]]\nid = "s1"\ncapacity = [1.0]\n[[users]]\nid = "u1"\ndemand = [0.5]\n')
    scenario = load_scenario(f)
    assert scenario.settings == {"churn_rate": 0.5} and scenario.warnings == ()
    config = RunConfig.from_settings(scenario.settings, str(f), churn_after=7)
    assert config.get("churn_rate") == 0.5 and config.group(ChurnOptions) == ChurnOptions(0.5, 7)
    assert policy_options(scenario, config).extras == {"churn_rate": 0.5, "churn_after": 7}  # it reaches every policy
    # a sweep parameter, in every run's parameters
    spec = parse_sweep({"sweep": {"name": "c", "policies": ["drf"], "neighbors": [2], "seeds": [1], "servers": [4], "users": [2], "churn_rate": [0.0, 0.1]}})
    assert sorted(r.params["churn_rate"] for r in spec.runs()) == [0.0, 0.1]
    # and forwarded to a cluster's bootstrap, and back
    words = _run_flags(build_parser().parse_args(["cluster", "up", "--churn-rate", "0.125", "--tick", "0.2"]))
    again = build_parser().parse_args(["node", "--role", "bootstrap", *words])
    assert (again.churn_rate, again.tick) == (0.125, 0.2)


def test_a_bad_value_of_a_registered_option_is_refused_where_it_enters(churn, tmp_path, capsys):
    f = tmp_path / "s.json"
    f.write_text('{"churn_rate": 2, "resources": ["cpu"], "servers": [{"id": "s", "capacity": [1]}], "users": [{"id": "u", "demand": [1]}]}')
    with pytest.raises(ScenarioError, match=r"s\.json: churn_rate: must be a number in \[0, 1\], got 2"):
        load_scenario(f)
    with pytest.raises(ConfigError, match="sweep.*churn_rate: must be"):
        parse_sweep({"sweep": {"name": "c", "policies": ["drf"], "neighbors": [2], "seeds": [1], "servers": [4], "users": [2], "churn_rate": [-1.0]}})
    with pytest.raises(SystemExit):
        main(["run", "--churn-after", "-2"])
    assert "--churn-after: must be an integer >= 0, got '-2'" in capsys.readouterr().err


def test_without_registration_the_option_is_unknown(tmp_path):
    assert "churn_rate" not in option_names()
    f = tmp_path / "s.json"
    f.write_text('{"churn_rate": 0.5, "resources": ["cpu"], "servers": [{"id": "s", "capacity": [1]}], "users": [{"id": "u", "demand": [1]}]}')
    with pytest.raises(DgdrfError, match="unknown key 'churn_rate'"):
        load_scenario(f)
    warning = load_scenario(f, lenient=True).warnings[0]
    assert "unknown key 'churn_rate'" in warning and "ignored" in warning
    with pytest.raises(ConfigError, match="unknown run parameter"):
        parse_sweep({"sweep": {"name": "c", "policies": ["drf"], "neighbors": [2], "seeds": [1], "servers": [4], "users": [2], "churn_rate": [0.1]}})


def test_a_name_cannot_be_declared_twice(churn):
    @dataclass(frozen=True)
    class Again:
        churn_rate: float = option(0.0, "again", lo=0.0, hi=1.0)

    with pytest.raises(ValueError, match="declared twice"):
        options.register(Again)


@pytest.mark.parametrize("name,group", [("tick", "AllocationOptions"), ("seed", "RunOptions"), ("loss", "TransportOptions"), ("churn_every", "ChurnOptions")])
def test_a_registered_option_cannot_take_a_built_in_name(churn, name, group):
    """A plug-in option named as one of the run's own would be taken for the run's, and
    the plug-in would never see its value: it is refused, in one line naming both."""
    Clash = make_dataclass("Clash", [(name, float, option(0.5, "a plug-in's own", lo=0.0))], frozen=True)
    with pytest.raises(ValueError, match=f"^option '{name}' of Clash is declared twice: the built-in group {group} declares it") as refused:
        options.register(Clash)
    assert "\n" not in str(refused.value)
    assert options.registered() == (ChurnOptions,) and name in option_names()


def test_a_group_registered_before_the_built_in_groups_are_named_is_refused_then(monkeypatch: pytest.MonkeyPatch) -> None:
    """config.py names the built-in groups when it is imported: a plug-in registered
    before that is checked then."""
    from dgdrf.config import GROUPS

    @dataclass(frozen=True)
    class Early:
        tick: float = option(0.5, "a plug-in's own tick", lo=0.0, lo_open=True)

    monkeypatch.setattr(options, "_BUILT_IN", [])
    options.register(Early)
    try:
        with pytest.raises(ValueError, match="^option 'tick' of Early is declared twice: the built-in group AllocationOptions declares it"):
            options.declare_built_in(*GROUPS)
    finally:
        options.unregister(Early)


def test_an_option_taken_into_another_group_keeps_its_declaration():
    from dgdrf.overlay.options import OverlayOptions

    @dataclass(frozen=True)
    class Alone:
        cyclon_view: int = options.option_of(OverlayOptions, "cyclon_view", cli="view-size")
        gradient: str = options.option_of(OverlayOptions, "gradient", default="stamped")

    view, gradient = options.declared(Alone)
    assert (view.flag, view.default, view.option.help) == ("--view-size", 10, "Cyclon view size c of the distributed policies' peer sampling")
    assert gradient.default == "stamped" and not gradient.option.nullable and gradient.option.choices == ("toolbox", "stamped")
    with pytest.raises(TypeError, match="OverlayOptions declares no option 'view_size'"):
        options.option_of(OverlayOptions, "view_size")
    with pytest.raises(ValueError, match="default of option 'gradient': must be one of 'toolbox', 'stamped', got 'aged'"):
        options.option_of(OverlayOptions, "gradient", default="aged")


def test_every_built_in_option_has_a_flag_a_setting_and_a_sweep_parameter():
    parser = build_parser()
    run_flags = {a.dest for a in parser._subparsers._group_actions[0].choices["run"]._actions}
    names = option_names()
    assert {"tick", "neighbors", "loss", "duplicate", "stall_time", "latency_ms", "gradient_memory", "cyclon_view"} <= set(names)
    assert set(names) - {"policy"} <= run_flags  # policy has its own flag (--policy a,b)
    spec = parse_sweep({"sweep": {"name": "all", "policies": ["drf"], "neighbors": [2], "seeds": [1], "servers": [4], "users": [2], "stall_time": [30.0], "duplicate": [0.01]}})
    assert spec.runs()[0].params["stall_time"] == 30.0


@pytest.mark.parametrize("value", [(0.5, 2.0), (0.0, 0.0)])
def test_forwarded_words_read_back_as_the_same_values(value):
    config = RunConfig(latency_ms=value, idle_gossip=False, gradient="stamped", gradient_memory=0, warmup=2.5, seed=9)
    words = options.to_words(config.values(), RunConfig.options())
    parsed = build_parser().parse_args(["node", "--role", "bootstrap", *words])
    got = {d.name: getattr(parsed, d.name) for d in RunConfig.options() if d.option.flag}
    assert got == {k: v for k, v in config.values().items() if k != "policy"}


def test_environment_variables_are_checked_like_flags():
    decl = RunConfig.options()
    assert options.from_environment({"DGDRF_TICK": "0.2", "DGDRF_IDLE_GOSSIP": "no", "DGDRF_LATENCY_MS": "1,2"}, decl, lambda v, p: ConfigError(f"{v}: {p}")) == {
        "tick": 0.2, "idle_gossip": False, "latency_ms": (1.0, 2.0),
    }
    with pytest.raises(ConfigError, match="DGDRF_LOSS: must be a number in"):
        options.from_environment({"DGDRF_LOSS": "2"}, decl, lambda v, p: ConfigError(f"{v}: {p}"))


@pytest.mark.parametrize(
    "name,value",
    [("tick", 0.0), ("tick", float("inf")), ("neighbors", 0), ("neighbors", 2.5), ("seed", True), ("loss", 1.5), ("latency_ms", (5.0, 1.0)),
     ("gradient", "other"), ("gradient_memory", -1), ("capacity_knowledge", "guess"), ("idle_gossip", 1), ("stall_time", -1.0)],
)
def test_validate_refuses_each_bad_value_naming_the_option(name, value):
    with pytest.raises(ConfigError, match=f"^{name}: must be"):
        RunConfig(**{name: value}).validate()


def test_report_labels_come_from_the_declarations():
    assert variant_labels({"gini_neighbours": "overlay", "gradient": "stamped", "gradient_memory": None, "tick": 0.2}) == ["gini_neighbours=overlay", "gradient=stamped"]
    assert variant_labels({"gini_neighbours": "gradient"}) == []


def test_the_policy_gets_the_configuration_it_was_given():
    scenario = build_scenario(["cpu"], [("s1", [1.0]), ("s2", [1.0])], [("u", [0.5])])
    config = RunConfig(tick=0.3, neighbors=6, gradient_memory=4, cyclon_view=12, gini_neighbours="overlay")
    po = policy_options(scenario, config)
    assert (po.tick, po.neighbors, po.gradient_memory, po.cyclon_view, po.gini_neighbours, po.central) == (0.3, 6, 4, 12, "overlay", "s1")
    assert po.gradient_every == 0.3


def test_help_shows_defaults_and_thesis_references():
    parser = argparse.ArgumentParser()
    options.add_arguments(parser, RunConfig.options())
    text = " ".join(parser.format_help().split())
    assert "default: 0.1; thesis 1.5.8" in text and "default: the tick" in text
