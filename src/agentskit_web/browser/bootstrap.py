"""The conformance vectors, run inside the page for the browser tests.

With `?conformance=1` in the page URL, the embed (browser/embed.py) runs the
JSON conformance vectors (dist/fixtures/) inside Pyodide once the widget is
mounted, with the same runner CPython's tests use, and publishes per-file
counts on `window.agentskitConformance` and a `data-conformance` attribute on
<html>. The plain page skips that, so it stays fast.

`js`/`pyodide` are imported inside the page-only functions: `run_corpus` is
plain Python, and the browser tests call it on CPython to get the counts the
page must match.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

FIXTURE_INDEX = "fixtures/index.json"

FileCounts = dict[str, Any]


def run_corpus(
    index: dict[str, Any],
    read_text: Callable[[str], str],
    read_bytes: Callable[[str], bytes],
) -> dict[str, FileCounts]:
    """Run every fixture file named by `index`; file name -> counts.

    `read_text` returns a fixture document, `read_bytes` a recorded resource
    (the `"stream"` files), both by their path relative to the fixtures folder.
    A file that cannot be run at all (bad JSON, unknown subject) is reported
    with `error` set instead of raising, on CPython and in the page alike.
    """
    from agentskit_web.protocol.conformance import run_fixture

    _register_chat_subjects()
    results: dict[str, FileCounts] = {}
    for name in index["fixtures"]:
        try:
            report = run_fixture(json.loads(read_text(name)), read_bytes)
        except Exception as error:  # one broken file must not hide the others
            results[name] = _counts(None, 0, 0, [], type(error).__name__)
        else:
            results[name] = _counts(report.contract, report.passed, report.failed, report.failures)
    return results


def _register_chat_subjects() -> None:
    """Import chat/ so its fixture subjects exist (as tests/conftest.py does).

    If it cannot be imported here, its files report the KeyError of a missing
    subject, which the browser test then flags against CPython's counts.
    """
    try:
        import agentskit_web.chat.conformance_subjects  # noqa: F401 - registers chat subjects
    except Exception:  # reported per file through the missing subject
        return


def _counts(
    contract: str | None, passed: int, failed: int, failures: list[str], error: str | None = None
) -> FileCounts:
    return {
        "contract": contract,
        "passed": passed,
        "failed": failed,
        "failures": list(failures),
        "error": error,
    }


async def publish_conformance() -> None:
    """Fetch the fixtures, run them in this page, publish the counts."""
    import js

    root = js.document.documentElement
    root.setAttribute("data-conformance", "running")
    try:
        index = json.loads(await _fetch_text(FIXTURE_INDEX))
        names = list(index["fixtures"])
        texts = await asyncio.gather(*(_fetch_text(f"fixtures/{n}") for n in names))
        resources = list(index.get("resources", []))
        blobs = await asyncio.gather(*(_fetch_bytes(f"fixtures/{r}") for r in resources))
        documents = dict(zip(names, texts, strict=True))
        loaded = dict(zip(resources, blobs, strict=True))
        results = run_corpus(index, documents.__getitem__, loaded.__getitem__)
    except Exception as error:  # reported on the page for the test
        _publish({"error": f"{type(error).__name__}: {error}", "files": {}})
        root.setAttribute("data-conformance", "error")
        return
    _publish({"error": None, "files": results})
    root.setAttribute("data-conformance", "done")


def _publish(payload: dict[str, Any]) -> None:
    import js
    from pyodide.ffi import to_js

    js.window.agentskitConformance = to_js(payload, dict_converter=js.Object.fromEntries)


async def _fetch_text(path: str) -> str:
    from pyodide.http import pyfetch

    response = await pyfetch(path)
    if not response.ok:
        raise OSError(f"{path}: HTTP {response.status}")
    return str(await response.string())


async def _fetch_bytes(path: str) -> bytes:
    from pyodide.http import pyfetch

    response = await pyfetch(path)
    if not response.ok:
        raise OSError(f"{path}: HTTP {response.status}")
    return bytes(await response.bytes())
