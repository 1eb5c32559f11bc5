"""Reading the informational ``time_unit`` of an instance, for friendlier output."""

from __future__ import annotations

import numbers
import re
from decimal import Decimal

_SECONDS = {"ms": 1e-3, "s": 1.0, "sec": 1.0, "min": 60.0, "h": 3600.0}


def unit_seconds(unit: str) -> float | None:
    """Seconds in one time unit (``"0.5s"`` -> 0.5, ``"ms"`` -> 0.001), or None if unknown."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)?\s*([a-z]+)\s*", unit or "")
    if not m or m.group(2) not in _SECONDS:
        return None
    return float(m.group(1) or 1.0) * _SECONDS[m.group(2)]


def fmt_number(value: float, decimals: int = 3) -> str:
    """An integer as it is, anything else rounded to ``decimals`` places (trailing zeros
    dropped): ``17``, ``5.667``, ``2.5``."""
    if isinstance(value, numbers.Integral):  # exact at any size: never through a float
        return str(int(value))
    if float(value).is_integer() and abs(value) < 2**63:
        return str(int(value))
    return f"{value:.{decimals}f}".rstrip("0").rstrip(".")


def in_seconds(value: float, unit: str) -> str:
    """`` (= 8.5 s)`` when the unit is a multiple of seconds other than 1 s, else ``""``."""
    sec = unit_seconds(unit)
    if sec is None or sec == 1.0 or unit.strip() == "s":
        return ""
    if isinstance(value, numbers.Integral):  # exact, in decimals: no float rounding
        exact = Decimal(int(value)) * Decimal(repr(sec))
        if exact == exact.to_integral_value():
            return f" (= {int(exact)} s)"
        return f" (= {f'{exact:.3f}'.rstrip('0').rstrip('.')} s)"
    return f" (= {fmt_number(value * sec)} s)"


def fmt_time(value: float, unit: str) -> str:
    """A time in the instance's unit, rounded, with the unit and its value in seconds:
    ``17 0.5s (= 8.5 s)``, ``5.667 0.5s (= 2.833 s)``, ``12 s``."""
    return f"{fmt_number(value)} {unit}{in_seconds(value, unit)}"
