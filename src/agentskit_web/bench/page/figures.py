"""Figures a benchmark may print: a ratio or a rate only when the clock resolved it.

A timed window that measured zero says the clock was too coarse for it (a page
clock is rounded), not that the work was free or that two costs were equal. So
these helpers return `None` for it, and the report prints "unresolved" instead
of a clamped or invented number.
"""

from collections.abc import Iterable
from typing import Final

UNRESOLVED: Final = "unresolved (the clock did not resolve the window)"


def ratio(numerator: float, denominator: float) -> float | None:
    """`numerator / denominator`, or `None` when either side measured nothing."""
    if numerator <= 0 or denominator <= 0:
        return None
    return numerator / denominator


def per_second(amount: float, seconds: float) -> float | None:
    """A rate over a timed window, or `None` when the window measured nothing."""
    return amount / seconds if seconds > 0 else None


def shown(value: float | None, spec: str) -> str:
    """A figure formatted with `spec`, or the unresolved note."""
    return UNRESOLVED if value is None else format(value, spec)


def median(values: Iterable[float]) -> float:
    """The median of `values` (the page's trimmed standard library has no `statistics`)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median of no values")
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
