"""Which modules the pages of the browser tests import (the measurement behind the trim).

Every browser context the tests open serves the runtime folder's `pyodide.mjs` through a thin
wrapper module: it loads the real file (same URL plus `?record`, so Pyodide still finds
its folder) and, once the interpreter is up, reports the modules already loaded and puts
a finder first on sys.meta_path that reports every later import *attempt* (a found module,
or one tried under `try/except ImportError`) to the test process. Nothing of the page
itself changes.

At the end of the session the conftest checks that every standard-library module a page
tried to import is in the served (trimmed) python_stdlib.zip, and `--record-modules FILE`
writes the measured list (web/page-modules.txt is that file: `make page-modules`).
"""

from __future__ import annotations

import threading
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import BrowserContext, Route

from agentskit_web.build.runtime import FINDER_MODULE, stdlib_modules

PYODIDE_MODULE = "**/runtime.*/pyodide.mjs"
RECORD_QUERY = "?record"
BINDING = "__akRecordModules"

# Runs once in each page right after loadPyodide resolves.
RECORDER = f"""
import sys, js

def _report(names):
    js.{BINDING}("\\n".join(names))

class _ImportRecorder:
    @staticmethod
    def find_spec(fullname, path=None, target=None):
        _report([fullname])
        return None

_report(list(sys.modules))
sys.meta_path.insert(0, _ImportRecorder)
"""

WRAPPER = f"""
import {{ loadPyodide as upstream, version }} from "./pyodide.mjs{RECORD_QUERY}";
export {{ version }};
export async function loadPyodide(options) {{
  const pyodide = await upstream(options);
  // Pages only: the boot snapshot's worker (snapshot="keep") has no binding to report to.
  if (typeof window !== "undefined") pyodide.runPython({RECORDER!r});
  return pyodide;
}}
"""

HEADER = """\
# Standard-library modules the pages of the browser tests import (measured, not edited):
# `make page-modules` regenerates this file by running the e2e suite with
# --record-modules. The build keeps these, a small margin (STDLIB_MARGIN in
# build/runtime.py) and `[stdlib] keep` of web/wheels.toml; see docs/design/architecture.md.
"""


@dataclass
class ModuleRecorder:
    """Every module name any page reported, collected across the session."""

    names: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    paused: bool = False

    def attach(self, context: BrowserContext) -> None:
        context.expose_binding(BINDING, self._on_report)
        context.route(PYODIDE_MODULE, _serve_wrapper)

    def _on_report(self, _source: Any, names: str) -> None:
        if self.paused:
            return
        with self.lock:
            self.names.update(name for name in names.split("\n") if name)

    def stdlib_names(self, archive: Path) -> list[str]:
        """The recorded names that are modules of this (stock) stdlib archive."""
        with zipfile.ZipFile(archive) as stock:
            modules = stdlib_modules(stock.namelist())
        return sorted(n for n in self.names if n in modules and n != FINDER_MODULE)

    def write(self, target: Path, stock: Path) -> None:
        target.write_text(HEADER + "\n".join(self.stdlib_names(stock)) + "\n", encoding="utf-8")


def _serve_wrapper(route: Route) -> None:
    route.fulfill(
        status=200,
        body=WRAPPER,
        headers={"content-type": "text/javascript; charset=utf-8", "cache-control": "no-store"},
    )


def wrap_new_context(
    new_context: Callable[..., BrowserContext], recorder: ModuleRecorder
) -> Callable[..., BrowserContext]:
    """`browser.new_context` whose contexts all report their pages' imports."""

    def recording(*args: Any, **kwargs: Any) -> BrowserContext:
        context = new_context(*args, **kwargs)
        recorder.attach(context)
        return context

    return recording


def missing_from(archive: Path, wanted: list[str]) -> list[str]:
    """The names in `wanted` that the served stdlib archive does not hold."""
    with zipfile.ZipFile(archive) as served:
        names = [n[:-1] if n.endswith(".pyc") else n for n in served.namelist()]
    shipped = stdlib_modules(names)
    return [name for name in wanted if name not in shipped]
