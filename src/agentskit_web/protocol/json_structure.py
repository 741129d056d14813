"""Iterative structural checks for already-parsed JSON-like values.

Values may come from a host (not only from `parse_json`), so they can be
cyclic, deep, contain non-finite floats, tuples, or objects whose methods
raise. The walk uses an explicit stack (never recursion) and stops at the
first breach, so cost is bounded by the node limit.
"""

import math
from dataclasses import dataclass
from typing import Any

from .text_metrics import js_length, js_length_within


@dataclass(frozen=True, slots=True)
class StructureLimits:
    """Caps for one contract; `None` means unbounded for that measure."""

    max_nodes: int
    max_depth: int
    max_string_chars: int | None = None
    max_array_items: int | None = None
    max_object_keys: int | None = None
    max_key_chars: int | None = None


def _scalar_ok(value: Any, limits: StructureLimits) -> bool:
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, str):
        return limits.max_string_chars is None or js_length_within(value, limits.max_string_chars)
    if isinstance(value, int):
        return abs(value) <= 2**1024 - 1
    if isinstance(value, float):
        return math.isfinite(value)
    return False


def _container_ok(value: Any, limits: StructureLimits) -> bool:
    if isinstance(value, list):
        return limits.max_array_items is None or len(value) <= limits.max_array_items
    if limits.max_object_keys is not None and len(value) > limits.max_object_keys:
        return False
    for key in value:
        if not isinstance(key, str):
            return False
        if limits.max_key_chars is not None and js_length(key) > limits.max_key_chars:
            return False
    return True


def _walk(root: Any, limits: StructureLimits) -> bool:
    nodes = 0
    stack: list[tuple[Any, int]] = [(root, 1)]
    open_ids: set[int] = set()
    exits: list[tuple[int, int]] = []  # (depth at which to release, id)
    while stack:
        value, depth = stack.pop()
        while exits and exits[-1][0] >= depth:
            open_ids.discard(exits.pop()[1])
        nodes += 1
        if nodes > limits.max_nodes or depth > limits.max_depth:
            return False
        if type(value) is dict or type(value) is list:
            if id(value) in open_ids or not _container_ok(value, limits):
                return False
            open_ids.add(id(value))
            exits.append((depth, id(value)))
            children = value.values() if type(value) is dict else value
            stack.extend((child, depth + 1) for child in reversed(list(children)))
        elif not _scalar_ok(value, limits):
            return False
    return True


def check_structure(value: Any, limits: StructureLimits) -> bool:
    """True when `value` is plain JSON data within `limits`; never raises."""
    try:
        return _walk(value, limits)
    except Exception:
        return False
