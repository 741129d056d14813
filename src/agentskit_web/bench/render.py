"""`make bench` section `render`: the Ask widget's rendering, measured in Chromium.

The host side of browser/render_bench.py: it runs `run_render_bench()` in the
bench's bare Pyodide harness page (bench.run_python_in_page) and prints the
figures (median of the runs the page makes itself).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from .page.figures import shown

RUN = """
import json
from agentskit_web.bench.page.render import run_render_bench
json.dumps(await run_render_bench())
"""


def run_render(session: Any) -> dict[str, Any]:
    """Run the in-page render bench in a bare harness page and return its measurements."""
    from .harness import run_python_in_page

    result: dict[str, Any] = run_python_in_page(session, RUN)
    return result


def format_render(result: dict[str, Any]) -> str:
    latency = result["latency"]
    small, large = result["work"]["64"], result["work"]["512"]
    goal = latency["goalMs"]
    latency_ok = "ok" if latency["p95Ms"] < goal and not latency["unpainted"] else "over goal"
    work_ratio = result["workRatio"]
    ratio_ok = "ok" if work_ratio is not None and work_ratio <= result["ratioGoal"] else "not met"
    return "\n".join(
        [
            "render: the Ask widget in Chromium (in-page transport, real DOM and paint)",
            f"  chunk bytes -> text painted, {latency['painted']} of {latency['chunks']} chunks"
            f" painted ({latency['unpainted']} never reported a painted frame):"
            f" median {latency['medianMs']:.1f} ms, p95 {latency['p95Ms']:.1f} ms,"
            f" max {latency['maxMs']:.1f} ms (goal < {goal:.0f} ms: {latency_ok})",
            f"    of which: bytes -> DOM updated median {latency['renderedMedianMs']:.2f} ms,"
            f" p95 {latency['renderedP95Ms']:.2f} ms; waiting for the next frame median"
            f" {latency['frameWaitMedianMs']:.1f} ms, p95 {latency['frameWaitP95Ms']:.1f} ms;"
            f" the frame's style+layout+paint median {latency['frameWorkMedianMs']:.1f} ms,"
            f" p95 {latency['frameWorkP95Ms']:.1f} ms",
            f"  render work, 64 vs 512 records: {small['renderMs']:.1f} ms vs"
            f" {large['renderMs']:.1f} ms, ratio {shown(work_ratio, '.2f')}"
            f" (goal <= {result['ratioGoal']:.0f}: {ratio_ok})",
            f"  whole turn (decode + project + encode + render), 64 vs 512 records:"
            f" {small['turnMs']:.0f} ms vs {large['turnMs']:.0f} ms,"
            f" ratio {shown(result['turnRatio'], '.2f')};"
            f" DOM calls ratio {shown(result['domCallRatio'], '.2f')}",
        ]
    )


def render_command(args: argparse.Namespace) -> int:
    """The `render` section: build (unless --no-build), measure, print (and --json)."""
    from .harness import open_session

    with open_session(args.dist, build=not args.no_build) as session:
        result = run_render(session)
    print(format_render(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0
