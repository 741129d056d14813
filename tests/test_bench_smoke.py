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
