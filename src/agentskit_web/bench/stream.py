"""`make bench` sections `protocol`, `ask` and `backend`.

- `protocol` (CPython): over a recorded 512-record Ask stream, MB/s of
  `AskEventDecoder`, of `AssistantContentEncoder` and of
  `decode_assistant_content`, each next to a naive peer measured in the same
  run (split on newlines + `json.loads`/`json.dumps`, no bounds, no schema), so
  the ratio says what the contract's safety costs.
- `ask` (Chromium + Pyodide): the adapter's whole body path (decode + project
  + encode) over the same kind of stream, in the page and on CPython in the
  same run (ratio page/CPython), and the per-chunk cost at the start vs the end
  of a 512-record answer (must stay flat).
- `backend` (CPython + uvicorn): the reference Ask backend's time to first
  byte and to done (median, p95) and questions per second at 10 clients.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from typing import Any

from .page.figures import per_second, ratio, shown

IN_PAGE_ASK = """
import json
from agentskit_web.bench.page.ask_stream import run_ask_bench
json.dumps(run_ask_bench())
"""
REPEATS = 7


def _best_seconds(work: Callable[[], object], repeats: int = REPEATS) -> float:
    """Best of `repeats` timed runs, the collector run before (not inside) each."""
    runs = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        work()
        runs.append(time.perf_counter() - start)
    return min(runs)


def run_protocol_bench() -> dict[str, Any]:
    """MB/s of the three contract paths and of their naive peers, over one recorded stream."""
    from ..protocol import AskEventDecoder, AssistantContentEncoder, decode_assistant_content
    from .page.ask_stream import recorded_long_stream

    body = recorded_long_stream()
    chunks = [body[i : i + 4096] for i in range(0, len(body), 4096)]
    events: list[dict[str, Any]] = []

    def decode() -> None:
        decoder = AskEventDecoder()
        found = [event for chunk in chunks for event in decoder.feed(chunk)]
        found.extend(decoder.finish())
        events[:] = found

    def decode_peer() -> None:
        [json.loads(line) for line in body.split(b"\n") if line.strip()]

    decode()
    parts = [{"kind": "text", "text": e["delta"]} for e in events if e["type"] == "text"]
    encoded: list[str] = []

    def encode() -> None:
        encoder = AssistantContentEncoder()
        encoded[:] = [encoder.encode(part) for part in parts]

    def encode_peer() -> None:
        [json.dumps(part, ensure_ascii=False) + "\n" for part in parts]

    encode()
    content = "".join(encoded)

    def read() -> None:
        assert decode_assistant_content(content).ok

    def read_peer() -> None:
        [json.loads(line) for line in content.split("\n")[1:] if line]

    content_bytes = len(content.encode("utf-8"))
    rows = {}
    for name, size, mine, peer in (
        ("AskEventDecoder (bytes in 4 KiB chunks)", len(body), decode, decode_peer),
        ("AssistantContentEncoder.encode", content_bytes, encode, encode_peer),
        ("decode_assistant_content", content_bytes, read, read_peer),
    ):
        ours, theirs = _best_seconds(mine), _best_seconds(peer)
        rows[name] = {
            "bytes": size,
            "mbPerSecond": _megabytes(per_second(size, ours)),
            "peerMbPerSecond": _megabytes(per_second(size, theirs)),
            "ratio": ratio(theirs, ours),
        }
    return {"records": len(parts), "events": len(events), "rows": rows}


def _megabytes(rate: float | None) -> float | None:
    return None if rate is None else rate / 1e6


def format_protocol(result: dict[str, Any]) -> str:
    lines = [
        f"protocol: a recorded Ask stream of {result['events']} events"
        f" ({result['records']} text records), CPython, best of {REPEATS}",
        f"  {'':<42}{'ours MB/s':>10}{'peer MB/s':>11}{'ours/peer':>11}",
    ]
    for name, row in result["rows"].items():
        lines.append(
            f"  {name:<42}{shown(row['mbPerSecond'], '>10.1f')}"
            f"{shown(row['peerMbPerSecond'], '>11.1f')}{shown(row['ratio'], '>11.2f')}"
        )
    lines.append(
        "  peer: split on newlines + json.loads/json.dumps - no bounds, no schema, no chunk"
    )
    lines.append("  boundaries, no duplicate-key or depth checks (what the contract adds)")
    return "\n".join(lines)


def run_ask_in_page(session: Any) -> dict[str, Any]:
    """`run_ask_bench()` inside Pyodide in the bench's bare harness page."""
    from .harness import run_python_in_page

    result: dict[str, Any] = run_python_in_page(session, IN_PAGE_ASK)
    return result


def format_ask(page: dict[str, Any], host: dict[str, Any]) -> str:
    mine, peer = page["throughput"], host["throughput"]
    flat = page["flatness"]
    versus = (
        None
        if mine["mbPerSecond"] is None or peer["mbPerSecond"] is None
        else ratio(mine["mbPerSecond"], peer["mbPerSecond"])
    )
    lines = [
        "ask: the adapter's body path (decode + project + encode) over a recorded"
        f" {mine['bytes']:,}-byte answer in {mine['chunks']} chunks",
        f"  Pyodide in Chromium   {shown(mine['mbPerSecond'], '.2f')} MB/s",
        f"  CPython (same run)    {shown(peer['mbPerSecond'], '.2f')} MB/s"
        f"   page/CPython {shown(versus, '.2f')}",
    ]
    lines.append("  per-chunk cost, first vs last 64 lines of a 512-record answer, in the page:")
    lines.append("    " + _flat(flat))
    return "\n".join(lines)


def _flat(flat: dict[str, Any]) -> str:
    head, tail = flat["chunkMicrosStart"], flat["chunkMicrosEnd"]
    ends = shown(flat["endToStartRatio"], ".2f")
    return f"{head:.1f} us vs {tail:.1f} us (end/start {ends}; flat is ~1)"


def protocol_command(args: argparse.Namespace) -> int:
    result = run_protocol_bench()
    print(format_protocol(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


def ask_command(args: argparse.Namespace) -> int:
    from .harness import open_session
    from .page.ask_stream import run_ask_bench

    with open_session(args.dist, build=not args.no_build) as session:
        page = run_ask_in_page(session)
    host = run_ask_bench()
    print(format_ask(page, host))
    if args.json:
        args.json.write_text(json.dumps({"page": page, "cpython": host}, indent=1) + "\n")
    return 0
