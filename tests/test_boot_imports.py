"""The loader imports the widget one module at a time, in the order browser/boot_imports.py
lists (web/agentskit-ask.js `importInSlices`): the list must name every module of ours the
embed imports, import nothing the embed defers, and end with the embed itself.

Each check runs in a fresh interpreter, so modules other tests imported do not count.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agentskit_web.browser.boot_imports import (
    BOOT_IMPORTS,
    MARKDOWN_IMPORTS,
    STATIC_ANSWERS_IMPORTS,
)
from test_deferred_imports import DEFERRED

EMBED = "agentskit_web.browser.embed"
LOADER = Path(__file__).resolve().parents[1] / "web" / "agentskit-ask.js"


def loaded_after(code: str) -> list[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(list(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    return list(json.loads(result.stdout.splitlines()[-1]))


def test_the_list_names_every_module_of_ours_the_embed_imports() -> None:
    ours = [name for name in loaded_after(f"import {EMBED}") if name.startswith("agentskit_web")]
    assert sorted(set(ours) - set(BOOT_IMPORTS)) == []


def test_importing_the_list_in_order_loads_nothing_the_embed_defers() -> None:
    code = "import importlib\n" + "".join(
        f"importlib.import_module({name!r})\n" for name in BOOT_IMPORTS
    )
    loaded = loaded_after(code)
    assert [name for name in DEFERRED if name in loaded] == []
    assert EMBED in loaded


def test_the_list_ends_with_the_embed_the_loader_then_takes_from_the_cache() -> None:
    assert BOOT_IMPORTS[-1] == EMBED
    assert len(set(BOOT_IMPORTS)) == len(BOOT_IMPORTS)
    loader = LOADER.read_text(encoding="utf-8")
    assert '"agentskit_web.browser.boot_imports"' in loader
    assert f'"{EMBED}"' in loader


def test_the_markdown_modules_exist_and_build_the_parser_in_order() -> None:
    code = "import importlib\n" + "".join(
        f"importlib.import_module({name!r})\n" for name in MARKDOWN_IMPORTS
    )
    loaded = loaded_after(code)
    assert "markdown_it.main" in loaded


STATIC_ANSWERS = "agentskit_web.chat.static_answers"


def test_the_static_list_names_what_a_static_index_page_adds_to_the_embed_leaves_first() -> None:
    code = f"import {EMBED}\nimport sys\nbefore = set(sys.modules)\nimport {STATIC_ANSWERS}\n"
    code += "print(__import__('json').dumps([m for m in sys.modules if m not in before]))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    added = json.loads(result.stdout.splitlines()[-1])
    assert sorted(added) == sorted(STATIC_ANSWERS_IMPORTS)
    assert STATIC_ANSWERS_IMPORTS[-1] == STATIC_ANSWERS
    # Leaves first: importing each name in order finds every module it imports loaded
    # already, so no name's import pulls in a later one (one slice is one module's own work).
    steps = "import importlib, sys\n" + "".join(
        f"importlib.import_module({name!r})\n" for name in BOOT_IMPORTS
    )
    steps += (
        "pulled = []\n"
        f"for name in {list(STATIC_ANSWERS_IMPORTS)!r}:\n"
        "    before = set(sys.modules)\n"
        "    importlib.import_module(name)\n"
        "    pulled.append(sorted(set(sys.modules) - before - {name}))\n"
        "print(__import__('json').dumps(pulled))"
    )
    result = subprocess.run(
        [sys.executable, "-c", steps], capture_output=True, text=True, check=True
    )
    assert json.loads(result.stdout.splitlines()[-1]) == [[]] * len(STATIC_ANSWERS_IMPORTS)


def test_the_loader_imports_the_static_list_only_where_a_static_index_is_named() -> None:
    loader = LOADER.read_text(encoding="utf-8")
    assert "if (staticIndexURL()) names.push(...order.STATIC_ANSWERS_IMPORTS.toJs());" in loader
