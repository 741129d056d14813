"""The turn runner: starting a turn on a stored session, running it, ending it.

`TurnRunner` owns what outlives a request: the turns this instance runs
(`runs`, followed by the responses; `tasks`, detached from them), the lease it
takes and renews in the session store, the coalesced snapshots saved with a
compare-and-set before they are sent, the shutdown deadline that ends a turn as
interrupted, and settling a turn whose lease expired on another instance. It
sees the store only through the port (`turn_session_port`), so SQLite and
PostgreSQL behave alike. See docs/design/turn.md and docs/design/session-store.md.
"""

import asyncio
import collections
import contextlib
import hashlib
import logging
import math
import os
import secrets
import socket
import traceback
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import anyio

from ..answering.chunk import Found, Passage
from ..answering.decline import CLOSEST_MESSAGE
from ..protocol.content import ASSISTANT_CONTENT_PREFIX, AssistantContentEncoder
from ..protocol.content import decode_assistant_content as _decode_content
from ..protocol.dates import format_memory_datetime
from ..protocol.diagnostics import ProtocolError
from ..protocol.limits import ASSISTANT_CONTENT_MAX_RECORDS, SAFE_ID_MAX_CHARS
from ..protocol.text_metrics import js_length
from ..protocol.turn import create_snapshot_event, decode_turn_event, encode_turn_event
from ..protocol.wire_json import dump_json
from .ask_app import (
    ASK_BACKEND_ANSWER_MAX_CHARS,
    MESSAGES,
    AskEndpoint,
    ShutdownWatch,
    _close_quietly,
    _Reject,
)
from .generators import ChatTurn, GenerationRequest
from .metrics import MetricRecorder
from .persistence import SESSION_RECORD_MAX_MESSAGES, PersistenceError
from .turn_errors import (
    CHAT_TURN_FAILED,
    CHAT_TURN_INTERRUPTED,
    SERVER_INTERNAL,
    SESSION_BUSY,
    SESSION_CONFLICT,
    TurnErrorSpec,
)
from .turn_limits import (
    TURN_STREAMING_SHARE,
    RunningTurns,
)
from .turn_requests import (
    BAD_LINEAGE,
    SESSION_TOO_LARGE,
    STORE_FULL,
    TURN_ID_USED,
    Reservation,
    Submit,
    TurnReject,
)
from .turn_session_port import StoreFull, TurnSessionKey, TurnSessionRow, TurnSessionStorePort

_LOG: Final = logging.getLogger("agentskit_web.turn")
TURN_LEASE_SECONDS: Final = 10.0
"""Server policy: an `activeTurn` lease lasts this long; every save renews it, and a turn
that has not saved for a third of it (a model thinking) renews it with a snapshot of its
own. Shorter than the adapter's resume window (15.7 s), so a reader whose instance died
is told the answer was interrupted before the adapter gives up resuming."""
TURN_LEASE_RENEW_FRACTION: Final = 1 / 3
"""A running turn renews its lease when this fraction of it passed without a save."""
TURN_SNAPSHOT_INTERVAL_SECONDS: Final = 0.016
"""Server policy: at most one streaming snapshot per this interval (about one frame)."""
TURN_TEXT_RECORD_BUDGET: Final = ASSISTANT_CONTENT_MAX_RECORDS - 2
"""Text records streamed one per delta; past them the rest of the text waits for the final
snapshot, merged into one record, and the source list takes the last one."""
SESSION_DEFINITION_REVISION: Final = 1


def _now_ms(endpoint: AskEndpoint) -> int:
    return int(endpoint.clock.wall() * 1000)


def _wall_iso(endpoint: AskEndpoint) -> str:
    return format_memory_datetime(datetime.fromtimestamp(endpoint.clock.wall(), UTC))


def _event_id() -> str:
    return "evt-" + secrets.token_hex(8)


def _estimate_tokens(chars: int) -> int:
    """Generators report no token counts; usage is estimated as one token per 4 chars."""
    return math.ceil(chars / 4)


def _turn_of(message: Mapping[str, Any]) -> str | None:
    metadata = message.get("metadata")
    value = metadata.get("turnId") if isinstance(metadata, Mapping) else None
    return value if isinstance(value, str) else None


