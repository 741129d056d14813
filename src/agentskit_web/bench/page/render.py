"""In-page render benchmark of the Ask widget (run inside Pyodide in Chromium by `make bench`).

Two numbers:

- chunk-to-paint latency: a long answer arrives one NDJSON text event per
  chunk, spaced by more than a frame. For each chunk, the time from its bytes
  being handed to the adapter (the moment `fetch`'s reader would resolve) to
  the frame that shows its text having been painted: the widget renders it
  synchronously, then a `requestAnimationFrame` callback posts a message,
  which runs after that frame's paint. Median and p95 (goal: under 16 ms).
- render work: the time the DOM view spends applying events for a 32-record
  answer versus a 4-record one (delivered as fast as possible), median of a
  few runs each. Linear rendering gives a ratio near 8 (goal: <= 9). Both
  answers fit the display bounds (render_limits.py), so rendering is measured,
  not the cut.

The transport is in-page (`PacedTransport`), so nothing but the widget's own
pipeline (decode, project, encode, controller, render) sits between arrival
and paint, and the benchmark needs no Ask server.
"""

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final

from ...browser.widget import AskWidget, mount
from ...chat.conversation import ConversationEvent, PartsAppended
from ...chat.definition import define_chat
from .figures import median, ratio

# Both answers fit the display bounds (chat/view/render_limits.py): past them a message is
# cut, and what would be measured is the cut, not rendering.
LATENCY_RECORDS: Final = 40
LATENCY_INTERVAL_MS: Final = 24.0
WORK_SIZES: Final = (4, 32)
WORK_RUNS: Final = 3
FRAME_GOAL_MS: Final = 16.0
RATIO_GOAL: Final = 9.0

_SENTENCES: Final = (
    "The widget renders **markdown** safely with `markdown-it-py`. ",
    "See [the embedding guide](/docs/embedding.html#attributes) for every attribute. ",
    "Sources appear as links; nothing the model sends can run as code. ",
    "Answers stream token by token, and only new text is painted. ",
)


def answer_events(records: int) -> list[bytes]:
    """`records` text events of a realistic markdown answer (a block every 3 records), `done`."""
    lines = []
    for index in range(records):
        delta = _SENTENCES[index % len(_SENTENCES)] * 2
        if index % 3 == 2:
            delta += "\n\n"
        if index % 24 == 23:
            delta = f"- item {index}\n- another item\n\n```python\nprint({index})\n```\n\n"
        lines.append(json.dumps({"type": "text", "delta": delta}).encode() + b"\n")
    lines.append(b'{"type":"done"}\n')
    return lines


class _Response:
    def __init__(self, transport: "PacedTransport") -> None:
        self._transport = transport
        self.status = 200
        self.headers = {"content-type": "application/x-ndjson"}

    async def chunks(self) -> AsyncIterator[bytes]:
        transport = self._transport
        for chunk in transport.chunks:
            await asyncio.sleep(transport.interval_ms / 1000)
            transport.arrivals.append(transport.now())
            yield chunk

    async def cancel(self) -> None:
        return None


class PacedTransport:
    """An Ask transport that delivers prepared chunks, one per interval, stamping arrivals."""

    def __init__(self, chunks: list[bytes], interval_ms: float) -> None:
        import js

        self.chunks = chunks
        self.interval_ms = interval_ms
        self.arrivals: list[float] = []
        self._performance = js.performance

    def now(self) -> float:
        return float(self._performance.now())

    async def post(self, _url: str, _headers: Mapping[str, str], _body: bytes) -> _Response:
        return _Response(self)


