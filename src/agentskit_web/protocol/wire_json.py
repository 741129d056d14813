"""Strict JSON in and out of the wire.

Python's `json` module is lenient in ways that are unsafe for untrusted wire
data: it accepts NaN/Infinity, lets a duplicate key silently win, recurses
without bound (a deep payload raises RecursionError or, in Pyodide, can kill
the runtime) and spends quadratic time on huge integers. `parse_json` puts a
linear pre-scan for nesting depth in front of the parser and hooks that reject
the rest, and never raises: it returns `JSON_INVALID` instead.

`dump_json` writes exactly one line of valid UTF-8 JSON that a browser's
`JSON.parse` reads back: NaN is refused, lone surrogates and U+2028/U+2029 are
escaped so no byte of model text can end a line or a record.
"""

import json
import math
import re
from typing import Any, Final

from .limits import JSON_MAX_NESTING, JSON_MAX_NUMBER_CHARS

JSON_INVALID: Final = object()
"""Sentinel returned by `parse_json` when the input is not acceptable JSON."""


_MAX_FINITE_INT_DIGITS: Final = 308


class _RejectedJson(ValueError):
    """Raised inside the parser hooks; never escapes this module."""


def _reject_constant(_name: str) -> Any:
    raise _RejectedJson("non-finite number")


def _parse_float(text: str) -> float:
    if len(text) > JSON_MAX_NUMBER_CHARS:
        raise _RejectedJson("number too long")
    value = float(text)
    if not math.isfinite(value):
        raise _RejectedJson("non-finite number")
    return value


def _parse_int(text: str) -> int:
    # JavaScript reads an integer past float range as Infinity: not finite, so not wire data.
    if len(text.lstrip("-")) > _MAX_FINITE_INT_DIGITS:
        raise _RejectedJson("number too long")
    return int(text)


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # dict() runs in C; a duplicate key is the only way it can come out shorter.
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _RejectedJson("duplicate key")
    return result


_STRING = re.compile(r'"[^"\\]*(?:\\[\s\S]?[^"\\]*)*(?:"|\Z)')
"""A string literal, or an unterminated one up to the end (such text is no JSON anyway).

It never fails once it saw the quote, so it never backtracks: linear on any input."""
_BRACKET = re.compile(r"[\[\]{}]")


def nesting_depth_exceeds(text: str, limit: int = JSON_MAX_NESTING) -> bool:
    """Linear scan: does any bracket nesting in `text` go deeper than `limit`?

    Strings are skipped so brackets inside them do not count. The scan is
    iterative, so a 100,000-bracket payload costs one pass and no recursion.
    String literals are cut out first in one C-level pass: a turn snapshot is
    mostly one long string (the answer's records, full of escaped braces), and
    walking it token by token in Python cost more than parsing it. Brackets
    after an unterminated quote are not counted: that text is no JSON, and
    the parser says so.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    structure = _STRING.sub("", text)
    if structure.count("[") + structure.count("{") <= limit:
        return False
    depth = 0
    for token in _BRACKET.findall(structure):
        if token in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


_DECODER: Final = json.JSONDecoder(
    object_pairs_hook=_unique_object,
    parse_float=_parse_float,
    parse_int=_parse_int,
    parse_constant=_reject_constant,
)


def parse_json(
    data: str | bytes | bytearray,
    max_nesting: int = JSON_MAX_NESTING,
    *,
    depth_checked: bool = False,
) -> Any:
    """Parse untrusted JSON text strictly; return `JSON_INVALID` instead of raising.

    Bytes must be valid UTF-8 (a BOM is not accepted, as `JSON.parse` of a
    decoded body would see it as a stray character). `depth_checked` says the
    caller already ran `nesting_depth_exceeds` on this very text.
    """
    try:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8")
        if not depth_checked and nesting_depth_exceeds(text, max_nesting):
            return JSON_INVALID
        return _DECODER.decode(text)
    except (ValueError, TypeError, RecursionError, MemoryError):
        return JSON_INVALID


_UNSAFE_IN_LINE = re.compile("[\ud800-\udfff\u2028\u2029]")


def _escape_unit(match: "re.Match[str]") -> str:
    return f"\\u{ord(match.group()):04x}"


_encode_string: Final = json.encoder.encode_basestring  # C: what dumps(ensure_ascii=False) uses


def dump_json_string(text: str) -> str:
    """`dump_json(text)` for a `str`, without the encoder object (the content hot path)."""
    return _UNSAFE_IN_LINE.sub(_escape_unit, _encode_string(text))


def dump_json(value: Any) -> str:
    """Serialise `value` as one compact JSON line (raises ValueError on NaN/Infinity)."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return _UNSAFE_IN_LINE.sub(_escape_unit, text)
