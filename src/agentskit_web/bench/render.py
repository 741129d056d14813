"""`make bench` section `render`: the Ask widget's rendering, measured in Chromium.

The host side of browser/render_bench.py: it runs `run_render_bench()` in the
bench's bare Pyodide harness page (bench.run_python_in_page) and prints the
figures (median of the runs the page makes itself). Then the hostile-markdown
corpus (fixtures/hostile_markdown/cases.json) in a fresh page
(bench/page/hostile.py): per case, a stored answer restored into the widget,
time to painted and DOM nodes, against the same bytes as plain text.
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


HOSTILE_RUN = """
import json
from agentskit_web.bench.page.hostile import run_hostile_bench
json.dumps(await run_hostile_bench(json.loads({corpus!r})))
"""


def hostile_corpus() -> dict[str, Any]:
    """The hostile-markdown corpus, from fixtures/ (case specs, expanded in the page)."""
    from ..build.files import find_root

    path = find_root() / "fixtures" / "hostile_markdown" / "cases.json"
    corpus: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return corpus


def run_hostile(session: Any) -> dict[str, Any]:
    """Restore every hostile case in a bare harness page and return the measurements."""
    from .harness import run_python_in_page

    code = HOSTILE_RUN.format(corpus=json.dumps(hostile_corpus()))
    result: dict[str, Any] = run_python_in_page(session, code)
    return result


def format_hostile(result: dict[str, Any]) -> str:
    goal_ms, goal_nodes = result["goal"]["maxMs"], result["goal"]["maxNodes"]
    lines = [
        "render, hostile markdown: a stored answer restored into the widget, until painted"
        f" (goal: worst case <= {goal_ms} ms and <= {goal_nodes:,} DOM nodes);"
        " baseline: the same bytes as one plain-text node, same page and run",
    ]
    for case in result["cases"]:
        runs = ", ".join(f"{ms:.0f}" for ms in case["runsMs"])
        lines.append(
            f"  {case['name']:<24} {case['bytes'] / 1024:7.1f} KiB:"
            f" median {case['medianMs']:6.1f} ms"
            f" (runs {runs}; Python+DOM {case['renderMedianMs']:.1f} ms),"
            f" {case['nodes']:,.0f} nodes{', shortened' if case['shortened'] else ''};"
            f" plain text {case['plainMedianMs']:.1f} ms, {case['plainNodes']:,.0f} nodes;"
            f" ratio {shown(case['ratioToPlain'], '.2f')}"
        )
    worst_ms, worst_nodes = result["worstMs"], result["worstNodes"]
    ok = worst_ms["ms"] <= goal_ms and worst_nodes["nodes"] <= goal_nodes
    lines.append(
        f"  worst case: {worst_ms['ms']:.1f} ms ({worst_ms['name']}),"
        f" {worst_nodes['nodes']:,.0f} nodes ({worst_nodes['name']})"
        f" ({'ok' if ok else 'over goal'})"
    )
    return "\n".join(lines)


def run_render(session: Any) -> dict[str, Any]:
    """Run the in-page render bench in a bare harness page and return its measurements."""
    from .harness import run_python_in_page

    result: dict[str, Any] = run_python_in_page(session, RUN)
    return result


def format_render(result: dict[str, Any]) -> str:
    latency = result["latency"]
    sizes = sorted(result["work"], key=int)
    small, large = result["work"][sizes[0]], result["work"][sizes[-1]]
    versus = f"{sizes[0]} vs {sizes[-1]} records"
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
            f"  render work, {versus}: {small['renderMs']:.1f} ms vs"
            f" {large['renderMs']:.1f} ms, ratio {shown(work_ratio, '.2f')}"
            f" (goal <= {result['ratioGoal']:.0f}: {ratio_ok})",
            f"  whole turn (decode + project + encode + render), {versus}:"
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
        print(format_render(result), flush=True)
        hostile = run_hostile(session)
    print(format_hostile(hostile))
    if args.json:
        both = {**result, "hostile": hostile}
        args.json.write_text(json.dumps(both, indent=1) + "\n", encoding="utf-8")
    return 0
