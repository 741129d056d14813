"""Throughput and per-chunk cost of the Ask body path (decode + project + encode).

Pure Python with the clock passed in, so `make bench` can run exactly this
inside Pyodide in Chromium (and on CPython for comparison). Two numbers:

- throughput: MB/s of a recorded long Ask stream fed in network-sized chunks;
- flatness: the cost of one event-sized chunk at the start versus the end of
  a 512-record answer. Work per chunk must not grow with the answer length
  (no re-decoding or re-measuring of what was already streamed), so the
  end/start ratio should stay near 1.
"""

import json
import time
from collections.abc import Callable
from typing import Any, Final

from ..protocol.limits import ASSISTANT_CONTENT_MAX_RECORDS
from .ask_body import AskBodyReader

Clock = Callable[[], float]

NETWORK_CHUNK_BYTES: Final = 4_096
WINDOW: Final = 64
_WORDS: Final = (
    "Grounded answers stream with citations \u2014 \u65e5\u672c\u8a9e text and emoji \U0001f680. "
)


def recorded_long_stream(records: int = ASSISTANT_CONTENT_MAX_RECORDS - 2) -> bytes:
    """A realistic long answer: `records` text deltas, one `cite`, then `done` (within bounds)."""
    lines = [
        json.dumps({"type": "text", "delta": f"{index}: {_WORDS * 4}"}, ensure_ascii=False)
        for index in range(records)
    ]
    sources = [
        {"title": f"Page {i}", "path": f"/docs/page-{i}", "anchor": "intro"} for i in range(8)
    ]
    lines.append(
        json.dumps(
            {"type": "tool", "id": "sources-1", "name": "cite", "args": {"sources": sources}}
        )
    )
    lines.append(json.dumps({"type": "done"}))
    return ("\n".join(lines) + "\n").encode("utf-8")


def _feed_all(chunks: list[bytes], content_type: str) -> int:
    reader = AskBodyReader(content_type)
    emitted = 0
    for chunk in chunks:
        emitted += len(reader.feed(chunk))
    return emitted + len(reader.finish())


def measure_throughput(
    body: bytes, clock: Clock = time.perf_counter, content_type: str = "application/x-ndjson"
) -> dict[str, Any]:
    """MB/s of the whole path over `body` in 4 KiB chunks."""
    chunks = [body[i : i + NETWORK_CHUNK_BYTES] for i in range(0, len(body), NETWORK_CHUNK_BYTES)]
    start = clock()
    emitted = _feed_all(chunks, content_type)
    seconds = max(clock() - start, 1e-9)
    return {
        "bytes": len(body),
        "chunks": len(chunks),
        "emitted": emitted,
        "seconds": seconds,
        "mbPerSecond": len(body) / seconds / 1_000_000,
    }


def measure_flatness(
    body: bytes, clock: Clock = time.perf_counter, content_type: str = "application/x-ndjson"
) -> dict[str, Any]:
    """Per-chunk cost (one event line per chunk) over the first and the last `WINDOW` lines."""
    lines = [line + b"\n" for line in body.split(b"\n") if line]
    reader = AskBodyReader(content_type)
    costs: list[float] = []
    for line in lines:
        start = clock()
        reader.feed(line)
        costs.append(clock() - start)
    reader.finish()
    text_costs = costs[:-2]  # the closing cite and done lines cost differently: leave them out
    window = min(WINDOW, len(text_costs) // 2) or 1
    head = sorted(text_costs[:window])[window // 2]  # medians: robust to a GC pause
    tail = sorted(text_costs[-window:])[window // 2]
    return {
        "lines": len(lines),
        "chunkMicrosStart": head * 1e6,
        "chunkMicrosEnd": tail * 1e6,
        "endToStartRatio": tail / head if head > 0 else 1.0,
    }


def run_ask_bench(clock: Clock = time.perf_counter) -> dict[str, Any]:
    """Both measurements over the recorded long stream (what `make bench` reports)."""
    body = recorded_long_stream()
    return {
        "throughput": measure_throughput(body, clock),
        "flatness": measure_flatness(body, clock),
    }
