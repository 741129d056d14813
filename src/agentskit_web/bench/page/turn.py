"""In-page half of `make bench` section `turn`: client CPU and render work, turn vs Ask.

The host records, from the real reference server, the same 512-record answer
three ways (Ask NDJSON; turn snapshots without coalescing; turn snapshots
coalesced) and serves the bodies to this page. Here, in Pyodide:

- client CPU: the time the client's body path takes for each body, fed in
  4 KiB chunks. Ask: `AskBodyReader` (decode, project, encode). Turn:
  `TurnLineReader` + the session's `TurnSnapshotCursor` (every line decoded
  and validated) + the append-only diff that turns each accepted snapshot
  into the records it added. Both end with the same chunk strings for the
  conversation.
- render work: the widget mounted with the Ask adapter and with the turn
  adapter, over in-page transports delivering one line per chunk, and the
  time its DOM view spends applying events (`view.work_ms`) plus its DOM
  calls. Only what a snapshot added reaches the view, so the turn path's
  render work should match the Ask path's (goal: at most 1.2x).
"""

import asyncio
import gc
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Final

from ...chat.ask.body import AskBodyReader
from ...chat.turn.adapter import TurnLineReader, create_turn_adapter
from .figures import median

NETWORK_CHUNK_BYTES: Final = 4_096
RENDER_RUNS: Final = 5
RENDER_RATIO_GOAL: Final = 1.2
PREFIX: Final = "\x1eagentskit.chat.content/1\n"

Clock = Callable[[], float]


class _NoTransport:
    async def post(self, url: str, headers: Mapping[str, str], body: bytes) -> Any:
        raise RuntimeError("not used")

    async def get(self, url: str, headers: Mapping[str, str]) -> Any:
        raise RuntimeError("not used")


def _chunks(body: bytes, size: int = NETWORK_CHUNK_BYTES) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


def process_ask(chunks: list[bytes]) -> list[str]:
    """The Ask adapter's body path: the text chunks the conversation receives."""
    reader = AskBodyReader("application/x-ndjson")
    out = [c.get("content", "") for chunk in chunks for c in reader.feed(chunk)]
    out.extend(c.get("content", "") for c in reader.finish())
    return [c for c in out if c]


def process_turn(chunks: list[bytes], session_id: str, turn_id: str) -> list[str]:
    """The turn adapter's body path: lines -> cursor -> the records each snapshot added."""
    adapter = create_turn_adapter(
        endpoint="/api/turn", transport=_NoTransport(), session_id=session_id
    )
    session = adapter.session
    reader = TurnLineReader()
    shown = ""
    out: list[str] = []
    lines = [line for chunk in chunks for line in reader.feed(chunk)] + reader.finish()
    for line in lines:
        update = session.accept(line)
        snapshot = update.snapshot if update is not None else None
        if snapshot is None or snapshot.turn_id != turn_id:
            continue
        last = snapshot.payload.messages[-1]
        if last.role == "assistant" and last.content != shown and last.content.startswith(shown):
            out.append(last.content[len(shown) :])
            shown = last.content
    return out


def _best_ms(work: Callable[[], object], clock: Clock, repeats: int) -> float:
    runs = []
    for _ in range(repeats):
        gc.collect()
        start = clock()
        work()
        runs.append((clock() - start) * 1000)
    return min(runs)


def measure_cpu(
    bodies: Mapping[str, bytes], session_id: str, turn_id: str, clock: Clock, repeats: int = 3
) -> dict[str, Any]:
    """Best-of-`repeats` ms of each body's client path, and that both paths agree."""
    ask_chunks = _chunks(bodies["ask"])
    result: dict[str, Any] = {}
    ask_out = process_ask(ask_chunks)
    result["ask"] = {"ms": _best_ms(lambda: process_ask(ask_chunks), clock, repeats)}
    for name in ("turn", "turnCoalesced"):
        chunks = _chunks(bodies[name])
        turn_out = process_turn(chunks, session_id, turn_id)
        runs = 1 if name == "turn" else repeats  # the uncoalesced body is large

        def work(c: list[bytes] = chunks) -> object:
            return process_turn(c, session_id, turn_id)

        result[name] = {
            "ms": _best_ms(work, clock, runs),
            "textRecordsAgree": _texts(turn_out) == _texts(ask_out),
        }
    return result


