"""``Stats``: what a solve reports about itself, as a typed record.

Why typed: every exact backend starts from a schedule, may stop early, builds a model
and searches it, and a script that compares runs wants those facts under one name each
(one name for the start, one for the stop, one count of checks) rather than a free-form
dict per backend. The fields below are what every solver shares; what only one backend
knows (CP-SAT's branches, the MILP's LP value, bnb's memo) goes in ``extra``.

A ``Stats`` is also a mutable mapping over its set fields and extras, so
``stats["nodes"]``, ``stats.get(...)`` and ``{**stats}`` read like the dicts they
replace, and a heuristic may add its own figures by name. ``to_row`` / ``from_row``
give a flat row of scalars for CSV files and back (nested values travel as JSON).
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field, fields
from typing import Any, get_args, get_origin, get_type_hints

#: Field names, in order (``extra`` excluded): filled by ``_names`` on first use.
_FIELDS: tuple[str, ...] = ()


@dataclass
class Stats(MutableMapping[str, Any]):
    """Typed statistics of one solve; unset fields (None) are absent from the mapping.

    ``start``: where the starting schedule came from (``"given"`` for the caller's hint,
    else the rule or heuristic that made it, ``"shared"`` or ``"relaxation"``);
    ``start_objective`` its value. ``special``: the special case that answered at once.
    ``quick``: the cheap proof that answered before any model (``"bounds"``).
    ``stopped``: why the solve returned early (``"interrupted"``, ``"time limit"``,
    ``"work limit"``); ``stopped_in``: the phase it was in. ``schedule_from`` and
    ``bound_from``: which part produced the returned schedule and bound; ``proved_by``:
    what proved optimality. ``build_s`` / ``search_s``: seconds building the model and
    searching it; ``work``: the backend's unit of work done (nodes, branches);
    ``checks``: how many schedules the independent checker judged during the solve
    (one per schedule that leaves it); ``compile_s``: one-off compilation of kernels;
    ``phase_s``: seconds per declared phase of the run (``model.phases``).
    """

    start: str | None = None
    start_objective: int | None = None
    special: str | None = None
    quick: str | None = None
    stopped: str | None = None
    stopped_in: str | None = None
    schedule_from: str | None = None
    bound_from: str | None = None
    proved_by: str | None = None
    build_s: float | None = None
    search_s: float | None = None
    compile_s: float | None = None
    phase_s: dict[str, float] | None = None
    work: int | None = None
    checks: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    # --- the mapping view ---------------------------------------------------------------
    def __getitem__(self, key: str) -> Any:
        if key in _names():
            value = getattr(self, key)
            if value is None:
                raise KeyError(key)
            return value
        return self.extra[key]

    def __setitem__(self, key: str, value: Any) -> None:
        if key in _names():
            setattr(self, key, value)
        else:
            self.extra[key] = value

    def __delitem__(self, key: str) -> None:
        if key in _names():
            if getattr(self, key) is None:
                raise KeyError(key)
            setattr(self, key, None)
        else:
            del self.extra[key]

    def __iter__(self) -> Iterator[str]:
        yield from (n for n in _names() if getattr(self, n) is not None)
        yield from self.extra

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str) and key in _names():
            return getattr(self, key) is not None
        return key in self.extra

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable

    @classmethod
    def of(cls, value: Stats | Mapping[str, Any] | None) -> Stats:
        """``value`` itself if already a ``Stats``, else a new one holding its items."""
        if isinstance(value, Stats):
            return value
        out = cls()
        for k, v in (value or {}).items():
            out[k] = v
        return out

    def copy(self) -> Stats:
        return dataclasses.replace(self, extra=dict(self.extra))

    def count_check(self, n: int = 1) -> None:
        self.checks = (self.checks or 0) + n

    # --- flat rows ----------------------------------------------------------------------
    def to_row(self, prefix: str = "") -> dict[str, Any]:
        """A flat row of scalars (None, bool, int, float, str); other values as JSON text."""
        return {f"{prefix}{k}": _scalar(v) for k, v in self.items()}

    @classmethod
    def from_row(cls, row: Mapping[str, Any], prefix: str = "") -> Stats:
        """The inverse of ``to_row`` for rows read back from a CSV file (values may be
        strings): typed fields are converted to their types, extras decoded from JSON
        where they hold it; empty cells are absent."""
        hints = _hints()
        out = cls()
        for key, value in row.items():
            if not key.startswith(prefix):
                continue
            name = key[len(prefix) :]
            if value is None or value == "" or (isinstance(value, float) and value != value):
                continue
            out[name] = _parse(value, hints.get(name))
        return out


def _names() -> tuple[str, ...]:
    global _FIELDS
    if not _FIELDS:
        _FIELDS = tuple(f.name for f in fields(Stats) if f.name != "extra")
    return _FIELDS


def _hints() -> dict[str, Any]:
    return {k: v for k, v in get_type_hints(Stats).items() if k != "extra"}


def _scalar(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if hasattr(v, "item"):  # numpy scalars
        return v.item()
    return json.dumps(v, default=str, sort_keys=True)


def _parse(value: Any, hint: Any) -> Any:
    """A CSV cell back to ``hint``'s type (None: an extra, JSON or the text itself)."""
    if hint is not None and get_origin(hint) in (types.UnionType, typing.Union):
        hint = next(a for a in get_args(hint) if a is not type(None))
    if not isinstance(value, str):
        if hint is int and isinstance(value, float) and value.is_integer():
            return int(value)
        return value
    if hint is str:
        return value
    if hint is int:
        return int(float(value))
    if hint is float:
        return float(value)
    low = value.strip()
    if low in ("True", "False"):
        return low == "True"
    try:
        return json.loads(low)
    except ValueError:
        return value