def _plain_text(content: str) -> str:
    """An assistant message as the generator's history sees it: its text parts.

    The parts are joined as they were streamed, without a separator: each delta
    is its own record, so a separator would split the answer at every token.
    """
    if not content.startswith("\x1e"):
        return content
    decoded = _decode_content(content)
    if not decoded.ok:
        return ""
    return "".join(p["text"] for p in decoded.parts if p["kind"] == "text").strip()


RUN_RETAINED_LINES: Final = 2
"""Lines a running turn keeps for followers: the latest snapshot and a closing diagnostic.

Every snapshot is the whole session, so a follower that falls behind loses
nothing by skipping to the newest; keeping every line sent (as before) held
the whole response in memory until the turn ended."""


@dataclass(slots=True)
class TurnRun:
    """A running turn's newest lines; followers wait for newer ones until `done`."""

    client: str = ""
    """The client key whose running-turn slot the run releases when it ends."""
    lines: collections.deque[bytes] = field(
        default_factory=lambda: collections.deque(maxlen=RUN_RETAINED_LINES)
    )
    count: int = 0
    """Lines pushed so far; the retained ones are the last `len(lines)` of them."""
    done: bool = False
    _changed: anyio.Event = field(default_factory=anyio.Event)

    def push(self, line: str) -> int:
        """Send `line` to the followers; its size on the wire, in bytes."""
        data = (line + "\n").encode()
        self.lines.append(data)
        self.count += 1
        self._signal()
        return len(data)

    def finish(self) -> None:
        self.done = True
        self._signal()

    def _signal(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    async def follow(self, start: int) -> AsyncIterator[bytes]:
        """Lines from number `start` on, skipping to the oldest retained one when behind."""
        index = start
        while True:
            while index < self.count:
                first = self.count - len(self.lines)
                index = max(index, first)
                yield self.lines[index - first]
                index += 1
            if self.done:
                return
            await self._changed.wait()


@dataclass(slots=True)
class TurnState:
    """What a turn writes on every save: the session, the messages, the answer so far."""

    key: TurnSessionKey
    envelope: dict[str, Any]
    base: list[dict[str, Any]]
    assistant: dict[str, Any]
    turn_id: str
    lineage: dict[str, Any]
    question: str
    history: tuple[ChatTurn, ...]
    prompt_chars: int
    encoder: AssistantContentEncoder = field(default_factory=AssistantContentEncoder)
    content: list[str] = field(default_factory=lambda: [ASSISTANT_CONTENT_PREFIX])
    answer_chars: int = 0
    pending: list[str] = field(default_factory=list)
    save_seconds: float = 0.0
    """How long the last save took: the snapshot clock waits at least this long."""
    saved_at: float = 0.0
    """When the last save ended (monotonic): the lease is renewed when none came for a while."""
    commit_lock: anyio.Lock = field(default_factory=anyio.Lock)
    """The coalescer and the lease renewal both save: one compare-and-set at a time."""
    sent_bytes: int = 0
    """Bytes of the lines sent so far (the first one and the streaming snapshots)."""
    line_bytes: int = 0
    """Bytes of the last snapshot sent: the snapshot clock waits in proportion to it."""
    over_budget: bool = False
    """The streaming budget is spent: the rest of the answer waits for the final snapshot."""

    @property
    def cursor(self) -> int:
        return int(self.envelope["cursor"])

    def messages(self) -> list[dict[str, Any]]:
        return [*self.base, {**self.assistant, "content": "".join(self.content)}]


class TurnRunner:
    """Starts, runs and ends turns against the session store; one per turn endpoint."""

    def __init__(
        self,
        ask: AskEndpoint,
        store: TurnSessionStorePort,
        *,
        lease_seconds: float,
        snapshot_interval: float,
        running: RunningTurns,
        session_max_bytes: int,
        instance_id: str,
        response_max_bytes: int,
    ) -> None:
        self.ask = ask
        self.streaming_budget = int(response_max_bytes * TURN_STREAMING_SHARE)
        """Bytes the first line and the streaming snapshots may take; the rest ends the turn."""
        self.byte_rate = self.streaming_budget / ask.site.request_timeout
        """Bytes per second that spread the streaming budget over the turn's time bound."""
        self.store = store
        self.lease_seconds = lease_seconds
        self.snapshot_interval = snapshot_interval
        self.running = running
        self.session_max_bytes = session_max_bytes
        self.instance_id = instance_id
        """Who holds the leases this runner takes (stored with each leased session)."""
        self.runs: dict[TurnSessionKey, TurnRun] = {}
        self.tasks: set[asyncio.Task[None]] = set()

    async def load(self, key: TurnSessionKey) -> TurnSessionRow | None:
        try:
            return await self.store.load(key)
        except PersistenceError:
            raise TurnReject.of(SERVER_INTERNAL) from None

    async def save(
        self,
        key: TurnSessionKey,
        envelope: dict[str, Any],
        messages: list[dict[str, Any]],
        line: str,
        expected: int | None,
    ) -> bool:
        return await self.store.save(
            key, envelope, messages, line, expected, holder=self.instance_id
        )

    def lease_expired(self, row: TurnSessionRow) -> bool:
        active = row.envelope.active_turn
        return active is not None and active.expires_at <= _now_ms(self.ask)

    async def settle_expired(
        self, key: TurnSessionKey, row: TurnSessionRow
    ) -> TurnSessionRow | None:
        """End an expired lease's turn as interrupted; None if another writer won.

        The lease's holder stopped saving (it died, or stalled past the lease):
        its unfinished answer is marked `error`, the snapshot says
        CHAT_TURN_INTERRUPTED (retryable: the reader gets Retry), and the
        envelope records the turn as `indeterminate`. One compare-and-set, so
        of several instances settling at once one writes it; the holder, if it
        is still alive, loses its next save and stops.
        """
        envelope = row.envelope.to_wire()
        active = envelope.pop("activeTurn")
        turn_id = active["turnId"]
        envelope["terminalTurns"] = _terminal(envelope, turn_id, "indeterminate")
        envelope["cursor"] = row.cursor + 1
        envelope["updatedAt"] = _wall_iso(self.ask)
        messages = [
            {**m, "status": "error"}
            if _turn_of(m) == turn_id and m.get("status") == "streaming"
            else m
            for m in row.messages
        ]
        line = self._snapshot_line(
            key.session_id,
            turn_id,
            envelope["cursor"],
            messages,
            "error",
            {"promptTokens": 0, "completionTokens": 0, "totalTokens": 0},
            _last_lineage(row.last_snapshot),
            CHAT_TURN_INTERRUPTED.to_wire(),
        )
        try:
            saved = await self.save(key, envelope, messages, line, row.cursor)
        except PersistenceError:
            raise TurnReject.of(SERVER_INTERNAL) from None
        if not saved:
            return None
        return TurnSessionRow(row.envelope.model_validate(envelope), tuple(messages), line)

    async def start(self, submit: Submit, reservation: Reservation) -> TurnRun:
        event = submit.event
        key = TurnSessionKey(
            self.ask.site.site_id,
            submit.principal_owner,
            event.session_id,
            client_key=reservation.client or "",
        )
        row = await self.load(key)
        if row is not None and row.envelope.active_turn is not None:
            if not self.lease_expired(row) or key in self.runs:
                raise TurnReject.of(SESSION_BUSY)
            row = await self.settle_expired(key, row)
            if row is None:
                raise TurnReject.of(SESSION_CONFLICT)
        messages = list(row.messages) if row is not None else []
        turn_id = event.turn_id
        if row is not None and _turn_used(row, turn_id):
            raise TurnReject.of(TURN_ID_USED)
        base, question = self._apply_lineage(messages, submit)
        created = _wall_iso(self.ask)
        if question is None:
            question = event.payload.input
            base.append(
                {
                    "id": turn_part_id("u-", turn_id),
                    "role": "user",
                    "content": question,
                    "status": "complete",
                    "createdAt": created,
                    "metadata": {"turnId": turn_id},
                }
            )
        base = _bounded(base)
        if len(dump_json(base).encode()) > self.session_max_bytes:
            raise TurnReject.of(SESSION_TOO_LARGE)
        history = tuple(
            ChatTurn(
                m["role"], _plain_text(m["content"]) if m["role"] == "assistant" else m["content"]
            )
            for m in base[:-1]
            if m["role"] in ("user", "assistant") and m.get("status") == "complete"
        )
        envelope = self._envelope(event.session_id, row, turn_id)
        state = TurnState(
            key=key,
            envelope=envelope,
            base=base,
            assistant={  # its content is the encoder's, joined by TurnState.messages()
                "id": turn_part_id("a-", turn_id),
                "role": "assistant",
                "status": "streaming",
                "createdAt": created,
                "metadata": {"turnId": turn_id},
            },
            turn_id=turn_id,
            lineage=submit.lineage,
            question=question,
            history=history,
            prompt_chars=js_length(question) + sum(js_length(t.content) for t in history),
        )
        line = self._state_line(state, "streaming")
        try:
            saved = await self.save(
                key, envelope, state.messages(), line, row.cursor if row else None
            )
        except StoreFull as full:
            raise TurnReject.of(STORE_FULL, **{"retry-after": str(full.retry_after)}) from None
        except (PersistenceError, ValueError) as error:
            _log_failure("the first save failed", key.session_id, turn_id, error)
            raise TurnReject.of(SERVER_INTERNAL) from None
        if not saved:
            raise TurnReject.of(SESSION_CONFLICT)
        run = TurnRun(client=reservation.client or "")
        reservation.client = None  # the run releases it when the turn ends
        state.sent_bytes = state.line_bytes = run.push(line)
        self.runs[key] = run
        task = asyncio.get_running_loop().create_task(self._run(state, run))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return run

    def _apply_lineage(
        self, messages: list[dict[str, Any]], submit: Submit
    ) -> tuple[list[dict[str, Any]], str | None]:
        """The messages the new turn starts from, and the question when lineage fixes it."""
        lineage = submit.lineage
        operation = lineage["operation"]
        if operation == "submit":
            return messages, None
        parent = lineage["parentTurnId"]
        source = lineage["sourceMessageId"]
        index = next((i for i, m in enumerate(messages) if m["id"] == source), None)
        if index is None or _turn_of(messages[index]) != parent:
            raise TurnReject.of(BAD_LINEAGE)
        target = messages[index]
        if operation == "edit":
            if target["role"] != "user":
                raise TurnReject.of(BAD_LINEAGE)
            return messages[:index], None
        if operation == "regenerate":
            # The last answer, which must be the parent turn's.
            if target["role"] != "assistant" or index != len(messages) - 1:
                raise TurnReject.of(BAD_LINEAGE)
            question = _question_before(messages, index)
            if question is None:
                raise TurnReject.of(BAD_LINEAGE)
            return messages[:index], question
        # retry: the source is the failed turn's user message; its answer failed (or is missing).
        after = messages[index + 1 :]
        failed = all(m.get("status") == "error" for m in after) and len(after) <= 1
        if target["role"] != "user" or not failed:
            raise TurnReject.of(BAD_LINEAGE)
        return messages[: index + 1], target["content"]

    def _envelope(
        self, session_id: str, row: TurnSessionRow | None, turn_id: str
    ) -> dict[str, Any]:
        previous = row.envelope.to_wire() if row is not None else None
        envelope: dict[str, Any] = {
            "protocol": "agentskit.chat.session",
            "version": 1,
            "sessionId": session_id,
            "definitionId": self.ask.site.assistant_id,
            "definitionRevision": SESSION_DEFINITION_REVISION,
            "updatedAt": _wall_iso(self.ask),
            "cursor": (row.cursor if row is not None else 0) + 1,
            "activeTurn": {"turnId": turn_id, "expiresAt": self._lease_end()},
            "confirmations": [],
        }
        if previous is not None and previous.get("terminalTurns"):
            envelope["terminalTurns"] = previous["terminalTurns"]
        return envelope

    def _lease_end(self) -> int:
        return _now_ms(self.ask) + int(self.lease_seconds * 1000)

    def _snapshot_line(
        self,
        session_id: str,
        turn_id: str,
        sequence: int,
        messages: Sequence[Mapping[str, Any]],
        status: Any,
        usage: Mapping[str, int],
        lineage: Mapping[str, Any] | None,
        error: Mapping[str, Any] | None = None,
    ) -> str:
        event = create_snapshot_event(
            event_id=_event_id(),
            session_id=session_id,
            turn_id=turn_id,
            sequence=sequence,
            emitted_at=_wall_iso(self.ask),
            messages=messages,
            status=status,
            usage=usage,
            lineage=lineage,
            error=error,
        )
        return encode_turn_event(event)

    def _state_line(self, state: TurnState, status: str, error: Any = None) -> str:
        prompt = _estimate_tokens(state.prompt_chars)
        completion = _estimate_tokens(state.answer_chars)
        return self._snapshot_line(
            state.key.session_id,
            state.turn_id,
            state.cursor,
            state.messages(),
            status,
            {
                "promptTokens": prompt,
                "completionTokens": completion,
                "totalTokens": prompt + completion,
            },
            state.lineage,
            error,
        )

    async def _commit(
        self,
        state: TurnState,
        run: TurnRun,
        status: str,
        error: Any = None,
        outcome: str = "completed",
        *,
        send: bool = True,
        budget: int | None = None,
    ) -> bool:
        """Save the next state with a compare-and-set, then send it; False when the CAS lost.

        One commit at a time per turn (the coalescer and the lease renewal both
        commit), and shielded from cancellation: a save that reached the store
        is always recorded in `state`, so the shutdown's final commit never
        loses its compare-and-set to the turn's own last save. A lease renewal
        saves without sending (`send=False`): it changes nothing a reader sees,
        and sending it cost a whole session every few seconds. With `budget`,
        a snapshot that would take the bytes sent past it is neither saved nor
        sent, and `state.over_budget` says so.
        """
        saved = False
        async with state.commit_lock:
            if status == "streaming" and _ended(state):
                return True  # a renewal that came after the final save: nothing to renew
            with anyio.CancelScope(shield=True):
                saved = await self._commit_now(
                    state, run, status, error, outcome, send=send, budget=budget
                )
        return saved

    async def _commit_now(
        self,
        state: TurnState,
        run: TurnRun,
        status: str,
        error: Any,
        outcome: str,
        *,
        send: bool,
        budget: int | None,
    ) -> bool:
        expected = state.cursor
        envelope = dict(state.envelope)
        envelope["cursor"] = expected + 1
        envelope["updatedAt"] = _wall_iso(self.ask)
        if status == "streaming":
            envelope["activeTurn"] = {"turnId": state.turn_id, "expiresAt": self._lease_end()}
        else:
            envelope.pop("activeTurn", None)
            envelope["terminalTurns"] = _terminal(envelope, state.turn_id, outcome)
        previous = state.envelope
        state.envelope = envelope
        line = self._state_line(state, status, error)
        if budget is not None and state.sent_bytes + len(line.encode()) + 1 > budget:
            state.envelope = previous
            state.over_budget = True
            return True
        started = self.ask.clock.monotonic()
        saved = await self.save(state.key, envelope, state.messages(), line, expected)
        state.saved_at = self.ask.clock.monotonic()
        state.save_seconds = state.saved_at - started
        if not saved:
            state.envelope = previous
            return False
        if send:
            state.line_bytes = run.push(line)
            state.sent_bytes += state.line_bytes
        return True

    async def _run(self, state: TurnState, run: TurnRun) -> None:
        recorder = MetricRecorder(
            self.ask.metrics,
            site_id=self.ask.site.site_id,
            corpus_id=self.ask.site.corpus_id,
            request_id=self.ask._request_ids(),  # the metrics format (req-<32 hex>)
            wall_clock=self.ask.clock.wall,
        )
        try:
            ok = await self._produce_guarded(state, run, recorder)
            if not ok:
                _LOG.warning(
                    "turn lost its session to another writer: session=%s turn=%s",
                    state.key.session_id,
                    state.turn_id,
                )
                self._diagnostic(run, state, SESSION_CONFLICT)
        except Exception as error:
            _log_failure("turn failed", state.key.session_id, state.turn_id, error)
            self._diagnostic(run, state, SERVER_INTERNAL)
        finally:
            run.finish()
            self.runs.pop(state.key, None)
            if run.client:
                self.running.release(run.client)

    async def _produce_guarded(
        self, state: TurnState, run: TurnRun, recorder: MetricRecorder
    ) -> bool:
        """`_produce` beside the lease renewal and the shutdown deadline; False: CAS lost.

        At the deadline (SIGTERM, `--shutdown-deadline`) the answer stops where
        it is and the turn ends as interrupted, saved, so every instance and
        every resume shows it, rather than being cut off with its lease left
        to expire.
        """
        interrupted = lost = False
        state.saved_at = self.ask.clock.monotonic()
        async with anyio.create_task_group() as group:

            async def renew() -> None:
                nonlocal lost
                every = self.lease_seconds * TURN_LEASE_RENEW_FRACTION
                while True:
                    idle = self.ask.clock.monotonic() - state.saved_at
                    if idle < every:
                        await anyio.sleep(every - idle)
                        continue
                    if not await self._commit(state, run, "streaming", send=False):
                        lost = True
                        group.cancel_scope.cancel()
                        return

            async def watch_shutdown(shutdown: ShutdownWatch) -> None:
                nonlocal interrupted
                await shutdown.wait_expired()
                interrupted = True
                group.cancel_scope.cancel()

            group.start_soon(renew)
            if self.ask.shutdown is not None:
                group.start_soon(watch_shutdown, self.ask.shutdown)
            ok = False
            try:
                ok = await self._produce(state, run, recorder)
            finally:
                group.cancel_scope.cancel()
        if lost:
            return False
        if interrupted:  # the turn may have saved its final snapshot just before
            return True if _ended(state) else await self._interrupt(state, run)
        return ok

    async def _interrupt(self, state: TurnState, run: TurnRun) -> bool:
        """End the turn now: what was written so far, status error, CHAT_TURN_INTERRUPTED."""
        with contextlib.suppress(ProtocolError):  # a tail that no longer fits is dropped
            self._flush_text(state, final=True)
        state.assistant["status"] = "error"
        return await self._commit(
            state, run, "error", CHAT_TURN_INTERRUPTED.to_wire(), outcome="indeterminate"
        )

    def _diagnostic(self, run: TurnRun, state: TurnState, spec: TurnErrorSpec) -> None:
        event = {
            "protocol": "agentskit.chat.turn",
            "version": 1,
            "eventId": _event_id(),
            "sessionId": state.key.session_id,
            "turnId": state.turn_id,
            "sequence": state.cursor + 1,
            "emittedAt": _wall_iso(self.ask),
            "event": "server.turn.diagnostic",
            "payload": spec.to_wire(),
        }
        run.push(encode_turn_event(event))

    async def _produce(self, state: TurnState, run: TurnRun, recorder: MetricRecorder) -> bool:
        deadline = self.ask.clock.monotonic() + self.ask.site.request_timeout
        try:
            found = await self.ask._retrieve(state.question, recorder, deadline)
        except _Reject as reject:
            if reject.code == "ASK_NO_GROUNDED_SOURCES":
                _append(state, state.encoder.encode_text(MESSAGES["no_sources"]))
                finished = await self._finish(state, run, "complete")
                self.ask.log_question(state.question, Found(), answer_id_of_turn(state.turn_id))
                return finished
            return await self._finish(state, run, "error")
        try:
            return await self._answer(state, run, found, deadline)
        finally:  # after the last snapshot was sent: the reader never waits for the log
            self.ask.log_question(state.question, found, answer_id_of_turn(state.turn_id))

    async def _answer(self, state: TurnState, run: TurnRun, found: Found, deadline: float) -> bool:
        """The searched question's answer: generated, or the near miss's closest sections."""
        passages = found.passages
        if found.grounded:
            failed = await self._generate(state, run, passages, deadline)
            if failed is None:
                return False
            if failed:
                return await self._finish(state, run, "error")
        else:  # a near miss: said plainly, the closest sections cited, no generator asked
            _append(state, state.encoder.encode_text(CLOSEST_MESSAGE))
        try:
            _append(state, state.encoder.encode(_sources_part(passages, state.turn_id)))
        except ProtocolError:
            return await self._finish(state, run, "error")
        return await self._finish(state, run, "complete")

    async def _finish(self, state: TurnState, run: TurnRun, status: str) -> bool:
        state.assistant["status"] = "complete" if status == "complete" else "error"
        error = CHAT_TURN_FAILED.to_wire() if status == "error" else None
        return await self._commit(state, run, status, error)

    async def _generate(
        self,
        state: TurnState,
        run: TurnRun,
        passages: Sequence[Passage],
        deadline: float,
    ) -> bool | None:
        """Stream the answer into coalesced snapshots: False ok, True failed, None CAS lost.

        The generator runs in its own task and hands deltas over a queue, so a
        pending piece of text is flushed when its interval is over even if the
        next delta is slow to come (cancelling a generator mid-`__anext__`
        would close it).
        """
        request = GenerationRequest(state.question, tuple(passages), state.history)
        state.prompt_chars += sum(js_length(p.text) for p in passages)
        budget = min(self.ask.site.generation_timeout, deadline - self.ask.clock.monotonic())
        sender, receiver = anyio.create_memory_object_stream[str | BaseException](math.inf)

        async def pump() -> None:
            stream = self.ask.generator.stream(request)
            async with sender:
                try:
                    async for delta in stream:
                        if isinstance(delta, str) and delta:
                            await sender.send(delta)
                except Exception as error:
                    await sender.send(error)
                finally:
                    await _close_quietly(stream)

        try:
            with anyio.fail_after(max(budget, 0.0)):
                async with anyio.create_task_group() as group:
                    group.start_soon(pump)
                    async with receiver:
                        outcome = await self._coalesce(state, run, receiver)
                    group.cancel_scope.cancel()
        except TimeoutError:
            return True
        if outcome is not False:
            return outcome
        if state.answer_chars == 0:
            return True
        try:
            self._flush_text(state, final=True)
        except ProtocolError:  # a merged tail that no longer fits the content bounds
            return True
        return False

    async def _coalesce(self, state: TurnState, run: TurnRun, receiver: Any) -> bool | None:
        """Deltas into snapshots on a clock; see `_generate`.

        The interval is counted from the end of the last save and is the
        longest of: `snapshot_interval`; the last save's duration, so saving
        never takes more than about half of a turn's time however large the
        session is; and the last snapshot's size over `byte_rate`, so the
        bytes sent grow at most at that rate whatever the model's pace (one
        full snapshot per token of a model streaming every 20 ms sent 170 MB
        on the largest session). The streaming budget is a hard stop besides:
        past it the text waits for the final snapshot.
        """
        last_flush = -math.inf
        held = False  # past the record budget: text waits for the end, no timer needed
        while True:
            interval = max(
                self.snapshot_interval, state.save_seconds, state.line_bytes / self.byte_rate
            )
            wait = None
            if state.pending and not held:
                wait = max(0.0, interval - (self.ask.clock.monotonic() - last_flush))
            item: str | BaseException | None = None
            with anyio.move_on_after(wait):
                try:
                    item = await receiver.receive()
                except anyio.EndOfStream:
                    return False
            if isinstance(item, BaseException):
                return True
            if item is not None:
                state.answer_chars += js_length(item)
                if state.answer_chars > ASK_BACKEND_ANSWER_MAX_CHARS:
                    return True
                state.pending.append(item)
                if self.ask.clock.monotonic() - last_flush < interval:
                    continue
            if not self._flush_text(state, final=False):
                held = bool(state.pending)
                continue
            if state.over_budget:
                continue  # the records are kept; the final snapshot sends them
            if not await self._commit(state, run, "streaming", budget=self.streaming_budget):
                return None
            if not state.over_budget:
                last_flush = self.ask.clock.monotonic()

    @staticmethod
    def _flush_text(state: TurnState, *, final: bool) -> bool:
        """Move pending text into the answer's records; False when nothing moved.

        Each delta becomes its own record(s), as on the Ask path, so coalescing
        changes how many snapshots are sent, never the answer's records. Deltas
        that would pass the streaming record budget wait for the final flush,
        which merges them, so the answer and its source list stay within 512
        records.

        Each record is added as soon as it is encoded: the encoder counts what
        it encoded, so a merged tail that does not fit (ProtocolError) leaves
        the deltas moved before it in the answer, not counted and lost.
        """
        pending = state.pending
        room = max(0, TURN_TEXT_RECORD_BUDGET - state.encoder.records)
        moved = 0
        try:
            for piece in pending[:room]:
                _append(state, state.encoder.encode_text(piece))
                moved += 1
            if final and moved < len(pending):
                _append(state, state.encoder.encode_text("".join(pending[moved:])))
                moved = len(pending)
        finally:
            state.pending = pending[moved:]
        return moved > 0

    async def drain(self) -> None:
        """Wait for every detached turn to end (tests, shutdown)."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)


def _log_failure(what: str, session_id: str, turn_id: str, error: BaseException) -> None:
    """Log an unexpected failure with its ids, type and place, never its message.

    Exception messages can quote the input (a validation error repeats the
    value it refused), so only the type and the frames' file:line are logged.
    """
    leaf = error
    while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:  # a task group's failure
        leaf = leaf.exceptions[0]
    frames = traceback.extract_tb(leaf.__traceback__)
    where = " <- ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno}" for f in frames[::-1][:6])
    _LOG.error(
        "%s: session=%s turn=%s error=%s at %s",
        what,
        session_id,
        turn_id,
        type(leaf).__name__,
        where or "?",
    )


def _ended(state: TurnState) -> bool:
    """The turn's final snapshot was saved (no lease left)."""
    return "activeTurn" not in state.envelope


def _append(state: TurnState, chunk: str) -> None:
    """Add encoded records to the answer (the prefix is already its first piece)."""
    state.content.append(chunk.removeprefix(ASSISTANT_CONTENT_PREFIX))


def _last_lineage(line: str) -> dict[str, Any] | None:
    result = decode_turn_event(line)
    if not result.ok:
        return None
    lineage = result.event.to_wire()["payload"].get("lineage")
    return lineage if isinstance(lineage, dict) else None


def _terminal(envelope: Mapping[str, Any], turn_id: str, outcome: str) -> list[dict[str, Any]]:
    """terminalTurns with this turn's outcome appended; the 64 newest are kept."""
    kept = [t for t in envelope.get("terminalTurns") or [] if t["turnId"] != turn_id]
    return [*kept, {"turnId": turn_id, "outcome": outcome}][-64:]


def _turn_used(row: TurnSessionRow, turn_id: str) -> bool:
    if any(_turn_of(m) == turn_id for m in row.messages):
        return True
    return any(t.turn_id == turn_id for t in row.envelope.terminal_turns or [])


def _question_before(messages: list[dict[str, Any]], index: int) -> str | None:
    for message in reversed(messages[:index]):
        if message["role"] == "user":
            content = message["content"]
            return content if isinstance(content, str) else None
    return None


def _bounded(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The newest messages a session keeps (room for the answer being written)."""
    return messages[-(SESSION_RECORD_MAX_MESSAGES - 1) :]


def turn_part_id(prefix: str, turn_id: str) -> str:
    """The id of something a turn makes (its question "u-", its answer "a-", its source
    list "sources-"): the prefix and the turn id, a SafeId of at most SAFE_ID_MAX_CHARS.

    A turn id may itself be that long; cutting the joined id would give two turns whose ids
    differ only at the end one message id (an edit or a retry names its message by it),
    so a joined id that does not fit carries a digest of the whole turn id instead."""
    joined = prefix + turn_id
    if len(joined) <= SAFE_ID_MAX_CHARS:
        return joined
    digest = hashlib.sha256(turn_id.encode()).hexdigest()
    return prefix + digest[: SAFE_ID_MAX_CHARS - len(prefix)]


def answer_id_of_turn(turn_id: str) -> str:
    """A turn answer's id for feedback and the question log: its source list's instance id,
    which the widget sends as the answer's id (chat/answer_feedback.py)."""
    return turn_part_id("sources-", turn_id)


def _sources_part(passages: Sequence[Passage], turn_id: str) -> dict[str, Any]:
    """The answer's source list as an ordered-content component record."""
    from urllib.parse import quote

    sources = []
    titles = []
    for number, passage in enumerate(passages, start=1):
        url = passage.path + ("#" + quote(passage.anchor, safe="") if passage.anchor else "")
        source: dict[str, Any] = {"id": f"source-{number}", "title": passage.title[:256]}
        if url.startswith("/") and not url.startswith("//") and len(url) <= 2048:
            source["url"] = url
        sources.append(source)
        titles.append(passage.title)
    instance = answer_id_of_turn(turn_id)
    return {
        "kind": "component",
        "frame": {
            "protocol": "agentskit.chat.component",
            "version": 1,
            "type": "render",
            "componentKey": "source-list",
            "instanceId": instance,
            "props": {"label": "Sources", "sources": sources[:50]},
            "fallback": {
                "kind": "source-list",
                "summary": ("Sources: " + ", ".join(titles) + ".")[:4096],
            },
        },
    }


def default_instance_id() -> str:
    """host:pid:random, so two processes (or two runs of one) never share a lease holder."""
    return f"{socket.gethostname()[:64]}:{os.getpid()}:{secrets.token_hex(4)}"
