"""Options declared once: a component's settings as dataclass fields that carry their
type, range, default, help and thesis reference, from which everything else is derived.

A component (the run, the transport, the overlays, the allocation policies) declares its
options as a frozen dataclass whose fields are made with :func:`option`. From those
declarations alone come the command-line flags (:func:`add_arguments`), the checks of
scenario-file settings and sweep parameters (:func:`check`), the validation of a whole
configuration (:func:`validate`), the words a cluster forwards to its bootstrap
(:func:`to_words`), the environment variables a container sets (:func:`from_environment`),
the JSON Schema of a setting (:func:`json_schema`, in dgdrf/schema.py's schemas of scenario
and sweep files) and which options reports name in figure labels (:attr:`Option.label`). Adding an option
is one field in one file (docs/EXTENDING.md). Built-in groups are composed into
:class:`dgdrf.config.RunConfig` (which names them with :func:`declare_built_in`); a group
from outside the package registers itself with :func:`register`, under names no other
group declares, and its values travel in the configuration's ``extras``.

Pure: no import of the rest of the package, so every layer may declare options.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import MISSING, Field, dataclass, field, fields, is_dataclass, replace
from typing import Any, Callable, Iterable, Iterator

#: the metadata key under which a field's :class:`Option` is kept
OPTION = "dgdrf.option"
KINDS = ("int", "float", "bool", "str", "pair")


@dataclass(frozen=True)
class Option:
    """What is known of one option besides its name and default.

    ``kind``: int, float, bool, str (with ``choices``) or pair (``[min, max]``, both in
    [lo, hi]); ``lo``/``hi``: the range (``lo_open``: lo itself excluded); ``nullable``:
    None is a value (the default meaning ``none_means``), never given in a file or flag;
    ``unit``: what the number counts (seconds, milliseconds); ``thesis``: where the paper
    defines or varies it; ``flag``: whether the command line has a ``--flag`` for it (the
    CLI spells some options its own way, such as ``--policy a,b``); ``cli``: the flag's
    name when it is not the option's (kept for scripts that use it); ``label``: a variant
    that reports name next to the policy when it is not its default."""

    help: str
    kind: str
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    choices: tuple[str, ...] = ()
    nullable: bool = False
    none_means: str = ""
    unit: str = ""
    thesis: str = ""
    metavar: str | None = None
    flag: bool = True
    cli: str = ""
    label: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"option kind must be one of {KINDS}, got {self.kind!r}")

    def expected(self) -> str:
        """What a valid value is, in words (the middle of every error message)."""
        what = self.unit or "a number"  # "positive seconds", "a number in [0, 1]"
        if self.kind == "int":
            return f"an integer >= {self.lo:g}" + (f" and <= {self.hi:g}" if self.hi is not None else "")
        if self.kind == "float":
            most = f" (at most {self.hi:g})" if self.hi is not None else ""
            if self.lo == 0 and self.lo_open:
                return f"positive {self.unit or 'number'}{most}"
            return f"{what} in [{self.lo:g}, {self.hi:g}]"
        if self.kind == "bool":
            return "true or false"
        if self.kind == "pair":
            return f"[min, max] {self.unit or ''} with {self.lo:g} <= min <= max <= {self.hi:g}".replace("  ", " ")
        if self.choices:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        return "a non-empty string"

    def check(self, value: Any) -> Any:
        """``value`` as this option holds it (floats as float, pairs as tuples), or
        ValueError saying what was expected."""
        if value is None and self.nullable:
            return None
        if self.kind == "int":
            if isinstance(value, int) and not isinstance(value, bool) and self._in_range(value):
                return value
        elif self.kind == "float":
            if _finite_number(value) and self._in_range(value):
                return float(value)
        elif self.kind == "bool":
            if isinstance(value, bool):
                return value
        elif self.kind == "pair":
            if isinstance(value, (list, tuple)) and len(value) == 2 and all(_finite_number(x) for x in value):
                a, b = float(value[0]), float(value[1])
                if (self.lo is None or self.lo <= a) and a <= b and (self.hi is None or b <= self.hi):
                    return (a, b)
        elif isinstance(value, str) and (value in self.choices if self.choices else value != ""):
            return value
        raise ValueError(f"must be {self.expected()}, got {str(value)[:60] if isinstance(value, float) else repr(value)[:80]}")

    def parse_text(self, text: str) -> Any:
        """A value from a command-line word or an environment variable; an error quotes
        the text as given."""
        try:
            if self.kind == "int":
                value: Any = int(text)
            elif self.kind == "float":
                value = float(text)
            elif self.kind == "bool":
                value = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}[text.strip().lower()]
            elif self.kind == "pair":
                value = [float(x) for x in text.split(",")]
            else:
                value = text
            return self.check(value)
        except (ValueError, KeyError):
            raise ValueError(f"must be {self.expected()}, got {text!r}") from None

    def to_text(self, value: Any) -> str:
        """The word :meth:`parse_text` reads back as ``value``."""
        if self.kind == "pair":
            return f"{value[0]},{value[1]}"
        return str(value)

    def _in_range(self, v: float) -> bool:
        lo_ok = self.lo is None or (v > self.lo if self.lo_open else v >= self.lo)
        return lo_ok and (self.hi is None or v <= self.hi)


def _finite_number(x: Any) -> bool:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:  # an integer beyond any float
        return False


def option(default: Any, help: str, kind: str | None = None, **declared: Any) -> Any:
    """A dataclass field declaring an option (its :class:`Option` in the metadata). The
    kind is the default's type unless given (a None default needs it)."""
    if kind is None:
        kind = {bool: "bool", int: "int", float: "float", str: "str", tuple: "pair"}.get(type(default), "")
    if default is None:
        declared.setdefault("nullable", True)
    return field(default=default, metadata={OPTION: Option(help=help, kind=kind, **declared)})