def _texts(chunks: list[str]) -> list[str]:
    """The text records of a chunk list (the source list differs in its instance id)."""
    import json

    records = "".join(chunks).removeprefix(PREFIX).split("\n")
    return [r for r in records if r and json.loads(r).get("kind") == "text"]


# --------------------------------------------------------------------------- render work


class _Response:
    def __init__(self, lines: list[bytes]) -> None:
        self._lines = lines
        self.status = 200
        self.headers = {"content-type": "application/x-ndjson"}

    async def chunks(self) -> AsyncIterator[bytes]:
        for line in self._lines:
            await asyncio.sleep(0)
            yield line

    async def cancel(self) -> None:
        return None


class LineTransport:
    """Delivers a recorded body one line per chunk (POST and GET alike)."""

    def __init__(self, body: bytes) -> None:
        self._lines = [line + b"\n" for line in body.split(b"\n") if line]

    async def post(self, url: str, headers: Mapping[str, str], body: bytes) -> _Response:
        return _Response(self._lines)

    async def get(self, url: str, headers: Mapping[str, str]) -> _Response:
        return _Response(self._lines)


async def _render_once(adapter: Any, gc_paused: bool = False) -> dict[str, float]:
    import js

    from ...browser.widget import mount
    from ...chat.definition import define_chat

    host = js.document.createElement("agentskit-ask")
    js.document.body.appendChild(host)
    widget = await mount(host, define_chat(id="bench", adapter=adapter))
    gc.collect()
    if gc_paused:
        gc.disable()
    try:
        await widget.conversation.send("A question")
    finally:
        gc.enable()
    result = {
        "renderMs": float(widget.view.work_ms),
        "domCalls": float(widget.builder.calls),
        "status": 1.0 if widget.conversation.messages[-1].status == "complete" else 0.0,
    }
    widget.unmount()
    widget.host.remove()
    return result


async def measure_render(
    bodies: Mapping[str, bytes], session_id: str, turn_id: str
) -> dict[str, Any]:
    """Median render work of the widget over each body (Ask adapter vs turn adapter)."""
    from ...chat.ask.adapter import create_ask_adapter

    def ask() -> Any:
        return create_ask_adapter(endpoint="/api/ask", transport=LineTransport(bodies["ask"]))

    def turn(name: str) -> Callable[[], Any]:
        return lambda: create_turn_adapter(
            endpoint="/api/turn",
            transport=LineTransport(bodies[name]),
            session_id=session_id,
            turn_ids=lambda: turn_id,
        )

    await _render_once(ask())  # warm-up: imports, markdown-it, first layouts
    out: dict[str, Any] = {}
    makers = (("ask", ask), ("turn", turn("turn")), ("turnCoalesced", turn("turnCoalesced")))
    runs: dict[str, list[dict[str, float]]] = {name: [] for name, _ in makers}
    paused: dict[str, list[float]] = {name: [] for name, _ in makers}
    # Interleaved (Ask, turn, coalesced, Ask, ...) so a slow spell of the machine hits all
    # three alike. Each is also run with Python's cycle collector paused: the DOM view's
    # own work, without the collections the decoding's garbage triggers while it runs.
    for _ in range(RENDER_RUNS):
        for name, make in makers:
            runs[name].append(await _render_once(make()))
            paused[name].append((await _render_once(make(), gc_paused=True))["renderMs"])
    for name, _ in makers:
        out[name] = {key: median(r[key] for r in runs[name]) for key in runs[name][0]}
        out[name]["renderMsGcPaused"] = median(paused[name])
    return out


async def run_turn_bench(urls: Mapping[str, str], session_id: str, turn_id: str) -> dict[str, Any]:
    """Fetch the recorded bodies from this origin, then measure CPU and render work."""
    import js

    bodies: dict[str, bytes] = {}
    for name, url in urls.items():
        response = await js.fetch(url)
        bodies[name] = bytes((await response.arrayBuffer()).to_py())

    def clock() -> float:
        return float(js.performance.now()) / 1000

    cpu = measure_cpu(bodies, session_id, turn_id, clock)
    render = await measure_render(bodies, session_id, turn_id)
    return {"cpu": cpu, "render": render, "renderGoal": RENDER_RATIO_GOAL}
