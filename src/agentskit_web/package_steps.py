"""A package imported one module at a time, so no single step is a long task.

`import markdown_it` runs the package's `__init__`, which imports every module of it:
in Pyodide on a phone (4x slower CPU) that one import is a main-thread task of 300 ms
or more, however the widget spaces out its steps, because Python imports a module's
parent package (and so its `__init__`) before the module. `StepwiseImport` creates
each package of the tree first as a bare module (its `__path__` set, its `__init__`
not run), imports the listed modules leaves first, one per `step()`, and runs each
package's `__init__` where the list names it (its modules then already loaded), the
top package's last. The widget runs one step per idle callback (browser/widget.py).

Until the last step the package is in `sys.modules` without its `__init__` run, so
`from markdown_it import MarkdownIt` would fail there: whoever needs the package
first calls `finish(package)`, which runs what is left at once. A step that fails
removes every bare package it made, so a later plain import starts clean.
"""

import importlib
import importlib.util
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Final

_RUNNING: Final[dict[str, "StepwiseImport"]] = {}
"""The stepwise imports under way, by top package."""


class StepwiseImport:
    """The import of `package` as len(modules) + 1 steps (see the module doc)."""

    def __init__(self, package: str, modules: Sequence[str]) -> None:
        self.package = package
        self._left = [name for name in modules if name != package]
        self._bare: dict[str, ModuleType] = {}
        self._started = package in sys.modules  # already imported: every step is a no-op
        if not self._started:
            _RUNNING[package] = self

    def step(self) -> bool:
        """Run the next step; False once the package is imported."""
        if self._started and not self._bare and not self._left:
            _RUNNING.pop(self.package, None)
            return False
        try:
            if not self._started:
                self._started = True
                self._make_bare(self.package)
            elif self._left:
                self._load(self._left.pop(0))
            else:
                for name in sorted(self._bare, key=lambda n: -n.count(".")):
                    self._run_init(name)  # any package the list did not name, then the top
        except BaseException:
            self._abandon()
            raise
        return True

    def steps(self) -> list[Callable[[], bool]]:
        """What completes the import, one call per idle step: the bare package, each module
        left, the `__init__`s, and the call that finds nothing left (a call past the end
        only returns False)."""
        return [self.step] * (len(self._left) + 3)

    def finish(self) -> None:
        """Run every step left, now."""
        while self.step():
            pass

    def _load(self, name: str) -> None:
        if name in self._bare:
            self._run_init(name)
            return
        if name in sys.modules:
            return
        parent = name.rpartition(".")[0]
        if parent and parent not in sys.modules:
            self._make_bare(parent)
        importlib.import_module(name)

    def _make_bare(self, name: str) -> None:
        """`name` as a bare package (its parents first): found, not executed."""
        parent = name.rpartition(".")[0]
        if parent and parent not in sys.modules:
            self._make_bare(parent)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            importlib.import_module(name)  # not a package (or not there): a plain import
            return
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        self._bare[name] = module

    def _run_init(self, name: str) -> None:
        module = self._bare.pop(name)
        assert module.__spec__ is not None and module.__spec__.loader is not None
        module.__spec__.loader.exec_module(module)
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)

    def _abandon(self) -> None:
        for name, module in self._bare.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
        self._bare.clear()
        self._left.clear()
        _RUNNING.pop(self.package, None)


def finish(package: str) -> None:
    """Complete a stepwise import of `package` under way, if any: call before using it."""
    running = _RUNNING.get(package)
    if running is not None:
        running.finish()
