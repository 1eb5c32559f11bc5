"""The option vocabulary: what every solver shares (``Run``) and what one backend takes.

Every solver is called as ``fn(instance, run, options)``. ``Run`` carries the options
all solvers share under one name each (``time_limit``, ``hint``, ``seed``,
``threads``, ``log``) and the clock of this run; ``options`` is an instance of the
backend's own ``Options`` dataclass, built by ``Options.parse`` from plain keyword
arguments or ``--option KEY=VALUE`` pairs, which checks every name, type and range
before any work starts.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import threading
import time
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, Literal, Self, get_args, get_origin, get_type_hints

from hare_opt.model.errors import OptionError
from hare_opt.model.limits import OutOfTime
from hare_opt.model.phases import Phase
from hare_opt.model.result import Result

#: Largest seed: CP-SAT's and HiGHS's random seeds are signed 32-bit integers.
MAX_SEED = 2**31 - 1
#: Most threads a run may ask for (CP-SAT refuses more than 10,000 workers; no machine
#: this runs on has anywhere near this many cores).
MAX_THREADS = 1024

#: ``(source, incumbent, bound, note)``: what a solver reports while it runs.
ProgressFn = Callable[[str, "float | None", "float | None", "str | None"], None]


class UnknownOptionError(OptionError):
    """An option name the solver does not take."""


def option(
    default: Any = MISSING,
    *,
    lo: float | None = None,
    hi: float | None = None,
    doc: str = "",
    factory: Any = MISSING,
) -> Any:
    """A dataclass field of an ``Options`` class with an allowed range and a short help
    (``factory`` for a mutable default such as a dict)."""
    meta = {"lo": lo, "hi": hi, "doc": doc}
    if factory is not MISSING:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


_NAMES = {
    int: "an integer",
    float: "a number",
    bool: "true or false",
    str: "a string",
    type(None): "null",
}


def _type_name(hint: Any) -> str:
    if get_origin(hint) is Literal:
        return "one of " + ", ".join(repr(a) for a in get_args(hint))
    if get_origin(hint) in (types.UnionType, typing.Union):
        return " or ".join(_type_name(a) for a in get_args(hint))
    if get_origin(hint) is tuple:
        item = get_args(hint)[0]
        return "a list of names" if item is str else f"a list of {_type_name(item)}s"
    return _NAMES.get(hint, getattr(hint, "__name__", str(hint)))


def coerce(value: Any, hint: Any, name: str, owner: str) -> Any:
    """``value`` as type ``hint`` (int, float, bool, str, Literal, X | None, tuple[str, ...],
    a mapping), or an ``OptionError`` that names the option and the expected type."""

    def bad(what: str | None = None) -> OptionError:
        return OptionError(
            f"must be {what or _type_name(hint)}, got {value!r}", option=name, owner=owner
        )

    origin = get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        args = get_args(hint)
        if value is None and type(None) in args:
            return None
        for arg in args:
            if arg is type(None):
                continue
            try:
                return coerce(value, arg, name, owner)
            except OptionError:
                continue
        raise bad()
    if origin is Literal:
        if value in get_args(hint):
            return value
        raise bad("one of " + ", ".join(repr(a) for a in get_args(hint)))
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise bad("true or false")
    if hint is int:  # numbers.Integral: numpy integers too, never bools
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise bad("an integer")
        return int(value)
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise bad("a number")
        if not math.isfinite(value):
            raise bad("a finite number")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise bad("a string")
        return value
    if origin is tuple:  # tuple[X, ...]: a list, or "a,b" as the command line gives names
        item = get_args(hint)[0]
        if isinstance(value, str) and item is str:
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise bad()
        return tuple(coerce(v, item, name, owner) for v in value)
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise bad("a mapping")
        return dict(value)
    return value  # Any


@dataclass(frozen=True)
class Options:
    """Base of a backend's options: a frozen dataclass whose fields are the option names.

    Subclasses declare fields with ``option(default, lo=, hi=, doc=)``; ``parse``
    checks names, types and ranges. A backend that passes unknown names on to its
    engine (CP-SAT parameters, HiGHS options) overrides ``take_extra``.
    """

    owner: ClassVar[str] = "solver"

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None = None, *, owner: str | None = None) -> Self:
        owner = owner or cls.owner
        raw = dict(raw or {})
        hints = get_type_hints(cls)
        known = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        extra = {k: v for k, v in raw.items() if k not in known}
        taken = cls.take_extra(extra, owner) if extra else {}
        for name, value in raw.items():
            if name not in known:
                continue
            f = known[name]
            value = coerce(value, hints[name], name, owner)
            lo, hi = f.metadata.get("lo"), f.metadata.get("hi")
            if (
                isinstance(value, (int, float))
                and not isinstance(value, bool)
                and ((lo is not None and value < lo) or (hi is not None and value > hi))
            ):
                rng = (
                    f">= {lo}"
                    if hi is None
                    else f"<= {hi}"
                    if lo is None
                    else f"between {lo} and {hi}"
                )
                raise OptionError(f"must be {rng}, got {value!r}", option=name, owner=owner)
            values[name] = value
        for name, value in taken.items():  # e.g. engine parameters beside an explicit dict
            both = isinstance(value, dict) and isinstance(values.get(name), dict)
            values[name] = {**values[name], **value} if both else value
        return cls(**values)

    @classmethod
    def take_extra(cls, extra: Mapping[str, Any], owner: str) -> dict[str, Any]:
        """Options not among the fields: refused by name (the default)."""
        name = sorted(extra)[0]
        raise UnknownOptionError(
            f"has no option {name!r}; its options: {', '.join(cls.names()) or 'none'}", owner=owner
        )

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def describe(cls) -> list[tuple[str, Any, str]]:
        """(name, default, help) of every option, for help texts and docs."""
        out = []
        for f in fields(cls):
            default = (
                f.default
                if f.default is not MISSING
                else f.default_factory()
                if f.default_factory is not MISSING
                else None
            )
            out.append((f.name, default, f.metadata.get("doc", "")))
        return out


@dataclass(frozen=True)
class NoOptions(Options):
    """A solver with no options of its own."""


def check_time_limit(value: Any, owner: str = "solve") -> float | None:
    """``None`` or a finite number of seconds > 0 (named error otherwise)."""
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise OptionError(
            f"must be a finite number of seconds > 0, got {value!r}",
            option="time_limit",
            owner=owner,
        )
    return float(value)


@dataclass
class Run:
    """The explicit context of one solve: what every solver shares, under one name each,
    its clock, its progress sink and its stop flag.

    ``hint``: a feasible result the caller supplies (already verified by ``solve``,
    its report attached): the solver's start, warm start and upper bound. ``threads``:
    None lets the backend choose. ``stop``: set to ask a running solver to return its
    best schedule now (a backend only reads it; which signals set it is the process
    edge's business: ``util.interrupt.on_signals``). ``progress``: the sink of what the
    solver learns (``report``), set by ``solve`` (None: nobody listens). ``verify``: the
    schedule that leaves is checked (False for a phase of a larger solve, which checks
    what leaves it). ``spent``: seconds per declared phase (``model.phases``) so far.
    """

    time_limit: float | None = None
    hint: Result | None = None
    seed: int = 0
    threads: int | None = None
    log: bool = False
    started: float = field(default_factory=time.perf_counter)
    stop: threading.Event = field(default_factory=threading.Event, repr=False)
    progress: ProgressFn | None = field(default=None, repr=False)
    verify: bool = True
    spent: dict[str, float] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        owner = "solve"
        self.time_limit = check_time_limit(self.time_limit, owner)
        self.seed = coerce(self.seed, int, "seed", owner)
        if not 0 <= self.seed <= MAX_SEED:
            raise OptionError(
                f"must be between 0 and {MAX_SEED} (the backends' seeds are "
                f"32-bit), got {self.seed}",
                option="seed",
                owner=owner,
            )
        self.threads = coerce(self.threads, int | None, "threads", owner)
        if self.threads is not None and not 1 <= self.threads <= MAX_THREADS:
            raise OptionError(
                f"must be between 1 and {MAX_THREADS}, got {self.threads}",
                option="threads",
                owner=owner,
            )
        self.log = coerce(self.log, bool, "log", owner)
        if self.hint is not None and not isinstance(self.hint, Result):
            raise OptionError(
                f"must be a Result, got {type(self.hint).__name__}", option="hint", owner=owner
            )

    def report(
        self,
        source: str,
        incumbent: float | None = None,
        bound: float | None = None,
        note: str | None = None,
    ) -> None:
        """What the solver learned: ``incumbent`` only the objective of a schedule that
        passes the checker, ``bound`` only a proved lower bound on the optimum."""
        if self.progress is not None:
            self.progress(source, incumbent, bound, note)

    @property
    def reporting(self) -> bool:
        """Whether anyone listens to ``report`` (backends skip costly progress work else)."""
        return self.progress is not None

    def exclude(self, seconds: float) -> None:
        """Leave ``seconds`` just spent (a one-off compile) out of the time limit."""
        self.started += seconds

    @property
    def deadline(self) -> float | None:
        """``time.perf_counter`` value by which the run should return (None: no limit)."""
        return None if self.time_limit is None else self.started + self.time_limit

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def expired(self, grace: float = 0.0) -> bool:
        """Asked to stop, or ``grace`` seconds past the deadline: time to return the best
        schedule so far."""
        d = self.deadline
        return self.stop.is_set() or (d is not None and time.perf_counter() >= d + grace)

    def check(self, grace: float = 0.0) -> None:
        """Raise ``OutOfTime`` when ``expired``: for loops that build a model or a start."""
        if self.expired(grace):
            raise OutOfTime("stopped" if self.stop.is_set() else "time limit reached")

    def remaining(self, floor: float = 0.0) -> float | None:
        """Seconds left (at least ``floor``), None without a limit."""
        d = self.deadline
        return None if d is None else max(floor, d - time.perf_counter())

    @contextlib.contextmanager
    def phase(
        self,
        phase: Phase,
        *,
        share: float | None = None,
        cap: float | None | Literal["declared"] = "declared",
        limit: float | None | Literal["declared"] = "declared",
        hint: Result | None = None,
        verify: bool = True,
    ) -> Iterator[Run]:
        """A sub-run for one declared phase (its time limit: ``Phase.limit``; ``limit``
        replaces it where the caller computes its own), same seed, threads, log, progress
        and stop flag; the seconds it took are added to ``spent`` (with the sub-run's own
        phases) when the body ends."""
        own = phase.limit(self.time_limit, self.remaining(), share=share, cap=cap)
        sub = Run(
            own if limit == "declared" else limit,
            hint if hint is not None else self.hint,
            self.seed,
            self.threads,
            self.log,
            stop=self.stop,
            progress=self.progress,
            verify=verify,
        )
        try:
            yield sub
        finally:
            for name, s in {**sub.spent, phase.name: sub.elapsed()}.items():
                self.spent[name] = self.spent.get(name, 0.0) + s


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``NAME`` or ``NAME:KEY=VALUE[,KEY=VALUE]`` as the name and its options; values are
    read as bool (true/false), None (none), int, float, else text. How a variant of a
    policy or solver is named where only a string fits (a sweep's list, a CLI list)."""
    name, sep, rest = spec.partition(":")
    options: dict[str, Any] = {}
    if not sep:
        return name, options
    for item in rest.split(","):
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq or not key.isidentifier():
            raise ValueError(f"expected NAME:KEY=VALUE[,KEY=VALUE], got {item!r}")
        if key in options:
            raise ValueError(f"option {key!r} given twice")
        options[key] = _value(text.strip())
    return name, options


def _value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text
