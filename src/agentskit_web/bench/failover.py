"""An instance killed mid-answer, seen by a reader: the turn adapter the page runs, over httpx.

`kill_mid_answer(cluster, question)` submits a turn through the balancer
with the page's own `TurnAdapter` (its real resume attempts and backoff),
waits until text is streaming, finds the instance streaming it (its
`agentskit_active_streams{route="turn"}` gauge), reads the turn's lease end
from the shared session store, SIGKILLs that instance and keeps reading:
the adapter reconnects through the balancer (which retries the refused
connection on another instance) until a snapshot ends the turn. The result
says how the answer ended and when, relative to the kill and to the lease's
expiry. Used by `bench scale` (the failover figure) and the balancer tests.
"""

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Final

from ..chat.turn.adapter import TurnUpdate, create_turn_adapter
from ..server.turn_session_port import TurnSessionKey
from ..transports.httpx_transport import HttpxTransport
from .cluster import LocalCluster

TURN_PATH: Final = "/api/turn"
STREAMING_CHARS: Final = 40
"""Text the reader has before the kill: the answer is visibly under way."""
FAILOVER_TIMEOUT_SECONDS: Final = 60.0


@dataclass(slots=True)
class Failover:
    """What the reader saw after its instance was killed (times in seconds after the kill)."""

    killed: str
    session_id: str
    lease_seconds: float
    """The instances' `--turn-lease`."""
    lease_end_after_kill: float
    """When the turn's lease ran out (the last save before the kill + the lease length)."""
    ended_after_kill: float
    status: str
    error_code: str | None
    outcome: str | None
    """The settled turn's outcome in the session (`terminalTurns`), when the store says."""
    reconnects: int
    resumed: int
    kinds: list[str] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def after_lease(self) -> float:
        """Seconds from the lease's expiry to the reader's final state (the goal: <= 2 s)."""
        return self.ended_after_kill - self.lease_end_after_kill


def streaming_instance(cluster: LocalCluster) -> str | None:
    """The instance with a turn stream open now, if exactly one has."""
    gauge = 'agentskit_active_streams{route="turn"}'
    open_on = [m.name for m in cluster.members if m.running and cluster.counters(m.name).get(gauge)]
    return open_on[0] if len(open_on) == 1 else None


def _text_of(update: TurnUpdate) -> str:
    snapshot = update.snapshot
    if snapshot is None:
        return ""
    last = snapshot.payload.messages[-1] if snapshot.payload.messages else None
    return str(last.content) if last is not None and last.role == "assistant" else ""


def stored_session(cluster: LocalCluster, site_id: str, session_id: str) -> dict[str, Any]:
    """The session as stored: its envelope and messages (wire dicts)."""
    store = cluster.open_store()
    try:
        row = store.load_sync(TurnSessionKey(site_id, "anonymous", session_id))
    finally:
        store.close()
    if row is None:
        raise AssertionError(f"session {session_id} is not stored")
    return {"envelope": row.envelope.to_wire(), "messages": list(row.messages)}


async def _kill_mid_answer(
    cluster: LocalCluster, site_id: str, question: str, lease_seconds: float
) -> Failover:
    adapter = create_turn_adapter(
        endpoint=cluster.url + TURN_PATH, transport=HttpxTransport(), connect_timeout=30
    )
    session = adapter.new_session()
    stream = session.submit(question)
    killed = ""
    killed_at = lease_end = 0.0
    kinds: list[str] = []
    last: TurnUpdate | None = None
    loop = asyncio.get_running_loop()
    async with asyncio.timeout(FAILOVER_TIMEOUT_SECONDS):
        async for update in stream:
            kinds.append(update.kind)
            if update.kind == "snapshot":
                last = update
            if not killed and len(_text_of(update)) >= STREAMING_CHARS:
                name = await loop.run_in_executor(None, streaming_instance, cluster)
                if name is None:
                    continue
                envelope = stored_session(cluster, site_id, session.id)["envelope"]
                expires_ms = envelope["activeTurn"]["expiresAt"]
                cluster.member(name).kill()
                killed_at = time.time()
                killed = name
                # The last save may come after the read above: the lease may end a bit later.
                latest = stored_session(cluster, site_id, session.id)["envelope"]
                if latest.get("activeTurn"):
                    expires_ms = latest["activeTurn"]["expiresAt"]
                lease_end = expires_ms / 1000 - killed_at
    ended = time.time() - killed_at
    if not killed or last is None or last.snapshot is None:
        raise RuntimeError(f"the answer ended before an instance could be killed: {kinds}")
    payload = last.snapshot.payload
    stored = stored_session(cluster, site_id, session.id)
    terminal = stored["envelope"].get("terminalTurns") or []
    outcome = next(
        (t.get("outcome") for t in terminal if t.get("turnId") == last.snapshot.turn_id), None
    )
    return Failover(
        killed=killed,
        session_id=session.id,
        lease_seconds=lease_seconds,
        lease_end_after_kill=lease_end,
        ended_after_kill=ended,
        status=payload.status,
        error_code=payload.error.code if payload.error is not None else None,
        outcome=outcome,
        reconnects=kinds.count("reconnecting"),
        resumed=kinds.count("resumed"),
        kinds=kinds,
        messages=list(stored["messages"]),
    )


def kill_mid_answer(
    cluster: LocalCluster, site_id: str, question: str, lease_seconds: float
) -> Failover:
    """Run the scenario of the module doc (blocking) and return what the reader saw.

    `lease_seconds` is the cluster's `--turn-lease`, recorded with the result.
    """
    return asyncio.run(_kill_mid_answer(cluster, site_id, question, lease_seconds))


__all__ = ["Failover", "kill_mid_answer", "stored_session", "streaming_instance"]
