"""Throughput and per-chunk cost of the Ask body path (decode + project + encode).

Pure Python with the clock passed in, so `make bench` can run exactly this
inside Pyodide in Chromium (and on CPython for comparison). Two numbers:

- throughput: MB/s of a recorded long Ask stream fed in network-sized chunks;
- flatness: the cost of one event-sized chunk at the start versus the end of
  a 512-record answer. Work per chunk must not grow with the answer length
  (no re-decoding or re-measuring of what was already streamed), so the
  end/start ratio should stay near 1.
"""

import gc
import json
import time
from collections.abc import Callable
from typing import Any, Final

from ...chat.ask.body import AskBodyReader, BoundedContentEncoder, ContentLimitExceeded
from ...chat.ask.projection import project_ask_event, project_valid_event
from ...protocol.ask_stream import AskEventDecoder
from ...protocol.limits import ASSISTANT_CONTENT_MAX_RECORDS
from .figures import per_second, ratio

Clock = Callable[[], float]

NETWORK_CHUNK_BYTES: Final = 4_096
WINDOW: Final = 64
REPEATS: Final = 5
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


def _feed_projected(chunks: list[bytes], public: bool) -> int:
    """Decode + project + encode with the protocol's parts, projecting publicly or not.

    The public `project_ask_event` validates its input again (it takes anything);
    the internal `project_valid_event` trusts the decoder. The two runs differ only
    in that call, so their ratio is what the public entry point costs.
    """
    project = project_ask_event if public else project_valid_event
    decoder = AskEventDecoder()
    encoder = BoundedContentEncoder()
    records = 0
    events = [event for chunk in chunks for event in decoder.feed(chunk)] + decoder.finish()
    for event in events:
        projection = project(event)
        if projection is None or projection["kind"] in ("error", "done"):
            continue
        part = (
            {"kind": "text", "text": projection["text"]}
            if projection["kind"] == "text"
            else {"kind": "component", "frame": projection["frame"]}
        )
        try:
            encoder.encode(part)
        except ContentLimitExceeded:
            break
        records += 1
    return records


def measure_projection(
    body: bytes, clock: Clock = time.perf_counter, repeats: int = REPEATS
) -> dict[str, Any]:
    """Seconds of the whole path through the internal and the public projection."""
    chunks = [body[i : i + NETWORK_CHUNK_BYTES] for i in range(0, len(body), NETWORK_CHUNK_BYTES)]
    runs: dict[str, list[float]] = {"internal": [], "public": []}
    for repeat in range(max(repeats, 1)):
        # Alternate which goes first, so a pause in the page hits both alike.
        order = (("internal", False), ("public", True))
        for label, public in order if repeat % 2 == 0 else order[::-1]:
            gc.collect()
            start = clock()
            _feed_projected(chunks, public)
            runs[label].append(max(clock() - start, 1e-9))
    best = {label: min(samples) for label, samples in runs.items()}
    return {
        "internalSeconds": best["internal"],
        "publicSeconds": best["public"],
        "publicToInternal": best["public"] / best["internal"],
    }


def measure_throughput(
    body: bytes,
    clock: Clock = time.perf_counter,
    content_type: str = "application/x-ndjson",
    repeats: int = REPEATS,
) -> dict[str, Any]:
    """MB/s of the whole path over `body` in 4 KiB chunks (best of `repeats` runs)."""
    chunks = [body[i : i + NETWORK_CHUNK_BYTES] for i in range(0, len(body), NETWORK_CHUNK_BYTES)]
    runs: list[float] = []
    emitted = 0
    for _ in range(max(repeats, 1)):
        gc.collect()
        start = clock()
        emitted = _feed_all(chunks, content_type)
        runs.append(clock() - start)
    seconds = min(runs)
    rate = per_second(len(body), seconds)
    return {
        "bytes": len(body),
        "chunks": len(chunks),
        "emitted": emitted,
        "seconds": seconds,
        "mbPerSecond": None if rate is None else rate / 1_000_000,
    }


def measure_flatness(
    body: bytes,
    clock: Clock = time.perf_counter,
    content_type: str = "application/x-ndjson",
    repeats: int = REPEATS,
) -> dict[str, Any]:
    """Cost of one event-line chunk over the first and the last `WINDOW` text lines.

    Each window is timed as one block, so a coarse page clock (Chromium rounds
    `performance.now()` to 100 us without cross-origin isolation) still
    resolves it; the garbage collector is run before a window and left on
    inside it, since the work it causes is part of the cost; and the best of
    `repeats` whole-stream runs is kept, because a Pyodide page shows pauses of
    milliseconds unrelated to the work being measured. A window that still
    measured zero gives `None`, not a ratio of 1. The closing `cite` and `done`
    lines are left out of the tail.
    """
    lines = [line + b"\n" for line in body.split(b"\n") if line]
    text_lines = len(lines) - 2
    window = max(min(WINDOW, text_lines // 2), 1)
    heads: list[float] = []
    tails: list[float] = []
    for _ in range(max(repeats, 1)):
        reader = AskBodyReader(content_type)
        heads.append(_timed(reader, lines[:window], clock))
        for line in lines[window : text_lines - window]:
            reader.feed(line)
        tails.append(_timed(reader, lines[text_lines - window : text_lines], clock))
        for line in lines[text_lines:]:
            reader.feed(line)
        reader.finish()
    head, tail = min(heads), min(tails)
    return {
        "lines": len(lines),
        "window": window,
        "repeats": len(heads),
        "chunkMicrosStart": head / window * 1e6,
        "chunkMicrosEnd": tail / window * 1e6,
        "endToStartRatio": ratio(tail, head),
    }


def _timed(reader: AskBodyReader, lines: list[bytes], clock: Clock) -> float:
    gc.collect()
    start = clock()
    for line in lines:
        reader.feed(line)
    return clock() - start


def run_ask_bench(clock: Clock = time.perf_counter) -> dict[str, Any]:
    """Both measurements over the recorded long stream (what `make bench` reports)."""
    body = recorded_long_stream()
    return {
        "throughput": measure_throughput(body, clock),
        "flatness": measure_flatness(body, clock),
        "projection": measure_projection(body, clock),
    }
