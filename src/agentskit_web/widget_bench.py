"""`make bench` section `render`: the Ask widget's rendering, measured in Chromium.

The host side of browser/render_bench.py: it serves a bare harness page on
the bench server's origin (through a Playwright route, so dist/ is not
touched), loads the shipped wheel in Pyodide, runs `run_render_bench()` in
the page and prints the figures (median of the runs the page makes itself).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

HARNESS_PATH = "/__bench__/render.html"
TIMEOUT_MS = 240_000
HARNESS_HTML = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Render bench</title>
<link rel="icon" href="data:,">
<script type="module">
import { loadPyodide } from "/runtime/pyodide/pyodide.mjs";
const root = document.documentElement;
try {
  window.akPy = await loadPyodide({ packages: ["agentskit-web"] });
  root.dataset.state = "ready";
} catch (error) {
  root.dataset.error = String(error);
  root.dataset.state = "error";
}
</script>
</head>
<body></body>
</html>
"""
RUN = """
import json
from agentskit_web.browser.render_bench import run_render_bench
json.dumps(await run_render_bench())
"""


def run_render(session: Any) -> dict[str, Any]:
    """Open the harness in a fresh context and return the page's measurements."""
    context = session.browser.new_context()
    try:
        page = context.new_page()
        page.route(
            f"**{HARNESS_PATH}",
            lambda route: route.fulfill(status=200, content_type="text/html", body=HARNESS_HTML),
        )
        page.goto(session.base_url + HARNESS_PATH)
        page.wait_for_selector("html[data-state]", state="attached", timeout=TIMEOUT_MS)
        if page.get_attribute("html", "data-state") != "ready":
            raise RuntimeError(f"the harness failed: {page.get_attribute('html', 'data-error')}")
        result: dict[str, Any] = json.loads(
            page.evaluate("(code) => akPy.runPythonAsync(code)", RUN)
        )
        return result
    finally:
        context.close()


def format_render(result: dict[str, Any]) -> str:
    latency = result["latency"]
    small, large = result["work"]["64"], result["work"]["512"]
    goal = latency["goalMs"]
    latency_ok = "ok" if latency["p95Ms"] < goal else "over goal"
    ratio_ok = "ok" if result["workRatio"] <= result["ratioGoal"] else "over goal"
    return "\n".join(
        [
            "render: the Ask widget in Chromium (in-page transport, real DOM and paint)",
            f"  chunk bytes -> text painted, {latency['chunks']} chunks:"
            f" median {latency['medianMs']:.1f} ms, p95 {latency['p95Ms']:.1f} ms,"
            f" max {latency['maxMs']:.1f} ms (goal < {goal:.0f} ms: {latency_ok})",
            f"    of which: bytes -> DOM updated median {latency['renderedMedianMs']:.2f} ms,"
            f" p95 {latency['renderedP95Ms']:.2f} ms; waiting for the next frame median"
            f" {latency['frameWaitMedianMs']:.1f} ms, p95 {latency['frameWaitP95Ms']:.1f} ms;"
            f" the frame's style+layout+paint median {latency['frameWorkMedianMs']:.1f} ms,"
            f" p95 {latency['frameWorkP95Ms']:.1f} ms",
            f"  render work, 64 vs 512 records: {small['renderMs']:.1f} ms vs"
            f" {large['renderMs']:.1f} ms, ratio {result['workRatio']:.2f}"
            f" (goal <= {result['ratioGoal']:.0f}: {ratio_ok})",
            f"  whole turn (decode + project + encode + render), 64 vs 512 records:"
            f" {small['turnMs']:.0f} ms vs {large['turnMs']:.0f} ms,"
            f" ratio {result['turnRatio']:.2f}; DOM calls ratio {result['domCallRatio']:.2f}",
        ]
    )


def render_command(args: argparse.Namespace) -> int:
    """The `render` section: build (unless --no-build), measure, print (and --json)."""
    from .bench import open_session

    with open_session(args.dist, build=not args.no_build) as session:
        result = run_render(session)
    print(format_render(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0
