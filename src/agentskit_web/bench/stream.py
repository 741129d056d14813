"""`make bench` sections `protocol`, `ask` and `backend`.

- `protocol` (CPython): over a recorded 512-record Ask stream, MB/s of
  `AskEventDecoder`, of `AssistantContentEncoder` and of
  `decode_assistant_content`, each next to a naive peer measured in the same
  run (split on newlines + `json.loads`/`json.dumps`, no bounds, no schema), so
  the ratio says what the contract's safety costs.
- `ask` (Chromium + Pyodide): the adapter's whole body path (decode + project
  + encode) over the same kind of stream, in the page and on CPython in the
  same run (ratio page/CPython); in the same page, a JavaScript yardstick over
  the identical bytes in the same 4 KiB chunks (TextDecoder, JSON.parse per
  line, a plain-JS check of the Ask shapes, JSON.stringify per record; goal:
  ours within 2x of it); the path through the public `project_ask_event`
  against the internal projection (goal: no slower); and the per-chunk cost at
  the start vs the end of a 512-record answer (must stay flat).
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
YARDSTICK_GOAL = 2.0
PUBLIC_GOAL = 1.0
# The yardstick runs this many passes per timed sample: one pass is about a millisecond,
# close to the page clock's 0.1 ms grain.
YARDSTICK_PASSES = 20

# The JavaScript yardstick: what a plain-JS adapter does per line, with no framework.
# Shapes are closed (an extra key is invalid) and the string bounds are the contract's.
YARDSTICK = """
([text, chunkBytes, passes, repeats, limits]) => {
  const bytes = new TextEncoder().encode(text);
  const chunks = [];
  for (let i = 0; i < bytes.length; i += chunkBytes) chunks.push(bytes.subarray(i, i + chunkBytes));
  const str = (v, min, max) => typeof v === "string" && v.length >= min && v.length <= max;
  const closed = (o, keys) => Object.keys(o).every((k) => keys.includes(k));
  const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  const valid = (e) => {
    if (!isObject(e)) return false;
    switch (e.type) {
      case "text": return closed(e, ["type", "delta"]) && str(e.delta, 0, limits.delta);
      case "tool": return closed(e, ["type", "id", "name", "args"]) && str(e.id, 0, limits.id)
        && str(e.name, 0, limits.name) && isObject(e.args)
        && Object.keys(e.args).every((k) => k.length <= limits.argKey);
      case "done": return closed(e, ["type", "model"])
        && (e.model === undefined || str(e.model, 0, limits.model));
      case "error": return closed(e, ["type", "message", "code", "retryable"])
        && str(e.message, 1, limits.message);
      default: return false;
    }
  };
  const pass = () => {
    const decoder = new TextDecoder();
    const out = [];
    let rest = "";
    const line = (raw) => {
      const trimmed = raw.trim();
      if (!trimmed) return;
      let event;
      try { event = JSON.parse(trimmed); } catch { return; }
      if (!valid(event)) return;
      if (event.type === "text" && event.delta) {
        out.push(JSON.stringify({ kind: "text", text: event.delta }) + "\\n");
      } else if (event.type === "tool") {
        out.push(JSON.stringify({ kind: "component", frame: event.args }) + "\\n");
      }
    };
    for (const chunk of chunks) {
      const lines = (rest + decoder.decode(chunk, { stream: true })).split("\\n");
      rest = lines.pop();
      lines.forEach(line);
    }
    line(rest + decoder.decode());
    return out.length;
  };
  let records = 0;
  const samples = [];
  for (let r = 0; r < repeats; r++) {
    const start = performance.now();
    for (let p = 0; p < passes; p++) records = pass();
    samples.push((performance.now() - start) / passes / 1000);
  }
  return { records, seconds: Math.min(...samples) };
}
"""


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


def _yardstick_limits() -> dict[str, int]:
    from ..protocol import limits

    return {
        "delta": limits.ASK_TEXT_DELTA_MAX_CHARS,
        "id": limits.ASK_TOOL_ID_MAX_CHARS,
        "name": limits.ASK_TOOL_NAME_MAX_CHARS,
        "argKey": limits.ASK_TOOL_ARG_KEY_MAX_CHARS,
        "model": limits.ASK_MODEL_MAX_CHARS,
        "message": limits.ASK_ERROR_MESSAGE_MAX_CHARS,
    }


def run_ask_in_page(session: Any) -> dict[str, Any]:
    """`run_ask_bench()` inside Pyodide and the JS yardstick, in one harness page."""
    from .harness import harness_page, python_in
    from .page.ask_stream import NETWORK_CHUNK_BYTES, recorded_long_stream

    text = recorded_long_stream().decode("utf-8")
    arguments = [text, NETWORK_CHUNK_BYTES, YARDSTICK_PASSES, REPEATS, _yardstick_limits()]
    with harness_page(session) as page:
        yardstick: dict[str, Any] = page.evaluate(YARDSTICK, arguments)
        result: dict[str, Any] = python_in(page, IN_PAGE_ASK)
    result["yardstick"] = yardstick
    return result


def format_ask(page: dict[str, Any], host: dict[str, Any]) -> str:
    mine, peer, flat = page["throughput"], host["throughput"], page["flatness"]
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
    js, projection = page.get("yardstick"), page.get("projection")
    if js is not None:
        versus_js = ratio(mine["seconds"], js["seconds"])
        met = versus_js is not None and versus_js <= YARDSTICK_GOAL
        lines.append(
            f"  JS yardstick (same page, {js['records']} records)"
            f"   {js['seconds'] * 1e3:.2f} ms   ours/JS {shown(versus_js, '.2f')}"
            f"   goal <= {YARDSTICK_GOAL} ({'ok' if met else 'MISSED'})"
        )
    if projection is not None:
        public = projection["publicToInternal"]
        verdict = "ok" if public <= PUBLIC_GOAL else "MISSED"
        lines.append(
            f"  public project_ask_event / internal projection (whole path, in the page)"
            f"   {public:.2f}   goal <= {PUBLIC_GOAL} ({verdict})"
        )
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