def option_of(group: type, name: str, default: Any = MISSING, **changes: Any) -> Any:
    """A dataclass field for the option ``name`` that ``group`` declares, to take it into
    another dataclass of options (a command that runs one component alone) without
    declaring it again: the same name, help, kind, range and reference, so the two cannot
    drift. ``changes`` alter how this use spells or shows it (``cli``, ``flag``,
    ``none_means``); ``default``, when given, is this use's own (a value that is not None
    replaces what None meant: the option is then not nullable)."""
    f = next((f for f in _option_fields(group) if f.name == name), None)
    if f is None:
        raise TypeError(f"{group.__name__} declares no option {name!r}")
    if default is MISSING:
        default = _default(f)
    elif default is not None:
        changes = {"nullable": False, "none_means": "", **changes}
    declared_as = replace(f.metadata[OPTION], **changes)
    try:
        declared_as.check(default)  # a default of this use's own is valid too
    except ValueError as exc:
        raise ValueError(f"default of option {name!r}: {exc}") from None
    return field(default=default, metadata={OPTION: declared_as})


# -- what a group declares -------------------------------------------------------------------
@dataclass(frozen=True)
class Declared:
    """One declared option: its name, default, declaration and the group declaring it."""

    name: str
    default: Any
    option: Option
    group: type

    @property
    def flag(self) -> str:
        return "--" + (self.option.cli or self.name.replace("_", "-"))

    @property
    def env(self) -> str:
        return "DGDRF_" + self.name.upper()


def declared(*groups: type) -> Iterator[Declared]:
    """The options the dataclasses ``groups`` declare, in declaration order, each once."""
    seen: set[str] = set()
    for group in groups:
        for f in _option_fields(group):
            if f.name not in seen:
                seen.add(f.name)
                yield Declared(f.name, _default(f), f.metadata[OPTION], _declaring(group, f.name))


def _option_fields(group: type) -> list[Field]:
    if not is_dataclass(group):
        raise TypeError(f"{group!r} is not a dataclass of options")
    return [f for f in fields(group) if OPTION in f.metadata]


def _default(f: Field) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    raise TypeError(f"option {f.name} has no default")


def _declaring(group: type, name: str) -> type:
    """The class in ``group``'s bases whose own annotations declare ``name``."""
    return next((cls for cls in group.__mro__ if name in cls.__dict__.get("__annotations__", {})), group)


# -- built-in groups and groups from outside the package -------------------------------------
_BUILT_IN: list[type] = []
_REGISTERED: list[type] = []


def declare_built_in(*groups: type) -> None:
    """Record ``groups`` as the package's own (dgdrf/config.py: the groups a run's
    configuration composes), so that :func:`register` refuses a plug-in option of the same
    name. Whichever comes second refuses the clash: a group registered before the
    configuration was imported is checked here."""
    for group in groups:
        if group in _BUILT_IN:
            continue
        for other in _REGISTERED:
            _refuse_clashes(other, group, built_in=True)
        _BUILT_IN.append(group)


def register(group: type) -> type:
    """Add a group of options declared outside the built-in configuration (a plug-in
    policy's, an experiment's): its options get flags, settings and sweep parameters like
    the built-in ones, and their values reach the run in ``RunConfig.extras``. Usable as a
    class decorator. A name already declared, by a built-in group or a registered one, is
    an error (one option, one meaning: a plug-in ``tick`` would otherwise be taken for the
    run's own and never reach the plug-in)."""
    for other in _BUILT_IN:
        _refuse_clashes(group, other, built_in=True)
    for other in _REGISTERED:
        _refuse_clashes(group, other, built_in=False)
    _REGISTERED.append(group)
    return group


def _refuse_clashes(group: type, other: type, built_in: bool) -> None:
    """ValueError naming the first option of ``group`` that ``other`` declares too."""
    theirs = {d.name: d.group for d in declared(other)}
    for d in declared(group):
        if d.name in theirs:
            where = "built-in" if built_in else "registered"
            raise ValueError(f"option {d.name!r} of {group.__name__} is declared twice: the {where} group {theirs[d.name].__name__} declares it (one option, one meaning: rename it)")


def unregister(group: type) -> None:
    """Remove a group added with :func:`register` (tests)."""
    _REGISTERED.remove(group)


