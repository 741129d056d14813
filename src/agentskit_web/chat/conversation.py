"""The Ask widget's conversation controller: a pure state machine, I/O only through ports.

It owns the messages and the turn status, talks to the definition's adapter
and memory, and tells its renderer what changed through *small* events, so
the DOM layer never re-renders everything:

- `Reset(messages)`: a whole new list (loaded, new conversation, other tab);
- `Appended(message)`: one message added at the end;
- `PartsAppended(message, parts)`: only the parts this chunk completed
  (decoded incrementally with `AssistantContentReader`, O(chunk) per chunk);
- `Updated(message)`: status, error, stopped or feedback of one message changed;
- `Removed(message_id)`: a failed or regenerated answer left the log;
- `StatusChanged(status)`: idle | loading | streaming | error;
- `Notice(text)`: something the reader should know once (storage trouble);
- `Connection(reconnecting)`: a turn adapter lost its connection mid-answer and
  is resuming (True), or that ended (False): it resumed, or it gave up and the
  answer shows the error in place with Retry.

A turn: the question is appended; when the definition carries a knowledge
artifact it is asked first (an exact answer or choices are shown with no
network; a miss, stale or corrupt artifact yields the escalation envelope
sent with the request); offline, the answer is a plain offline notice; else
the adapter streams and every text chunk is appended to the answer's ordered
content. `stop()` aborts quietly and keeps what streamed; an error keeps
what streamed and shows the error in place; `retry()` and `regenerate()`
replace the last answer; `edit(message_id, text)` replaces a question and
drops everything after it, then answers the new question (an adapter with
`create_edit_source` is told so: the turn adapter sends the `edit` lineage).
Memory is saved when a turn ends; a failed save keeps the in-page
conversation and is reported once until a save succeeds.
"""

import asyncio
import contextlib
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from time import monotonic
from typing import Any, Final, Literal, Protocol

from ..protocol.content import AssistantContentReader
from ..protocol.dates import format_memory_datetime
from ..protocol.identifiers import make_safe_id
from ..protocol.limits import ASK_ERROR_MESSAGE_MAX_CHARS, ASK_REQUEST_MESSAGE_MAX_CHARS
from ..protocol.text_metrics import js_is_blank, js_slice
from .ask.adapter import NETWORK_MESSAGE
from .definition import ChatDefinition
from .message import ChatMessage, Feedback, message_plain_text

Status = Literal["idle", "loading", "streaming", "error"]

OFFLINE_MESSAGE: Final = (
    "You appear to be offline: the assistant could not be reached. "
    "Questions answered by this site's FAQ still work; retry when you are back online."
)
SAVE_FAILED_NOTICE: Final = (
    "This conversation could not be saved in this browser; it stays on this page until you leave."
)
LOAD_FAILED_NOTICE: Final = "A saved conversation could not be restored; starting a new one."
CLEAR_FAILED_NOTICE: Final = "The saved conversation could not be removed from this browser."
STREAM_FAILED_MESSAGE: Final = "The answer could not be completed."
RECONNECTING_NOTICE: Final = "Connection lost; reconnecting…"
STREAM_SLICE_SECONDS: Final = 0.03
"""Work on a stream's chunks (rendering them) between two yields to the event loop. An
answer that arrives at once (a fast server, a static answer) would otherwise be rendered
and saved in one main-thread task: 150-240 ms on a phone (docs/design/boot-long-tasks.md,
"The first question"). In the page a yield ends the task, so the page paints and takes
input between slices; 30 ms of work stays under Lighthouse's 50 ms long-task floor with
room for the chunk that crosses it."""


@dataclass(frozen=True)
class Reset:
    messages: tuple[ChatMessage, ...]


@dataclass(frozen=True)
class Appended:
    message: ChatMessage


@dataclass(frozen=True)
class PartsAppended:
    message: ChatMessage
    parts: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Updated:
    message: ChatMessage


@dataclass(frozen=True)
class Removed:
    message_id: str


@dataclass(frozen=True)
class StatusChanged:
    status: Status


