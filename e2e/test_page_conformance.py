"""The protocol conformance vectors, run inside Pyodide in the page, match CPython's run.

Both sides use the same runner (agentskit_web.browser.bootstrap.run_corpus over
agentskit_web.protocol.conformance) on the same files (dist/fixtures/), in the
same test run. Protocol modules still being written may fail some files on
CPython too; what must hold is: the same set of files, and zero in-page failures
(with the same pass count) for every file that fully passes on CPython.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

from agentskit_web.browser.bootstrap import run_corpus
from agentskit_web.server.static import StaticSite
from e2e_support import BOOT_TIMEOUT_MS, save_artifact, wait_for_state


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
    regressions = {
        name: browser[name]
        for name, counts in host.items()
        if counts.get("error") is None
        and counts["failed"] == 0
        and (
            browser[name].get("error") is not None
            or browser[name]["failed"] != 0
            or browser[name]["passed"] != counts["passed"]
        )
    }
    assert not regressions, f"files passing on CPython but not in the page: {regressions}"
