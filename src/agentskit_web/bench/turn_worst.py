"""The `turn` section's worst case: the biggest session the bounds allow, 500 deltas at once.

Issue 23 measured one 64 kB submit on a grown session returning 137 MB over
11 s, and a generator emitting 500 deltas at once making 194 snapshots. This
part replays that shape against the bounded server, in this process:

- the session is filled (straight into a real SQLite turn store) with
  question/answer pairs up to `TURN_SESSION_MAX_BYTES` minus the new question,
  which is a maximal `TURN_INPUT_MAX_CHARS` question;
- the generator yields 500 deltas without awaiting, together just under the
  answer bound (`ASK_BACKEND_ANSWER_MAX_CHARS`), as a model's burst does;
- the turn is driven through the raw ASGI app with a `send` that counts bytes
  and lines and keeps nothing, so the memory figure is the server's: the
  process's peak RSS (`VmHWM`, reset through `/proc/self/clear_refs`) minus
  its RSS just before the submit.

The same turn (same question, same generator) on an empty session is the
baseline printed beside each figure. Goals: snapshots <= duration / interval
+ 2; response <= 16 MB; memory <= 64 MB above idle.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .turn import SITE, BenchRetriever

DELTAS: Final = 500
RESPONSE_GOAL_BYTES: Final = 16 * 1024 * 1024
MEMORY_GOAL_BYTES: Final = 64 * 1024 * 1024
SESSION_ID: Final = "Wq7Zk3Lp9Xv2Nc5Rt8Hy4J"
FILLER_QUESTION_CHARS: Final = 5_000
FILLER_ANSWER_CHARS: Final = 11_000


class BurstGenerator:
    """Yields `DELTAS` deltas without awaiting between them: the whole answer at once."""

    model = None

    def __init__(self, total_chars: int) -> None:
        self.delta = "x" * (total_chars // DELTAS - 1) + " "

    async def stream(self, request: Any) -> AsyncIterator[str]:
        for _ in range(DELTAS):
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
    status: str
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


async def _drive(app: Any, body: bytes) -> tuple[int, int, int, str]:
    """POST through the raw ASGI app; count lines and bytes, keep only the last line."""
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
        nonlocal lines, total, largest, last, status
        if message["type"] == "http.response.start":
            status = message["status"]
            return
        chunk = message.get("body", b"")
        if chunk:
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
    return lines, total, largest, str(outcome)


def measure(worst: bool, interval: float) -> TurnFigures:
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
        generator=BurstGenerator(ASK_BACKEND_ANSWER_MAX_CHARS - 100),
    )
    mount_turn(app, counting, snapshot_interval=interval)  # type: ignore[arg-type]
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
    lines, total, largest, outcome = asyncio.run(_drive(app, body))
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
        status=outcome,
    )


def worst_session_figures(interval: float) -> dict[str, Any]:
    """The empty-session baseline first, then the worst session, in this process."""
    empty = measure(False, interval)
    worst = measure(True, interval)
    return {"interval": interval, "empty": empty, "worst": worst}


def format_worst(figures: dict[str, Any]) -> str:
    interval = figures["interval"]
    empty: TurnFigures = figures["empty"]
    worst: TurnFigures = figures["worst"]
    snapshot_goal = worst.duration / interval + 2
    mb = 1024 * 1024

    def verdict(ok: bool) -> str:
        return "ok" if ok else "OVER GOAL"

    rows = [
        ("stored session before", f"{empty.session_bytes:,} B", f"{worst.session_bytes:,} B", ""),
        ("turn duration", f"{empty.duration:.3f} s", f"{worst.duration:.3f} s", ""),
        (
            "saves (snapshots + first)",
            f"{empty.saves}",
            f"{worst.saves}",
            f"goal <= {snapshot_goal:.0f} (duration / {interval * 1000:.0f} ms + 2): "
            + verdict(worst.saves <= snapshot_goal),
        ),
        ("lines sent", f"{empty.lines}", f"{worst.lines}", ""),
        (
            "response",
            f"{empty.response_bytes / mb:.2f} MB",
            f"{worst.response_bytes / mb:.2f} MB",
            "goal <= 16 MB: " + verdict(worst.response_bytes <= RESPONSE_GOAL_BYTES),
        ),
        ("largest line", f"{empty.largest_line:,} B", f"{worst.largest_line:,} B", ""),
        (
            "server RSS peak - idle",
            f"{empty.memory_bytes / mb:.1f} MB",
            f"{worst.memory_bytes / mb:.1f} MB",
            "goal <= 64 MB: " + verdict(worst.memory_bytes <= MEMORY_GOAL_BYTES),
        ),
        ("final status", empty.status, worst.status, ""),
    ]
    out = [
        f"turn, worst session the bounds allow vs empty session ({DELTAS} deltas at once,"
        f" a {figures.get('input_chars', 16384)}-char question, snapshot interval"
        f" {interval * 1000:.0f} ms, real SQLite store, in process):",
        f"  {'':<28}{'empty session':>16}{'worst session':>16}",
    ]
    for name, a, b, note in rows:
        out.append(f"  {name:<28}{a:>16}{b:>16}  {note}".rstrip())
    return "\n".join(out)


def main() -> int:
    """`python -m agentskit_web.bench.turn_worst`: this part alone (no browser)."""
    from ..server.turn_app import TURN_SNAPSHOT_INTERVAL_SECONDS

    print(format_worst(worst_session_figures(TURN_SNAPSHOT_INTERVAL_SECONDS)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["format_worst", "measure", "worst_session_figures"]