@dataclass(frozen=True)
class Notice:
    text: str


@dataclass(frozen=True)
class Connection:
    reconnecting: bool


ConversationEvent = (
    Reset | Appended | PartsAppended | Updated | Removed | StatusChanged | Notice | Connection
)
Listener = Callable[[ConversationEvent], None]


class StreamSource(Protocol):
    """What an adapter's `create_source` returns (see chat/ask_adapter.py)."""

    def __aiter__(self) -> Any: ...

    def abort(self) -> None: ...


def _default_id() -> str:
    return "m-" + secrets.token_hex(8)


def _default_now() -> datetime:
    return datetime.now(UTC)


class Conversation:
    """The controller behind one widget (see the module doc for the event contract).

    Ports: `definition.adapter.create_source(messages, session_id, escalation)`,
    `definition.memory` (`load`/`save`/`clear`, optional), `knowledge` (a
    verified artifact or anything `answer_locally` accepts; default: the
    definition's `knowledge` attribute if it has one), `online()` (the
    browser's `navigator.onLine`), `new_id()` and `now()` for deterministic tests.
    """

    def __init__(
        self,
        definition: ChatDefinition,
        *,
        knowledge: Any = None,
        online: Callable[[], bool] | None = None,
        new_id: Callable[[], str] | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self.definition = definition
        self.knowledge = (
            knowledge if knowledge is not None else getattr(definition, "knowledge", None)
        )
        self._online = online or (lambda: True)
        self._new_id = new_id or _default_id
        self._now = now or _default_now
        self.messages: list[ChatMessage] = []
        self.status: Status = "idle"
        self._listeners: list[Listener] = []
        self._source: StreamSource | None = None
        self._stop_requested = False
        self._reconnecting = False
        self._generation = 0  # bumped when the conversation is replaced under a running turn
        self._session_anchor: str | None = None  # the first question's id, kept across its edit
        self._save_failure_reported = False
        self._choices: dict[tuple[str, str], str] = {}
        self.listener_errors = 0
        self.knowledge_pending: Awaitable[Any] | None = None
        """Set while the knowledge artifact is still loading: questions wait for it."""

    # -- observation --------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(event)` for every change; returns the unsubscribe function."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def _emit(self, event: ConversationEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # a renderer bug must not break the turn; counted for tests
                self.listener_errors += 1

    @property
    def busy(self) -> bool:
        """True while a turn is running (a question cannot be sent then)."""
        return self.status in ("loading", "streaming")

    @property
    def session_id(self) -> str | None:
        """Stable for one conversation (derived from its first message); new after a reset."""
        if not self.messages:
            return None
        return make_safe_id("s-" + (self._session_anchor or self.messages[0].id), "session")

    def last_answer(self) -> ChatMessage | None:
        """The last assistant message, if the conversation ends with one."""
        last = self.messages[-1] if self.messages else None
        return last if last is not None and last.role == "assistant" else None

    def find(self, message_id: str) -> ChatMessage | None:
        return next((m for m in self.messages if m.id == message_id), None)

    def plain_text(self, message_id: str) -> str:
        """The text "copy answer" copies for one message ('' when unknown)."""
        message = self.find(message_id)
        return "" if message is None else message_plain_text(message, self.definition.components)

    def memory_messages(self) -> list[dict[str, Any]]:
        """The wire messages memory stores (complete turns only)."""
        return [m.to_memory() for m in self.messages if m.status not in ("pending", "streaming")]

    def _set_status(self, status: Status) -> None:
        if status != self.status:
            self.status = status
            self._emit(StatusChanged(status))

    def _message(
        self, role: Literal["user", "assistant"], content: str, status: Any
    ) -> ChatMessage:
        return ChatMessage(
            id=self._unique_id(),
            role=role,
            content=content,
            status=status,
            created_at=format_memory_datetime(self._now()),
        )

    def _unique_id(self) -> str:
        taken = {m.id for m in self.messages}
        candidate = make_safe_id(self._new_id(), "m-0")
        while candidate in taken:
            candidate = make_safe_id(self._new_id(), "m-0")
        return candidate

    # -- memory -------------------------------------------------------------------

    async def load(self) -> None:
        """Restore the saved conversation (or start empty); reports a failed load once."""
        memory = self.definition.memory
        self._set_status("loading")
        loaded: list[ChatMessage] = []
        if memory is not None:
            try:
                wire = await memory.load()
                loaded = [m for m in map(ChatMessage.from_memory, wire) if m is not None]
            except Exception:  # corrupt or oversized legacy data: start clean, say so once
                self._emit(Notice(LOAD_FAILED_NOTICE))
        self.messages = loaded
        self._session_anchor = None
        self._emit(Reset(tuple(loaded)))
        self._set_status("idle")

    def replace_messages(self, wire_messages: Sequence[Any]) -> bool:
        """Adopt messages another tab saved; refused (False) while a turn runs."""
        if self.busy:
            return False
        self._generation += 1
        self._session_anchor = None
        self.messages = [m for m in map(ChatMessage.from_memory, wire_messages) if m is not None]
        self._emit(Reset(tuple(self.messages)))
        self._set_status("idle")
        return True

    async def _save(self) -> None:
        memory = self.definition.memory
        if memory is None:
            return
        try:
            await memory.save(self.memory_messages())
        except Exception:  # quota, read-only, oversized: the page keeps the conversation
            if not self._save_failure_reported:
                self._save_failure_reported = True
                self._emit(Notice(SAVE_FAILED_NOTICE))
            return
        self._save_failure_reported = False

    # -- turns --------------------------------------------------------------------

    async def send(self, question: str) -> bool:
        """Ask a question; False (nothing happens) when blank or while a turn runs."""
        if not isinstance(question, str) or js_is_blank(question) or self.busy:
            return False
        self._emit_appended(
            self._message("user", js_slice(question, ASK_REQUEST_MESSAGE_MAX_CHARS), "complete")
        )
        await self._answer(self.messages[-1].content)
        return True

    async def retry(self) -> bool:
        """After an error: replace the failed answer by a new attempt."""
        last = self.last_answer()
        if self.busy or last is None or last.status != "error":
            return False
        return await self._replace_last_answer()

    async def regenerate(self) -> bool:
        """Ask again for the last answer (a fresh attempt replaces it)."""
        if self.busy or self.last_answer() is None:
            return False
        return await self._replace_last_answer()

    async def edit(self, message_id: str, text: str) -> bool:
        """Replace the question `message_id` by `text`, drop what followed, answer again.

        False (nothing changes) while a turn runs, for an unknown or assistant
        message, or for blank text.
        """
        if self.busy or not isinstance(text, str) or js_is_blank(text):
            return False
        index = next((i for i, m in enumerate(self.messages) if m.id == message_id), None)
        if index is None or self.messages[index].role != "user":
            return False
        if index == 0:  # same conversation, same session, though its first question changed
            self._session_anchor = self._session_anchor or self.messages[0].id
        dropped, self.messages = self.messages[index:], self.messages[:index]
        for message in reversed(dropped):
            self._emit(Removed(message.id))
        self._emit_appended(
            self._message("user", js_slice(text, ASK_REQUEST_MESSAGE_MAX_CHARS), "complete")
        )
        await self._answer(self.messages[-1].content, edit=True)
        return True

    async def _replace_last_answer(self) -> bool:
        last = self.messages.pop()
        self._emit(Removed(last.id))
        question = self.messages[-1] if self.messages else None
        if question is None or question.role != "user":
            await self._save()
            self._set_status("idle")
            return False
        await self._answer(question.content)
        return True

    def stop(self) -> bool:
        """Stop the streaming answer; what streamed stays and no error is shown."""
        source = self._source
        if source is None or self.status != "streaming":
            return False
        self._stop_requested = True
        with contextlib.suppress(Exception):  # an adapter's abort is best effort
            source.abort()
        return True

    async def choose(self, instance_id: str, choice_id: str, label: str | None = None) -> bool:
        """A choice of a local `choices` answer was picked: ask its question."""
        question = self._choices.get((instance_id, choice_id)) or label
        if not question:
            return False
        return await self.send(question)

    def choice_question(self, instance_id: str, choice_id: str) -> str | None:
        """The question a local choice asks, if this page offered it."""
        return self._choices.get((instance_id, choice_id))

    async def new_conversation(self) -> None:
        """Stop any answer, forget the conversation here and in memory."""
        self.stop()
        self._generation += 1
        self._session_anchor = None
        self.messages = []
        self._choices.clear()
        self._emit(Reset(()))
        memory = self.definition.memory
        if memory is not None:
            try:
                await memory.clear()
            except Exception:  # storage refused: the page still starts over
                self._emit(Notice(CLEAR_FAILED_NOTICE))
        self._set_status("idle")

    async def set_feedback(self, message_id: str, value: Feedback | None) -> dict[str, Any] | None:
        """Record thumbs up/down (None clears it); returns the event detail for the host."""
        message = self.find(message_id)
        if message is None or message.role != "assistant" or value not in ("up", "down", None):
            return None
        message.feedback = value
        self._emit(Updated(message))
        if not self.busy:
            await self._save()
        return {"messageId": message.id, "value": value}

    # -- one answer ---------------------------------------------------------------

    def _emit_appended(self, message: ChatMessage) -> None:
        self.messages.append(message)
        self._emit(Appended(message))

    async def _answer(self, question: str, edit: bool = False) -> None:
        escalation: dict[str, Any] | None = None
        pending, self.knowledge_pending = self.knowledge_pending, None
        if pending is not None:
            with contextlib.suppress(Exception):  # a failed load leaves `knowledge` as it is
                await pending
        if self.knowledge is not None:
            from .local_answers import local_outcome  # only pages with a FAQ pay for it

            outcome = local_outcome(self.knowledge, question, self._now())
            if outcome.content is not None:
                answer = self._message("assistant", outcome.content, "complete")
                answer.local = True
                for choice_id, value in outcome.choices.items():
                    self._choices[("local-choices", choice_id)] = value
                self._emit_appended(answer)
                await self._finish_turn("idle")
                return
            escalation = outcome.escalation
        if self._needs_network() and not self._is_online():
            answer = self._message("assistant", "", "error")
            answer.error = OFFLINE_MESSAGE
            self._emit_appended(answer)
            await self._finish_turn("error")
            return
        await self._stream(escalation, edit)

    def _needs_network(self) -> bool:
        """False for an adapter that answers in the page (capability `"local": True`, such as
        the page-function adapter): being offline is no reason to refuse it a question."""
        capabilities = getattr(self.definition.adapter, "capabilities", None)
        return not (isinstance(capabilities, dict) and capabilities.get("local") is True)

    def _is_online(self) -> bool:
        try:
            return bool(self._online())
        except Exception:  # unknown: try the network
            return True

    async def _stream(self, escalation: dict[str, Any] | None, edit: bool = False) -> None:
        history = [m.to_memory() for m in self.messages]
        answer = self._message("assistant", "", "streaming")
        self._emit_appended(answer)
        self._set_status("streaming")
        self._stop_requested = False
        self._reconnecting = False
        generation = self._generation
        reader = AssistantContentReader()
        pieces: list[str] = []  # joined once at the end: appending to a str is quadratic
        source: StreamSource | None = None
        try:
            source = self._create_source(history, escalation, edit)
            self._source = source
            worked = 0.0  # seconds spent on chunks since the last yield
            async for chunk in source:
                started = monotonic()
                applied = self._apply_chunk(answer, reader, chunk, pieces)
                worked += monotonic() - started
                if not applied:
                    break
                if worked >= STREAM_SLICE_SECONDS:
                    worked = 0.0
                    await asyncio.sleep(0)
            if worked:
                await asyncio.sleep(0)  # the save and the final render are a slice of their own
        except asyncio.CancelledError:
            answer.content = "".join(pieces)
            answer.status = "error" if answer.error else "complete"
            raise
        except Exception:  # an adapter must not raise; if it does, the error shows in place
            answer.status = "error"
            answer.error = answer.error or STREAM_FAILED_MESSAGE
        finally:
            self._source = None
            self._set_reconnecting(False)
        answer.content = "".join(pieces)
        if generation != self._generation:
            return  # the conversation was replaced meanwhile: this answer is no longer shown
        if answer.status == "streaming":
            answer.status = "complete"
            answer.stopped = self._stop_requested
        in_page = getattr(source, "answered_by", None)  # static answers (chat/static_answers.py)
        if answer.status == "complete" and in_page in ("static", "fallback"):
            answer.in_page = in_page
        self._emit(Updated(answer))
        await self._finish_turn("error" if answer.status == "error" else "idle")

    def _create_source(
        self, history: list[dict[str, Any]], escalation: dict[str, Any] | None, edit: bool
    ) -> StreamSource:
        """The adapter's source; an edit goes to `create_edit_source` when the adapter has one
        (stateless adapters, such as Ask, just receive the edited history)."""
        adapter = self.definition.adapter
        create_edit = getattr(adapter, "create_edit_source", None)
        if edit and callable(create_edit):
            source: StreamSource = create_edit(history, self.session_id, escalation)
            return source
        created: StreamSource = adapter.create_source(history, self.session_id, escalation)
        return created

    def _set_reconnecting(self, reconnecting: bool) -> None:
        if reconnecting != self._reconnecting:
            self._reconnecting = reconnecting
            self._emit(Connection(reconnecting))

    def _apply_chunk(
        self, answer: ChatMessage, reader: AssistantContentReader, chunk: Any, pieces: list[str]
    ) -> bool:
        """Apply one stream chunk; False once the stream is terminal."""
        kind = chunk.get("type") if isinstance(chunk, dict) else None
        if kind == "reconnecting":  # the turn adapter lost its connection and resumes
            self._set_reconnecting(True)
            return True
        if kind is not None:  # "resumed", or anything the stream says: the connection is back
            self._set_reconnecting(False)
        if kind == "text":
            text = chunk.get("content")
            if isinstance(text, str) and text:
                pieces.append(text)
                delta = reader.feed(text)
                if delta.ok and delta.new_parts:
                    self._emit(PartsAppended(answer, delta.new_parts))
                elif not delta.ok:
                    answer.status = "error"
                    answer.error = STREAM_FAILED_MESSAGE
                    return False
            return True
        if kind == "error":
            self._apply_failure(answer, self._error_text(pieces, chunk.get("content")), pieces)
            return False
        if kind == "done":
            answer.status = "complete"
            return False
        return True

    def _apply_failure(self, answer: ChatMessage, adapter_text: str, pieces: list[str]) -> None:
        """Say what happened: "not found in the docs" is an answer, the rest an error in place."""
        from .ask.failure import AskFailure, failure_notice  # first failure only: boot skips it

        failure = getattr(self._source, "failure", None)
        notice = failure_notice(failure if isinstance(failure, AskFailure) else None, adapter_text)
        if notice.kind == "not_found" and not pieces:
            answer.status = "complete"
            answer.notice = notice.text
            return
        answer.status = "error"
        answer.error = notice.text
        answer.retry = notice.retry
        answer.retry_after = notice.retry_after_seconds

    def _error_text(self, pieces: list[str], message: object) -> str:
        """The adapter's error, except that "could not be reached" before anything streamed
        is said plainly as being offline (the service or the network is gone)."""
        text = message if isinstance(message, str) and message else STREAM_FAILED_MESSAGE
        if not pieces and text == NETWORK_MESSAGE:
            return OFFLINE_MESSAGE
        return js_slice(text, ASK_ERROR_MESSAGE_MAX_CHARS)

    async def _finish_turn(self, status: Status) -> None:
        await self._save()
        self._set_status(status)
