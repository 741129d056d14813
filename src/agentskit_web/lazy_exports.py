"""PEP 562 lazy exports for a package's public names.

In Pyodide every module imported during boot is compiled and every pydantic
model it defines is set up on the page's main thread, so the packages export
their public names lazily: a name's module is imported on first use and the
value is then cached in the package namespace.
"""

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return the package's `__getattr__` and `__dir__` for `exports` (name -> submodule)."""

    def getattr_(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        vars(sys.modules[package])[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return getattr_, dir_
