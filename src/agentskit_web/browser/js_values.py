"""JavaScript `null` and `undefined` as Python sees them.

Pyodide hands JavaScript `null` to Python as `pyodide.ffi.jsnull` (not
`None`), and `undefined` as `None`; a stand-in DOM in the unit tests uses
`None` for both. Every "is there an element / attribute" check in the
browser layer goes through these helpers, so a missing node is never
mistaken for a present one.
"""

from typing import Any


def is_nullish(value: Any) -> bool:
    """True for JavaScript `null`/`undefined` (and Python `None`)."""
    return value is None or type(value).__name__ == "JsNull"


def present(value: Any) -> bool:
    """True when a DOM lookup found something."""
    return not is_nullish(value)


def attribute(element: Any, name: str) -> str | None:
    """`element.getAttribute(name)` as `str | None`."""
    value = element.getAttribute(name)
    return value if isinstance(value, str) else None
