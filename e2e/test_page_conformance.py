"""The protocol conformance vectors, run inside Pyodide in the page, match CPython's run.

Both sides use the same runner (agentskit_web.browser.bootstrap.run_corpus over
agentskit_web.protocol.conformance) on the same files (dist/fixtures/), in the
same test run. What must hold: the same set of files as fixtures/ holds, no
file that fails to run and no failing case on CPython, and in the page exactly
the same counts for every file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

from agentskit_web.browser.bootstrap import run_corpus
from agentskit_web.build.pages import is_conformance_vector
from agentskit_web.server.static import StaticSite
from e2e_support import BOOT_TIMEOUT_MS, ROOT, save_artifact, wait_for_state


def cpython_counts(fixtures: Path) -> dict[str, dict[str, Any]]:
    index = json.loads((fixtures / "index.json").read_text(encoding="utf-8"))
    return run_corpus(
        index,
        lambda name: (fixtures / name).read_text(encoding="utf-8"),
        lambda name: (fixtures / name).read_bytes(),
    )


def in_page_counts(page: Page, site: StaticSite) -> dict[str, dict[str, Any]]:
    page.goto(site.url + "/?conformance=1")
    wait_for_state(page, "ready")
    page.wait_for_selector(
        "html[data-conformance=done], html[data-conformance=error]",
        state="attached",
        timeout=BOOT_TIMEOUT_MS,
    )
    published: dict[str, Any] = page.evaluate("window.agentskitConformance")
    assert page.get_attribute("html", "data-conformance") == "done", published.get("error")
    files: dict[str, dict[str, Any]] = published["files"]
    return files


def test_fixture_corpus_runs_unchanged_inside_pyodide(
    page: Page, site: StaticSite, dist: Path
) -> None:
    host = cpython_counts(dist / "fixtures")
    browser = in_page_counts(page, site)
    save_artifact("conformance.json", {"cpython": host, "pyodide": browser})

    assert host, "no conformance fixtures were built into dist/fixtures"
    assert sorted(browser) == sorted(host), "the page ran a different set of files"
    for name, counts in sorted(host.items()):
        print(
            f"{name}: cpython {counts['passed']} passed / {counts['failed']} failed;"
            f" pyodide {browser[name]['passed']} passed / {browser[name]['failed']} failed"
            f" (errors: {counts.get('error')} / {browser[name].get('error')})"
        )
    on_disk = sorted(
        path.name for path in (ROOT / "fixtures").glob("*.json") if is_conformance_vector(path)
    )
    assert sorted(host) == on_disk, "dist/fixtures is not every conformance file of fixtures/"
    failing = {n: c for n, c in host.items() if c.get("error") is not None or c["failed"]}
    assert not failing, f"CPython fails fixture cases: {failing}"
    assert all(counts["passed"] > 0 for counts in host.values())
    differing = {name: (host[name], browser[name]) for name in host if browser[name] != host[name]}
    assert not differing, f"the page disagrees with CPython: {differing}"
