"""`make bench` runs every benchmark section and `make bench-smoke` (part of `make test`) runs
each of them once, so a section added to the bench cannot be left out of CI's smoke run and
stop working unseen (issue 31: `turn` had crashed since the session store gained a parameter)."""

import re
from pathlib import Path

from agentskit_web.bench.__main__ import SECTIONS

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENTS = {"snapshot"}
"""Sections run by hand (their module docstrings say why), in neither target."""


def _sections_of(target: str) -> list[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", makefile, re.M)
    assert recipe is not None, f"no {target} target"
    return re.findall(r"-m agentskit_web\.bench ([a-z-]+)", recipe.group(1))


def test_make_bench_runs_every_section_once() -> None:
    sections = _sections_of("bench")
    assert sorted(sections) == sorted(set(SECTIONS) - EXPERIMENTS)


def test_make_bench_smoke_runs_every_bench_section_once() -> None:
    smoke = _sections_of("bench-smoke")
    assert sorted(smoke) == sorted(_sections_of("bench"))


def test_make_test_ends_with_the_smoke_run() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    test = re.search(r"^test:([^\n]*)$", makefile, re.M)
    assert test is not None and "bench-smoke" in test.group(1).split()


def test_no_two_bench_modules_import_each_other() -> None:
    """What two sections share lives in a helper module (boot_runs.py, turn_backend.py, ...):
    no bench module imports one that imports it back, even inside a function."""
    import ast

    bench = ROOT / "src" / "agentskit_web" / "bench"
    imports: dict[str, set[str]] = {}
    for path in bench.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imports[path.stem] = {
            node.module.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
        }
    cycles = sorted(
        (a, b) for a, used in imports.items() for b in used if a < b and a in imports.get(b, ())
    )
    assert cycles == []