class _PaintProbe:
    """Times when each chunk's frame has been painted (rAF, then a posted message)."""

    def __init__(self, widget: AskWidget) -> None:
        import js
        from pyodide.ffi import create_proxy

        self._js = js
        self.rendered: list[float] = []
        self.painted: dict[int, float] = {}
        self.frames: dict[int, float] = {}  # the frame's start (the rAF timestamp)
        self._channel = js.MessageChannel.new()
        self._on_message = create_proxy(self._message)
        self._channel.port1.onmessage = self._on_message
        self._frame = create_proxy(self._after_frame)
        self._pending: list[int] = []
        widget.conversation.subscribe(self._event)

    def _event(self, event: ConversationEvent) -> None:
        if not isinstance(event, PartsAppended):
            return
        index = len(self.rendered)
        self.rendered.append(float(self._js.performance.now()))
        self._pending.append(index)
        if len(self._pending) == 1:
            self._js.requestAnimationFrame(self._frame)

    def _after_frame(self, timestamp: float) -> None:
        indexes, self._pending = self._pending, []
        for index in indexes:
            self.frames[index] = float(timestamp)
        from pyodide.ffi import to_js

        self._channel.port2.postMessage(to_js(indexes))

    def _message(self, event: Any) -> None:
        now = float(self._js.performance.now())
        for index in event.data.to_py():
            self.painted[int(index)] = now

    def close(self) -> None:
        self._channel.port1.onmessage = None
        self._on_message.destroy()
        self._frame.destroy()


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def _new_widget(transport: PacedTransport) -> AskWidget:
    import js

    from ...chat.ask.adapter import create_ask_adapter

    host = js.document.createElement("agentskit-ask")
    js.document.body.appendChild(host)
    adapter = create_ask_adapter(endpoint="/api/ask", transport=transport)
    return await mount(host, define_chat(id="bench", adapter=adapter))


def _remove(widget: AskWidget) -> None:
    widget.unmount()
    widget.host.remove()


async def measure_latency(
    records: int = LATENCY_RECORDS, interval_ms: float = LATENCY_INTERVAL_MS
) -> dict[str, Any]:
    """Chunk arrival -> painted, per chunk, over a long answer."""
    transport = PacedTransport(answer_events(records), interval_ms)
    widget = await _new_widget(transport)
    probe = _PaintProbe(widget)
    await widget.conversation.send("A long question")
    for _ in range(100):  # let the last frames paint
        if len(probe.painted) >= len(probe.rendered):
            break
        await asyncio.sleep(0.02)
    probe.close()
    count = min(len(transport.arrivals), len(probe.rendered))
    # A chunk whose frame never reported back is counted and printed, never silently dropped.
    unpainted = [i for i in range(count) if i not in probe.painted]
    latencies = [
        probe.painted[i] - transport.arrivals[i] for i in range(count) if i in probe.painted
    ]
    to_render = [probe.rendered[i] - transport.arrivals[i] for i in range(count)]
    # The frame's own work (style, layout, paint) from its start until painted; the rest of
    # the latency is waiting for the display's next frame, which no renderer can avoid.
    frame_work = [probe.painted[i] - probe.frames[i] for i in range(count) if i in probe.painted]
    waits = [probe.frames[i] - probe.rendered[i] for i in range(count) if i in probe.frames]
    _remove(widget)
    return {
        "chunks": count,
        "painted": len(latencies),
        "unpainted": len(unpainted),
        "medianMs": median(latencies),
        "p95Ms": _percentile(latencies, 0.95),
        "maxMs": max(latencies),
        "renderedMedianMs": median(to_render),
        "renderedP95Ms": _percentile(to_render, 0.95),
        "frameWorkMedianMs": median(frame_work),
        "frameWorkP95Ms": _percentile(frame_work, 0.95),
        "frameWaitMedianMs": median(waits),
        "frameWaitP95Ms": _percentile(waits, 0.95),
        "goalMs": FRAME_GOAL_MS,
    }


async def measure_work(records: int) -> dict[str, float]:
    """DOM view time and whole-turn time for one answer of `records` records."""
    transport = PacedTransport(answer_events(records), 0.0)
    widget = await _new_widget(transport)
    started = transport.now()
    await widget.conversation.send("A question")
    total = transport.now() - started
    work = widget.view.work_ms
    calls = widget.builder.calls
    _remove(widget)
    return {"renderMs": work, "turnMs": total, "domCalls": float(calls)}


async def run_render_bench() -> dict[str, Any]:
    """Both measures; the JSON-ready result `make bench` prints."""
    await measure_work(16)  # warm-up: imports, markdown-it, first layouts
    work: dict[str, Any] = {}
    for size in WORK_SIZES:
        runs = [await measure_work(size) for _ in range(WORK_RUNS)]
        work[str(size)] = {key: median(run[key] for run in runs) for key in runs[0]}
    small, large = (work[str(size)] for size in WORK_SIZES)
    latency = await measure_latency()
    return {
        "latency": latency,
        "work": work,
        "workRatio": ratio(large["renderMs"], small["renderMs"]),
        "turnRatio": ratio(large["turnMs"], small["turnMs"]),
        "domCallRatio": ratio(large["domCalls"], small["domCalls"]),
        "ratioGoal": RATIO_GOAL,
    }
