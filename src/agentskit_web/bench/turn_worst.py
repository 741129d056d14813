"""The `turn` section's worst case: the biggest session the bounds allow, 500 deltas.

Issue 23 measured one 64 kB submit on a grown session returning 137 MB over
11 s, and a generator emitting 500 deltas at once making 194 snapshots; issue
36 the same session under a model streaming a token every 20 ms: 173.6 MB in
323 lines, one full snapshot per token. This part replays those shapes
against the bounded server, in this process:

- the session is filled (straight into a real SQLite turn store) with
  question/answer pairs up to `TURN_SESSION_MAX_BYTES` minus the new question,
  which is a maximal `TURN_INPUT_MAX_CHARS` question;
- the generator yields 500 deltas, together just under the answer bound
  (`ASK_BACKEND_ANSWER_MAX_CHARS`): all at once (a burst), or paced like a
  streaming model at 10, 20 and 50 ms per token (`PACES`);
- the turn is driven through the raw ASGI app with a `send` that counts bytes
  and lines and keeps nothing, so the memory figure is the server's: the
  process's peak RSS (`VmHWM`, reset through `/proc/self/clear_refs`) minus
  its RSS just before the submit.

The same turn (same question, same generator) on an empty session is the
baseline printed beside each figure. First token is the time from the submit
to the first snapshot that carries answer text. Goals, for every generator:
response <= 16 MB; memory <= 64 MB above idle.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from .turn_backend import SITE, BenchRetriever

DELTAS: Final = 500
PACES: Final = (0.0, 0.010, 0.020, 0.050)
"""Seconds between deltas: 0 is a burst (no await between them), the rest a streaming model."""
RESPONSE_GOAL_BYTES: Final = 16 * 1024 * 1024
MEMORY_GOAL_BYTES: Final = 64 * 1024 * 1024
SESSION_ID: Final = "Wq7Zk3Lp9Xv2Nc5Rt8Hy4J"
FILLER_QUESTION_CHARS: Final = 5_000
FILLER_ANSWER_CHARS: Final = 11_000


class PacedGenerator:
    """Yields `DELTAS` deltas `pace` seconds apart; pace 0 never awaits (the answer at once)."""

    model = None

    def __init__(self, total_chars: int, pace: float) -> None:
        self.delta = "x" * (total_chars // DELTAS - 1) + " "
        self.pace = pace

    async def stream(self, request: Any) -> AsyncIterator[str]:
        for _ in range(DELTAS):
            if self.pace:
                await asyncio.sleep(self.pace)
            yield self.delta


class CountingStore:
    """Wraps a real `TurnSessionStore`, counting saves; everything else is the store's own."""

    def __init__(self, store: Any) -> None:
        self.inner = store
        self.saves = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def save(self, *args: Any, **kwargs: Any) -> bool:
        self.saves += 1
        saved: bool = await self.inner.save(*args, **kwargs)
        return saved


@dataclass(frozen=True, slots=True)
class TurnFigures:
    session_bytes: int
    duration: float
    saves: int
    lines: int
    response_bytes: int
    largest_line: int
    memory_bytes: int
    first_token: float
    """Seconds from the submit to the first snapshot carrying answer text."""
    status: str


def _rss(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _seed(store: Any, key: Any, budget: int) -> int:
    """Fill the session with question/answer pairs up to `budget` bytes of message JSON."""
    from ..protocol.wire_json import dump_json
    from ..server.persistence import SESSION_RECORD_MAX_MESSAGES

    messages: list[dict[str, Any]] = []
    turn = 0
    while True:
        turn += 1
        pair = [
            {
                "id": f"u-f{turn}",
                "role": "user",
                "content": "q" * FILLER_QUESTION_CHARS,
                "status": "complete",
                "createdAt": "2026-01-01T00:00:00.000Z",
                "metadata": {"turnId": f"f{turn}"},
            },
            {
                "id": f"a-f{turn}",
                "role": "assistant",
                "content": "a" * FILLER_ANSWER_CHARS,
                "status": "complete",
                "createdAt": "2026-01-01T00:00:00.000Z",
                "metadata": {"turnId": f"f{turn}"},
            },
        ]
        too_many = len(messages) + len(pair) > SESSION_RECORD_MAX_MESSAGES - 2
        if too_many or len(dump_json([*messages, *pair]).encode()) > budget:
            break
        messages.extend(pair)
    envelope = {
        "protocol": "agentskit.chat.session",
        "version": 1,
        "sessionId": key.session_id,
        "definitionId": SITE["assistant"]["id"],  # type: ignore[index]
        "definitionRevision": 1,
        "updatedAt": "2026-01-01T00:00:00.000Z",
        "cursor": 1,
        "confirmations": [],
    }
    if not store.save_sync(key, envelope, messages, "{}", None):
        raise RuntimeError("seeding the bench session failed")
    return len(dump_json(messages).encode())


async def _drive(app: Any, body: bytes) -> tuple[int, int, int, float, str]:
    """POST through the raw ASGI app; count lines and bytes, keep only the last line."""
    started = time.monotonic()
    first_token = 0.0
    lines = 0
    total = 0
    largest = 0
    last = b""
    sent = False
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # never disconnects
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal lines, total, largest, last, status, first_token
        if message["type"] == "http.response.start":
            status = message["status"]
            return
        chunk = message.get("body", b"")
        if chunk:
            if lines == 1:  # the first line is the question; this one has the first text
                first_token = time.monotonic() - started
            lines += chunk.count(b"\n")
            total += len(chunk)
            largest = max(largest, len(chunk))
            last = chunk

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/api/turn",
        "query_string": b"",
        "headers": [(b"content-type", b"application/json")],
        "client": ("127.0.0.1", 1),
    }
    await app.state.turn.submit_app(scope, receive, send)
    if status != 200:
        raise RuntimeError(f"the bench turn answered {status}")
    event = json.loads(last)
    outcome = event["payload"].get("status") or event["event"]
    return lines, total, largest, first_token, str(outcome)


