"""A package imported one module per step: no step runs the package's `__init__` early.

Checks of markdown-it run in a fresh interpreter (other tests have imported it here).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentskit_web.browser.boot_imports import MARKDOWN_IMPORTS
from agentskit_web.package_steps import StepwiseImport, finish

MOST_MODULES_PER_STEP = 6
"""mdurl's step loads mdurl and its five modules; every other step loads one module."""


def run_fresh(code: str) -> object:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout.splitlines()[-1])


def ours(names: set[str]) -> set[str]:
    """markdown-it's modules and mdurl (linkify-it is optional and not on the page)."""
    return {n for n in names if n.startswith("markdown_it.") or n == "mdurl"}


def test_the_list_names_every_module_a_plain_import_loads() -> None:
    loaded = run_fresh("import json, sys, markdown_it\nprint(json.dumps(sorted(sys.modules)))")
    assert isinstance(loaded, list)
    assert ours(set(loaded)) == set(MARKDOWN_IMPORTS)
    assert len(set(MARKDOWN_IMPORTS)) == len(MARKDOWN_IMPORTS)


def test_each_step_loads_a_module_or_two_and_the_last_makes_the_package_usable() -> None:
    result = run_fresh(
        """
        import json, sys
        from agentskit_web.browser.boot_imports import MARKDOWN_IMPORTS
        from agentskit_web.package_steps import StepwiseImport

        def mine():
            return {n for n in sys.modules if n.startswith(("markdown_it", "mdurl"))}

        stepwise = StepwiseImport("markdown_it", MARKDOWN_IMPORTS)
        calls = stepwise.steps()
        per_step, before, init_ran = [], mine(), []
        while stepwise.step():
            now = mine()
            per_step.append(len(now - before))
            before = now
            init_ran.append(hasattr(sys.modules["markdown_it"], "MarkdownIt"))
        from markdown_it import MarkdownIt
        html = MarkdownIt("commonmark").render("*hi*")
        print(json.dumps([per_step, init_ran, html, len(calls)]))
        """
    )
    assert isinstance(result, list)
    per_step, init_ran, html, calls = result
    assert len(per_step) == len(MARKDOWN_IMPORTS) + 2  # the bare package, each name, the init
    assert calls == len(per_step) + 1  # `steps()`: each of those, and the one that ends it
    assert max(per_step) <= MOST_MODULES_PER_STEP
    assert init_ran == [False] * (len(per_step) - 1) + [True]  # `__init__` runs last
    assert html == "<p><em>hi</em></p>\n"


def test_finish_completes_an_import_under_way_before_the_package_is_used() -> None:
    result = run_fresh(
        """
        import json
        from agentskit_web.browser.boot_imports import MARKDOWN_IMPORTS
        from agentskit_web.chat.view.markdown_tree import markdown_parser
        from agentskit_web.package_steps import StepwiseImport, _RUNNING

        stepwise = StepwiseImport("markdown_it", MARKDOWN_IMPORTS)
        for _ in range(10):
            stepwise.step()
        html = markdown_parser().render("`x`")  # an answer arrives mid-way
        print(json.dumps([html, sorted(_RUNNING), stepwise.step()]))
        """
    )
    assert result == ["<p><code>x</code></p>\n", [], False]


def _package(root: Path, broken: bool) -> None:
    package = root / "stepped"
    (package / "inner").mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("from .inner import leaf\nINIT_RAN = True\n")
    (package / "inner" / "__init__.py").write_text("from . import leaf\nINNER_RAN = True\n")
    (package / "inner" / "leaf.py").write_text("VALUE = 1\n")
    (package / "other.py").write_text("raise RuntimeError('broken')\n" if broken else "X = 2\n")


@pytest.fixture
def stepped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [n for n in sys.modules if n == "stepped" or n.startswith("stepped.")]:
        del sys.modules[name]


def test_the_package_init_runs_last_and_its_subpackages_after_their_modules(stepped: Path) -> None:
    _package(stepped, broken=False)
    stepwise = StepwiseImport("stepped", ["stepped.inner.leaf", "stepped.inner", "stepped.other"])
    assert stepwise.step()  # the bare package
    assert not hasattr(sys.modules["stepped"], "INIT_RAN")
    assert stepwise.step()  # the leaf, under a bare subpackage
    assert "stepped.inner.leaf" in sys.modules
    assert not hasattr(sys.modules["stepped.inner"], "INNER_RAN")
    assert stepwise.step() and sys.modules["stepped.inner"].INNER_RAN is True
    assert stepwise.step() and not hasattr(sys.modules["stepped"], "INIT_RAN")
    assert stepwise.step() and sys.modules["stepped"].INIT_RAN is True
    assert not stepwise.step()
    import stepped as imported  # type: ignore[import-not-found]

    assert imported.inner.leaf.VALUE == 1


def test_a_failing_step_leaves_no_half_made_package_behind(stepped: Path) -> None:
    _package(stepped, broken=True)
    stepwise = StepwiseImport("stepped", ["stepped.inner.leaf", "stepped.other", "stepped.inner"])
    stepwise.step()
    stepwise.step()
    with pytest.raises(RuntimeError, match="broken"):
        stepwise.step()
    assert "stepped" not in sys.modules and "stepped.inner" not in sys.modules
    finish("stepped")  # nothing under way any more
    assert not stepwise.step()
    _package(stepped, broken=False)
    import stepped as imported

    assert imported.INIT_RAN is True and imported.inner.leaf.VALUE == 1


def test_a_package_that_is_not_there_fails_its_first_step() -> None:
    stepwise = StepwiseImport("no_such_package_here", ["no_such_package_here.a"])
    with pytest.raises(ModuleNotFoundError):
        stepwise.step()
    assert not stepwise.step()
