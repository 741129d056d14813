"""`make bench` section `turn`: turn snapshots against Ask NDJSON for the same 512-record answer.

The host runs the real reference server (the Ask app with the turn endpoint
mounted, over httpx's ASGI transport) with a generator that streams the same
511 text deltas every time, plus its one source list: 512 records. It records

- the Ask NDJSON body (`POST /api/ask`);
- the turn body without coalescing (`snapshot_interval=0`: one snapshot per
  delta) and with the server's default coalescing (at most one snapshot per
  16 ms), the deltas paced like a fast model (`PACE_SECONDS` apart);

and prints their bytes on the wire, raw and gzip-compressed (what a server
with compression sends). Full snapshots are bigger by design: each carries
the whole conversation, so their total grows with the square of the answer
unless coalesced. Then, in Chromium, the page fetches the three bodies and
measures the client's CPU time in Pyodide and the widget's render work
(bench/page/turn.py), goal: turn render work at most 1.2x the Ask path's.

First it prints the server's worst case (turn_worst.py): the biggest session
the bounds allow and 500 deltas, at once and paced 10, 20 and 50 ms per token,
next to the same turn on an empty session.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import secrets
from collections.abc import AsyncIterator
from typing import Any, Final

from .turn_backend import SITE, BenchRetriever

RECORDS: Final = 512
PACE_SECONDS: Final = 0.004
SESSION_ID: Final = "bench-session-0123456789ab"
TURN_ID: Final = "t-bench"
ROUTE_PREFIX: Final = "/__bench__/turn/"

_SENTENCES: Final = (
    "The widget renders **markdown** safely with `markdown-it-py`. ",
    "See [the embedding guide](/docs/embedding.html#attributes) for every attribute. ",
    "Sources appear as links; nothing the model sends can run as code. ",
    "Answers stream token by token, and only new text is painted. ",
)


def answer_deltas(records: int = RECORDS - 1) -> list[str]:
    """The answer's text deltas: markdown sentences, a block break every 3, a list every 24."""
    deltas = []
    for index in range(records):
        delta = f"({index}) " + _SENTENCES[index % len(_SENTENCES)]
        if index % 3 == 2:
            delta += "\n\n"
        if index % 24 == 23:
            delta = f"- item {index}\n- another item\n\n"
        deltas.append(delta)
    return deltas


class BenchGenerator:
    """Streams `answer_deltas()` with `pace` seconds between deltas."""

    model = None

    def __init__(self, pace: float) -> None:
        self.pace = pace

    async def stream(self, request: Any) -> AsyncIterator[str]:
        for delta in answer_deltas():
            if self.pace:
                await asyncio.sleep(self.pace)
            yield delta


def _submit(session_id: str) -> dict[str, Any]:
    return {
        "protocol": "agentskit.chat.turn",
        "version": 1,
        "eventId": "e-bench",
        "sessionId": session_id,
        "turnId": TURN_ID,
        "sequence": 0,
        "emittedAt": "2026-01-01T00:00:00Z",
        "event": "client.turn.submit",
        "payload": {"input": "A question"},
    }


async def _record(interval: float, pace: float) -> dict[str, bytes]:
    import httpx

    from ..server.ask_app import create_ask_app
    from ..server.turn_app import mount_turn

    app = create_ask_app(SITE, retriever=BenchRetriever(), generator=BenchGenerator(pace))
    mount_turn(app, snapshot_interval=interval)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
        ask = await client.post(
            "/api/ask", json={"messages": [{"role": "user", "content": "A question"}]}
        )
        turn = await client.post("/api/turn", json=_submit(SESSION_ID))
    for response in (ask, turn):
        if response.status_code != 200:
            raise RuntimeError(f"the bench server answered {response.status_code}")
    return {"ask": ask.content, "turn": turn.content}


def record_bodies() -> dict[str, bytes]:
    """The three bodies of the same answer, from the real server."""
    plain = asyncio.run(_record(interval=0.0, pace=0.0))
    coalesced = asyncio.run(_record(interval=0.016, pace=PACE_SECONDS))
    return {"ask": plain["ask"], "turn": plain["turn"], "turnCoalesced": coalesced["turn"]}


def wire_sizes(bodies: dict[str, bytes]) -> dict[str, Any]:
    ask = bodies["ask"]
    out: dict[str, Any] = {}
    for name, body in bodies.items():
        lines = [line for line in body.split(b"\n") if line]
        compressed = len(gzip.compress(body, 6))
        out[name] = {
            "bytes": len(body),
            "gzipBytes": compressed,
            "lines": len(lines),
            "ratioToAsk": len(body) / len(ask),
            "gzipRatioToAsk": compressed / len(gzip.compress(ask, 6)),
        }
    return out


def _serve(body: bytes) -> Any:
    def fulfill(route: Any) -> None:
        route.fulfill(status=200, content_type="application/x-ndjson", body=body)

    return fulfill