def measure(worst: bool, interval: float, pace: float = 0.0) -> TurnFigures:
    """One turn, on the fullest session the bounds allow (`worst`) or on an empty one."""
    from ..protocol.wire_json import dump_json
    from ..server.ask_app import ASK_BACKEND_ANSWER_MAX_CHARS, create_ask_app
    from ..server.turn_app import mount_turn
    from ..server.turn_limits import TURN_INPUT_MAX_CHARS, TURN_SESSION_MAX_BYTES
    from ..server.turn_store import TurnSessionKey, TurnSessionStore

    question = "q" * TURN_INPUT_MAX_CHARS
    store = TurnSessionStore()
    counting = CountingStore(store)
    site = {**SITE, "persistence": {"mode": "disabled"}}
    app = create_ask_app(
        site,
        retriever=BenchRetriever(),
        generator=PacedGenerator(ASK_BACKEND_ANSWER_MAX_CHARS - 100, pace),
    )
    mount_turn(app, counting, snapshot_interval=interval)
    session_bytes = 0
    if worst:
        key = TurnSessionKey(
            str(site["siteId"]), "anonymous", SESSION_ID, client_key="ip:127.0.0.1"
        )
        question_bytes = len(dump_json([{"content": question, "x": "y" * 160}]).encode())
        session_bytes = _seed(store, key, TURN_SESSION_MAX_BYTES - question_bytes)
    body = json.dumps(
        {
            "protocol": "agentskit.chat.turn",
            "version": 1,
            "eventId": "e-worst",
            "sessionId": SESSION_ID,
            "turnId": "t-worst",
            "sequence": 0,
            "emittedAt": "2026-01-01T00:00:00Z",
            "event": "client.turn.submit",
            "payload": {"input": question},
        }
    ).encode()
    gc.collect()
    idle = _rss("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")
    started = time.monotonic()
    lines, total, largest, first_token, outcome = asyncio.run(_drive(app, body))
    duration = time.monotonic() - started
    peak = _rss("VmHWM")
    store.close()
    return TurnFigures(
        session_bytes=session_bytes,
        duration=duration,
        saves=counting.saves,
        lines=lines,
        response_bytes=total,
        largest_line=largest,
        memory_bytes=max(0, peak - idle),
        first_token=first_token,
        status=outcome,
    )


def worst_session_figures(interval: float, paces: tuple[float, ...] = PACES) -> dict[str, Any]:
    """For each pace, the empty-session baseline, then the worst session, in this process."""
    runs = {pace: {"empty": measure(False, interval, pace)} for pace in paces}
    for pace in paces:
        runs[pace]["worst"] = measure(True, interval, pace)
    return {"interval": interval, "runs": runs}


def _pace_name(pace: float) -> str:
    return "burst" if pace == 0 else f"{pace * 1000:.0f} ms/token"


def format_worst(figures: dict[str, Any]) -> str:
    interval = figures["interval"]
    mb = 1024 * 1024
    out = [
        f"turn, worst session the bounds allow vs empty session ({DELTAS} deltas, a"
        f" {figures.get('input_chars', 16384)}-char question, snapshot interval >="
        f" {interval * 1000:.0f} ms, real SQLite store, in process; goals: response <= 16 MB,"
        " RSS peak - idle <= 64 MB):",
        f"  {'generator':<14}{'session':<9}{'duration':>10}{'saves':>7}{'lines':>7}"
        f"{'response':>11}{'largest line':>14}{'RSS+':>9}{'first token':>13}  status",
    ]
    for pace, pair in figures["runs"].items():
        for name in ("empty", "worst"):
            row: TurnFigures = pair[name]
            ok = row.response_bytes <= RESPONSE_GOAL_BYTES and row.memory_bytes <= MEMORY_GOAL_BYTES
            out.append(
                f"  {_pace_name(pace):<14}{name:<9}{row.duration:>8.2f} s{row.saves:>7}"
                f"{row.lines:>7}{row.response_bytes / mb:>8.2f} MB{row.largest_line:>14,}"
                f"{row.memory_bytes / mb:>6.1f} MB{row.first_token * 1000:>10.0f} ms"
                f"  {row.status}{'' if ok else '  OVER GOAL'}"
            )
    return "\n".join(out)


def worst_json(figures: dict[str, Any]) -> dict[str, Any]:
    """The figures as JSON-ready data (`--json`)."""
    return {
        "interval": figures["interval"],
        "runs": {
            _pace_name(pace): {name: asdict(row) for name, row in pair.items()}
            for pace, pair in figures["runs"].items()
        },
    }


def main() -> int:
    """`python -m agentskit_web.bench.turn_worst`: this part alone (no browser)."""
    from ..server.turn_app import TURN_SNAPSHOT_INTERVAL_SECONDS

    print(format_worst(worst_session_figures(TURN_SNAPSHOT_INTERVAL_SECONDS)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["format_worst", "measure", "worst_json", "worst_session_figures"]