def registered() -> tuple[type, ...]:
    return tuple(_REGISTERED)


# -- derived: validation, command line, environment --------------------------------------------
def check(options: Iterable[Declared], values: dict[str, Any], fail: Callable[[str, str], Exception]) -> dict[str, Any]:
    """``values`` checked against their declarations and normalised; an undeclared name
    or a bad value raises ``fail(name, problem)``."""
    by_name = {d.name: d for d in options}
    out: dict[str, Any] = {}
    for name, value in values.items():
        d = by_name.get(name)
        if d is None:
            raise fail(name, f"unknown option; known: {', '.join(by_name)}")
        try:
            out[name] = d.option.check(value)
        except ValueError as exc:
            raise fail(name, str(exc)) from None
    return out


def validate(obj: Any, fail: Callable[[str, str], Exception]) -> None:
    """Every declared option of the dataclass instance ``obj`` holds a valid value."""
    for d in declared(type(obj)):
        try:
            d.option.check(getattr(obj, d.name))
        except ValueError as exc:
            raise fail(d.name, str(exc)) from None


def help_text(d: Declared) -> str:
    """The --help line: the declared help, the default, the thesis reference."""
    o = d.option
    if d.default is None:
        default = o.none_means
    elif o.kind == "bool":
        default = "yes" if d.default else "no"
    else:
        default = o.to_text(d.default)
    tail = [f"default: {default}"] if default else []
    if o.thesis:
        tail.append(o.thesis)
    return o.help + (f" ({'; '.join(tail)})" if tail else "")


def add_arguments(parser: argparse._ActionsContainer, options: Iterable[Declared]) -> None:
    """One flag per declared option with a flag. Every flag defaults to None (not given),
    so that a scenario file's settings hold unless a flag overrides them."""
    for d in options:
        if not d.option.flag:
            continue
        o = d.option
        text = help_text(d).replace("%", "%%")
        if o.kind == "bool":
            parser.add_argument(d.flag, dest=d.name, action=argparse.BooleanOptionalAction, default=None, help=text)
        elif o.choices:
            parser.add_argument(d.flag, dest=d.name, choices=o.choices, default=None, help=text)
        else:
            metavar = o.metavar or ("MIN,MAX" if o.kind == "pair" else None)
            parser.add_argument(d.flag, dest=d.name, type=_argparse_type(o), metavar=metavar, default=None, help=text)


def _argparse_type(o: Option) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            return o.parse_text(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def given(args: argparse.Namespace, options: Iterable[Declared]) -> dict[str, Any]:
    """The options given as flags (not None) in parsed ``args``."""
    return {d.name: getattr(args, d.name) for d in options if d.option.flag and getattr(args, d.name, None) is not None}


def json_schema(d: Declared) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the values :meth:`Option.check` accepts for
    ``d``: its type, range and choices, its --help line as the description and its
    default (dgdrf/schema.py: scenario files' run settings, sweep files' parameters). A
    pair's ``min <= max`` is beyond JSON Schema and said in words only."""
    o = d.option
    out: dict[str, Any] = {"description": help_text(d)}
    bounds: dict[str, Any] = {}
    if o.lo is not None:
        bounds["exclusiveMinimum" if o.lo_open else "minimum"] = o.lo
    if o.hi is not None:
        bounds["maximum"] = o.hi
    if o.kind == "int":
        out.update(type="integer", **bounds)
    elif o.kind == "float":
        out.update(type="number", **bounds)
    elif o.kind == "bool":
        out["type"] = "boolean"
    elif o.kind == "pair":
        out["description"] += f"; [min, max] {o.unit or ''} with min <= max".replace("  ", " ")
        out.update(type="array", items={"type": "number", **bounds}, minItems=2, maxItems=2)
    elif o.choices:
        out.update(type="string", enum=list(o.choices))
    else:
        out.update(type="string", minLength=1)
    if o.nullable:  # a JSON file's null: the default's meaning (none_means)
        out["type"] = [out["type"], "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    if d.default is not None:
        out["default"] = list(d.default) if isinstance(d.default, tuple) else d.default
    return out


def to_words(values: dict[str, Any], options: Iterable[Declared]) -> list[str]:
    """Command-line words that give ``values`` again (a cluster's bootstrap gets the
    launcher's run this way)."""
    words: list[str] = []
    for d in options:
        if d.name not in values or values[d.name] is None or not d.option.flag:
            continue
        v = values[d.name]
        if d.option.kind == "bool":
            words.append(d.flag if v else "--no-" + d.flag[2:])
        else:
            words += [d.flag, d.option.to_text(v)]
    return words


def from_environment(environ: dict[str, str], options: Iterable[Declared], fail: Callable[[str, str], Exception]) -> dict[str, Any]:
    """Options set as ``DGDRF_<NAME>`` environment variables (containers), checked."""
    out: dict[str, Any] = {}
    for d in options:
        raw = environ.get(d.env)
        if raw:
            try:
                out[d.name] = d.option.parse_text(raw)
            except ValueError as exc:
                raise fail(d.env, str(exc)) from None
    return out