def run_in_page(session: Any, bodies: dict[str, bytes]) -> dict[str, Any]:
    """The in-page half (bench/page/turn.py) in a bare harness page, the bodies routed in."""
    from .harness import HARNESS_PATH, HARNESS_TIMEOUT_MS, harness_html

    urls = {name: f"{ROUTE_PREFIX}{name}-{secrets.token_hex(4)}.ndjson" for name in bodies}
    code = (
        "import json\n"
        "from agentskit_web.bench.page.turn import run_turn_bench\n"
        f"json.dumps(await run_turn_bench({json.dumps(urls)}, {SESSION_ID!r}, {TURN_ID!r}))\n"
    )
    context = session.browser.new_context()
    try:
        page = context.new_page()
        html = harness_html(session.dist, "Turn bench", "", bench=True)
        page.route(
            f"**{HARNESS_PATH}",
            lambda route: route.fulfill(status=200, content_type="text/html", body=html),
        )
        for name, url in urls.items():
            page.route(f"**{url}", _serve(bodies[name]))
        page.goto(session.base_url + HARNESS_PATH)
        page.wait_for_selector("html[data-state]", state="attached", timeout=HARNESS_TIMEOUT_MS)
        if page.get_attribute("html", "data-state") != "ready":
            raise RuntimeError(f"the harness failed: {page.get_attribute('html', 'data-error')}")
        result: dict[str, Any] = json.loads(page.evaluate("(c) => akPy.runPythonAsync(c)", code))
        return result
    finally:
        context.close()


def format_turn(wire: dict[str, Any], page: dict[str, Any] | None) -> str:
    names = {
        "ask": "Ask NDJSON",
        "turn": "turn, every change",
        "turnCoalesced": "turn, coalesced 16 ms",
    }
    lines = [
        f"turn: the same {RECORDS}-record answer as Ask NDJSON and as turn snapshots"
        f" (real server; coalesced run paced {PACE_SECONDS * 1000:.0f} ms per delta)",
        f"  {'bytes on the wire':<24}{'lines':>7}{'bytes':>13}{'x Ask':>8}{'gzip':>11}{'x Ask':>8}",
    ]
    for name, row in wire.items():
        lines.append(
            f"  {names[name]:<24}{row['lines']:>7}{row['bytes']:>13,}{row['ratioToAsk']:>8.1f}"
            f"{row['gzipBytes']:>11,}{row['gzipRatioToAsk']:>8.1f}"
        )
    lines.append(
        "  (each snapshot carries the whole conversation, so bytes grow with the square of"
        " the answer; coalescing bounds the count by time)"
    )
    if page is None:
        return "\n".join(lines)
    cpu, render = page["cpu"], page["render"]
    ask_cpu = cpu["ask"]["ms"]
    lines.append("  client CPU in Pyodide (body path, 4 KiB chunks):")
    for name in ("ask", "turn", "turnCoalesced"):
        agree = cpu[name].get("textRecordsAgree")
        note = "" if agree is None else ("  same text records" if agree else "  RECORDS DIFFER")
        ms = cpu[name]["ms"]
        lines.append(f"    {names[name]:<24}{ms:>9.1f} ms{ms / ask_cpu:>7.1f}x{note}")
    goal = page["renderGoal"]
    ask_render = render["ask"]["renderMs"]
    ask_paused = render["ask"]["renderMsGcPaused"]
    lines.append(f"  render work (widget DOM view, median of runs; goal turn <= {goal:.1f}x Ask):")
    lines.append(
        f"    {'':<24}{'as is':>12}{'x Ask':>7}{'gc paused':>12}{'x Ask':>7}{'DOM calls':>11}"
    )
    for name in ("ask", "turn", "turnCoalesced"):
        row = render[name]
        ratio = row["renderMs"] / max(ask_render, 1e-6)
        paused = row["renderMsGcPaused"] / max(ask_paused, 1e-6)
        verdict = "" if name == "ask" else ("  ok" if paused <= goal else "  over goal")
        lines.append(
            f"    {names[name]:<24}{row['renderMs']:>9.1f} ms{ratio:>7.2f}"
            f"{row['renderMsGcPaused']:>9.1f} ms{paused:>7.2f}{row['domCalls']:>11.0f}{verdict}"
        )
    lines.append(
        "    (as is: cycle collections the snapshot decoding triggers land inside the view's"
        " time; gc paused: the DOM work alone)"
    )
    return "\n".join(lines)


def turn_command(args: argparse.Namespace) -> int:
    """The `turn` section: record from the real server, measure in Chromium, print (--json)."""
    from ..server.turn_app import TURN_SNAPSHOT_INTERVAL_SECONDS
    from .harness import open_session
    from .turn_worst import PACES, format_worst, worst_json, worst_session_figures

    paces = (0.0,) if getattr(args, "smoke", False) else PACES  # smoke: the burst alone
    worst = worst_session_figures(TURN_SNAPSHOT_INTERVAL_SECONDS, paces)
    print(format_worst(worst), flush=True)
    bodies = record_bodies()
    wire = wire_sizes(bodies)
    with open_session(args.dist, build=not args.no_build) as session:
        page = run_in_page(session, bodies)
    print(format_turn(wire, page))
    if args.json:
        args.json.write_text(
            json.dumps({"wire": wire, "page": page, "worst": worst_json(worst)}, indent=1) + "\n"
        )
    return 0
