"""The widget's conversation controller on CPython: real adapter and memory, scripted transport."""

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from itertools import count, groupby
from typing import Any

import pytest

from agentskit_web.chat import (
    MemoryStorage,
    create_ask_adapter,
    create_ask_session_memory,
    define_chat,
)
from agentskit_web.chat.conversation import (
    LOAD_FAILED_NOTICE,
    OFFLINE_MESSAGE,
    SAVE_FAILED_NOTICE,
    Appended,
    Conversation,
    ConversationEvent,
    Notice,
    PartsAppended,
    Removed,
    Reset,
    StatusChanged,
    Updated,
)
from agentskit_web.chat.message import ChatMessage, message_parts, message_plain_text
from agentskit_web.protocol import decode_assistant_content
from agentskit_web.protocol.knowledge import compute_knowledge_hash

NOW = datetime(2026, 7, 13, 12, tzinfo=UTC)
CITE = {
    "type": "tool",
    "id": "cite-1",
    "name": "cite",
    "args": {"sources": [{"title": "Install", "path": "/docs/install", "anchor": "pip"}]},
}


def ndjson(*events: Any) -> list[bytes]:
    return [(json.dumps(event) + "\n").encode() for event in events]


class Response:
    def __init__(self, chunks: list[bytes], gate: asyncio.Event | None, status: int) -> None:
        self.status = status
        self.headers = {"content-type": "application/x-ndjson"}
        self._chunks = chunks
        self._gate = gate
        self.cancelled = False

    async def chunks(self) -> AsyncIterator[bytes]:
        for index, chunk in enumerate(self._chunks):
            if self._gate is not None and index == 1:
                await self._gate.wait()
            await asyncio.sleep(0)
            yield chunk

    async def cancel(self) -> None:
        self.cancelled = True


class Transport:
    """Each post answers with the next script: a list of chunks, an exception, or (chunks, gate)."""

    def __init__(self, *scripts: Any) -> None:
        self.scripts = list(scripts)
        self.requests: list[dict[str, Any]] = []
        self.responses: list[Response] = []

    async def post(self, url: str, headers: Mapping[str, str], body: bytes) -> Response:
        self.requests.append(json.loads(body))
        script = self.scripts.pop(0)
        if isinstance(script, BaseException):
            raise script
        gate = None
        status = 200
        if isinstance(script, tuple):
            script, gate = script
        if isinstance(script, int):
            status, script = script, []
        response = Response(script, gate, status)
        self.responses.append(response)
        return response


def make(
    transport: Transport,
    storage: MemoryStorage | None = None,
    **options: Any,
) -> tuple[Conversation, list[ConversationEvent], MemoryStorage]:
    store = storage if storage is not None else MemoryStorage()
    definition = define_chat(
        id="docs",
        adapter=create_ask_adapter(endpoint="/api/ask", transport=transport),
        memory=create_ask_session_memory(key="ask", legacy_keys=["old-ask"], storage=store),
    )
    ids = count(1)
    conversation = Conversation(
        definition, new_id=lambda: f"m-{next(ids)}", now=lambda: NOW, **options
    )
    events: list[ConversationEvent] = []
    conversation.subscribe(events.append)
    return conversation, events, store


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def kinds(events: list[ConversationEvent]) -> list[str]:
    return [type(event).__name__ for event in events]


def stored(store: MemoryStorage) -> list[dict[str, Any]]:
    raw = store.get_item("ask")
    assert raw is not None
    return list(json.loads(raw)["messages"])


def test_a_streamed_answer_emits_only_small_events() -> None:
    transport = Transport(
        ndjson(
            {"type": "text", "delta": "Hello "},
            {"type": "text", "delta": "world"},
            CITE,
            {"type": "done"},
        )
    )
    conversation, events, store = make(transport)

    assert run(conversation.send("How do I install?"))
    assert isinstance(events[0], Appended) and isinstance(events[-2], Updated)
    assert kinds(events) == [
        "Appended",
        "Appended",
        "StatusChanged",
        "PartsAppended",
        "PartsAppended",
        "PartsAppended",
        "Updated",
        "StatusChanged",
    ]
    parts = [event.parts for event in events if isinstance(event, PartsAppended)]
    assert parts[0] == ({"kind": "text", "text": "Hello "},)
    assert parts[1] == ({"kind": "text", "text": "world"},)
    assert parts[2][0]["frame"]["componentKey"] == "source-list"
    answer = conversation.messages[-1]
    assert answer.status == "complete" and answer.error is None and not answer.stopped
    assert decode_assistant_content(answer.content).ok
    assert [e.status for e in events if isinstance(e, StatusChanged)] == ["streaming", "idle"]
    request = transport.requests[0]
    assert request["messages"] == [{"role": "user", "content": "How do I install?"}]
    assert request["sessionId"] == "s-m-1"
    assert [m["role"] for m in stored(store)] == ["user", "assistant"]


def test_an_answer_that_arrives_at_once_is_rendered_in_slices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every STREAM_SLICE_SECONDS of work on chunks the turn yields to the event loop (in the
    page, the task ends there), and the save gets a slice of its own. Each chunk costs a
    quarter of the slice on a fake clock, so a slice is exactly four chunks: the fourth
    reaches the bound and yields, the third does not."""
    from agentskit_web.chat import conversation as module

    monkeypatch.setattr(module, "STREAM_SLICE_SECONDS", 0.5)
    calls = count()
    # started, finished, started, ...: each chunk 0.125 s, nothing between chunks
    monkeypatch.setattr(module, "monotonic", lambda: ((next(calls) + 1) // 2) * 0.125)
    body = ndjson(*({"type": "text", "delta": f"w{i} "} for i in range(11)), {"type": "done"})
    conversation, _events, store = make(Transport([b"".join(body)]))
    ticks = 0
    seen: list[int] = []  # the ticker's count when each chunk's parts were applied
    saved_at: list[int] = []
    conversation.subscribe(
        lambda event: (
            seen.append(ticks)
            if isinstance(event, PartsAppended)
            else saved_at.append(ticks)
            if isinstance(event, StatusChanged) and event.status == "idle"
            else None
        )
    )

    async def main() -> None:
        nonlocal ticks

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0)
                ticks += 1

        other = asyncio.create_task(ticker())
        assert await conversation.send("How do I install?")
        other.cancel()

    run(main())
    runs = [len(list(group)) for _, group in groupby(seen)]
    assert runs == [4, 4, 3]  # the other task ran between slices, never inside one
    assert saved_at and saved_at[0] > seen[-1]  # the save is a slice of its own
    assert [m["role"] for m in stored(store)] == ["user", "assistant"]


def test_follow_up_questions_carry_the_conversation() -> None:
    transport = Transport(
        ndjson({"type": "text", "delta": "A1"}, {"type": "done"}),
        ndjson({"type": "text", "delta": "A2"}, {"type": "done"}),
    )
    conversation, _events, _store = make(transport)
    run(conversation.send("Q1"))
    run(conversation.send("Q2"))
    assert transport.requests[1]["messages"] == [
        {"role": "user", "content": "Q1"},
        {"role": "assistant", "content": "A1"},
        {"role": "user", "content": "Q2"},
    ]
    assert transport.requests[0]["sessionId"] == transport.requests[1]["sessionId"]


def test_blank_questions_are_refused() -> None:
    conversation, events, _store = make(Transport())
    assert not run(conversation.send("  \n"))
    assert events == []


def test_an_error_keeps_what_streamed_and_retry_replaces_the_answer() -> None:
    transport = Transport(
        ndjson({"type": "text", "delta": "Partial"}, {"type": "error", "message": "Model failed."}),
        ndjson({"type": "text", "delta": "Whole answer"}, {"type": "done"}),
    )
    conversation, events, store = make(transport)
    run(conversation.send("Q"))
    failed = conversation.messages[-1]
    assert failed.status == "error" and failed.error == "Model failed."
    assert message_parts(failed) == [{"kind": "text", "text": "Partial"}]
    assert conversation.status == "error"
    assert stored(store)[-1]["metadata"] == {"agentskit": {"error": "Model failed."}}

    events.clear()
    assert run(conversation.retry())
    assert isinstance(events[0], Removed) and events[0].message_id == failed.id
    assert transport.requests[1]["messages"] == [{"role": "user", "content": "Q"}]
    assert message_plain_text(conversation.messages[-1]) == "Whole answer"
    assert conversation.status == "idle"
    assert len(conversation.messages) == 2


def test_retry_only_after_an_error() -> None:
    transport = Transport(ndjson({"type": "text", "delta": "A"}, {"type": "done"}))
    conversation, _events, _store = make(transport)
    assert not run(conversation.retry())
    run(conversation.send("Q"))
    assert not run(conversation.retry())


def test_regenerate_replaces_the_last_answer() -> None:
    transport = Transport(
        ndjson({"type": "text", "delta": "first"}, {"type": "done"}),
        ndjson({"type": "text", "delta": "second"}, {"type": "done"}),
    )
    conversation, _events, store = make(transport)
    run(conversation.send("Q"))
    assert run(conversation.regenerate())
    assert [message_plain_text(m) for m in conversation.messages] == ["Q", "second"]
    assert len(stored(store)) == 2


def test_stop_keeps_what_streamed_without_an_error() -> None:
    gate = asyncio.Event()
    transport = Transport(
        (
            ndjson(
                {"type": "text", "delta": "Some"},
                {"type": "text", "delta": " more"},
                {"type": "done"},
            ),
            gate,
        )
    )
    conversation, events, store = make(transport)

    async def scenario() -> None:
        task = asyncio.ensure_future(conversation.send("Q"))
        while not any(isinstance(e, PartsAppended) for e in events):
            await asyncio.sleep(0)
        assert conversation.busy
        assert not await conversation.send("another")  # one turn at a time
        assert conversation.stop()
        await task

    run(scenario())
    answer = conversation.messages[-1]
    assert answer.status == "complete" and answer.stopped and answer.error is None
    assert message_plain_text(answer) == "Some"
    assert transport.responses[0].cancelled
    assert conversation.status == "idle"
    assert stored(store)[-1]["metadata"] == {"agentskit": {"stopped": True}}
    assert not conversation.stop()


def test_unreachable_service_is_reported_as_offline() -> None:
    conversation, _events, _store = make(Transport(OSError("refused")))
    run(conversation.send("Q"))
    answer = conversation.messages[-1]
    assert answer.status == "error" and answer.error == OFFLINE_MESSAGE


def test_non_ok_status_is_shown_in_place() -> None:
    conversation, _events, _store = make(Transport(503))
    run(conversation.send("Q"))
    assert conversation.messages[-1].error == "Ask request failed (503)."


def test_offline_browser_answers_without_a_request() -> None:
    transport = Transport()
    conversation, _events, _store = make(transport, online=lambda: False)
    run(conversation.send("Q"))
    assert conversation.messages[-1].error == OFFLINE_MESSAGE
    assert transport.requests == []


def test_new_conversation_clears_memory_and_starts_a_new_session() -> None:
    transport = Transport(
        ndjson({"type": "text", "delta": "A"}, {"type": "done"}),
        ndjson({"type": "text", "delta": "B"}, {"type": "done"}),
    )
    store = MemoryStorage(initial={"old-ask": json.dumps([{"role": "user", "content": "legacy"}])})
    conversation, events, _ = make(transport, store)
    run(conversation.load())
    run(conversation.send("Q"))
    run(conversation.new_conversation())
    assert conversation.messages == [] and store.get_item("ask") is None
    assert store.get_item("old-ask") is None
    assert isinstance(events[-2], Reset) or isinstance(events[-1], Reset)
    run(conversation.send("Q2"))
    assert transport.requests[1]["sessionId"] != transport.requests[0]["sessionId"]


def test_load_restores_the_saved_conversation_and_feedback() -> None:
    transport = Transport(ndjson({"type": "text", "delta": "A"}, CITE, {"type": "done"}))
    conversation, _events, store = make(transport)
    run(conversation.send("Q"))
    answer = conversation.messages[-1]
    detail = run(conversation.set_feedback(answer.id, "up"))
    assert detail == {"messageId": answer.id, "value": "up"}

    reloaded, events, _ = make(Transport(), store)
    run(reloaded.load())
    assert isinstance(events[1], Reset)
    assert [m.to_memory() for m in reloaded.messages] == [
        m.to_memory() for m in conversation.messages
    ]
    assert reloaded.messages[-1].feedback == "up"
    assert [e.status for e in events if isinstance(e, StatusChanged)] == ["loading", "idle"]


def test_feedback_rules() -> None:
    transport = Transport(ndjson({"type": "text", "delta": "A"}, {"type": "done"}))
    conversation, _events, _store = make(transport)
    run(conversation.send("Q"))
    user, answer = conversation.messages
    assert run(conversation.set_feedback(user.id, "up")) is None
    assert run(conversation.set_feedback("missing", "up")) is None
    assert run(conversation.set_feedback(answer.id, "sideways")) is None  # type: ignore[arg-type]
    assert run(conversation.set_feedback(answer.id, None)) == {
        "messageId": answer.id,
        "value": None,
    }


def test_legacy_memory_is_migrated_and_shown() -> None:
    legacy = [{"role": "user", "content": "old q"}, {"role": "assistant", "content": "old **a**"}]
    store = MemoryStorage(initial={"old-ask": json.dumps(legacy)})
    conversation, events, _ = make(Transport(), store)
    run(conversation.load())
    reset = next(e for e in events if isinstance(e, Reset))
    assert [message_plain_text(m) for m in reset.messages] == ["old q", "old **a**"]


def test_a_failed_save_keeps_the_conversation_and_is_reported_once() -> None:
    transport = Transport(
        ndjson({"type": "text", "delta": "A"}, {"type": "done"}),
        ndjson({"type": "text", "delta": "B"}, {"type": "done"}),
    )
    conversation, events, _store = make(transport, MemoryStorage(read_only=True))
    run(conversation.send("Q1"))
    run(conversation.send("Q2"))
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert notices == [SAVE_FAILED_NOTICE]
    assert len(conversation.messages) == 4


def test_a_corrupt_saved_value_starts_clean() -> None:
    store = MemoryStorage(initial={"ask": "{not json"})
    conversation, _events, _ = make(Transport(), store)
    run(conversation.load())
    assert conversation.messages == []


def test_a_failing_memory_load_is_reported() -> None:
    class Broken:
        async def load(self) -> list[Any]:
            raise RuntimeError("boom")

        async def save(self, _messages: Any) -> None:
            return None

        async def clear(self) -> None:
            return None

    definition = define_chat(
        id="d", adapter=create_ask_adapter(endpoint="/a", transport=Transport()), memory=Broken()
    )
    conversation = Conversation(definition)
    events: list[ConversationEvent] = []
    conversation.subscribe(events.append)
    run(conversation.load())
    assert Notice(LOAD_FAILED_NOTICE) in events


def test_every_chunk_appends_only_its_own_parts() -> None:
    deltas = [{"type": "text", "delta": f"word{i} "} for i in range(300)]
    transport = Transport(ndjson(*deltas, {"type": "done"}))
    conversation, events, _store = make(transport)
    run(conversation.send("Q"))
    appended = [e.parts for e in events if isinstance(e, PartsAppended)]
    assert len(appended) == 300 and all(len(parts) == 1 for parts in appended)


def test_a_raising_listener_does_not_break_the_turn() -> None:
    transport = Transport(ndjson({"type": "text", "delta": "A"}, {"type": "done"}))
    conversation, _events, _store = make(transport)

    def bad(_event: ConversationEvent) -> None:
        raise RuntimeError("renderer bug")

    unsubscribe = conversation.subscribe(bad)
    run(conversation.send("Q"))
    assert conversation.listener_errors > 0
    assert conversation.messages[-1].status == "complete"
    unsubscribe()
    unsubscribe()


def test_replace_messages_from_another_tab() -> None:
    conversation, events, _ = make(Transport())
    wire = [ChatMessage("x-1", "user", "hi", "complete", "2026-01-01T00:00:00.000Z").to_memory()]
    assert conversation.replace_messages(wire)
    assert isinstance(events[0], Reset) and events[0].messages[0].id == "x-1"


# -- local knowledge -----------------------------------------------------------------


def knowledge() -> dict[str, Any]:
    def entry(entry_id: str, values: list[str], markdown: str) -> dict[str, Any]:
        return {
            "id": entry_id,
            "kind": "document",
            "label": f"Label {entry_id}",
            "match": {"type": "exact", "values": values},
            "answer": {
                "markdown": markdown,
                "citations": [{"id": "c1", "title": "Install guide", "href": "/docs/install"}],
            },
        }

    body = {
        "protocol": "agentskit.chat.knowledge",
        "version": 1,
        "artifactId": "faq",
        "siteId": "docs",
        "generatedAt": "2026-07-13T00:00:00.000Z",
        "entries": [
            entry("install", ["how do i install"], "Run `pip install agentskit-web`."),
            entry("docs-a", ["docs"], "A"),
            entry("docs-b", ["docs", "more docs"], "B"),
        ],
    }
    return {**body, "contentHash": compute_knowledge_hash(body)}


def test_an_exact_faq_question_is_answered_locally_without_network() -> None:
    transport = Transport()
    conversation, _events, _ = make(transport, knowledge=knowledge())
    run(conversation.send("  How do I   INSTALL "))
    assert transport.requests == []
    answer = conversation.messages[-1]
    assert answer.local and answer.status == "complete"
    parts = message_parts(answer)
    assert parts[0] == {"kind": "text", "text": "Run `pip install agentskit-web`."}
    assert parts[1]["frame"]["props"]["sources"][0]["url"] == "/docs/install"


def test_ambiguous_faq_question_offers_choices_that_ask() -> None:
    transport = Transport(ndjson({"type": "text", "delta": "x"}, {"type": "done"}))
    conversation, _events, _ = make(transport, knowledge=knowledge())
    run(conversation.send("docs"))
    [part] = message_parts(conversation.messages[-1])
    assert part["frame"]["componentKey"] == "choice-list"
    assert conversation.choice_question("local-choices", "docs-b") == "docs"
    run(conversation.choose("local-choices", "docs-b", "Label docs-b"))
    assert conversation.messages[-2].content == "docs"


def test_a_miss_sends_the_escalation_envelope() -> None:
    transport = Transport(ndjson({"type": "text", "delta": "Backend"}, {"type": "done"}))
    conversation, _events, _ = make(transport, knowledge=knowledge())
    run(conversation.send("Something else"))
    envelope = transport.requests[0]["deterministic"]
    assert envelope["outcome"] == "escalation" and envelope["reason"] == "miss"
    assert envelope["query"] == "Something else"


def test_a_corrupt_artifact_escalates_as_corrupt() -> None:
    broken = {**knowledge(), "contentHash": "sha256:" + "0" * 64}
    transport = Transport(ndjson({"type": "done"}))
    conversation, _events, _ = make(transport, knowledge=broken)
    run(conversation.send("how do i install"))
    assert transport.requests[0]["deterministic"]["reason"] == "corrupt"


def test_offline_and_a_miss_says_offline_plainly() -> None:
    transport = Transport()
    conversation, _events, _ = make(transport, knowledge=knowledge(), online=lambda: False)
    run(conversation.send("Not in the FAQ"))
    assert conversation.messages[-1].error == OFFLINE_MESSAGE
    assert transport.requests == []
    run(conversation.send("how do i install"))
    assert conversation.messages[-1].local


# -- messages ------------------------------------------------------------------------


def test_message_round_trip_and_unknown_metadata_is_kept() -> None:
    message = ChatMessage(
        "m", "assistant", "x", "complete", "2026-01-01T00:00:00.000Z", feedback="down"
    )
    message.extra_metadata = {"host": {"k": 1}}
    wire = message.to_memory()
    assert wire["metadata"] == {"host": {"k": 1}, "agentskit": {"feedback": "down"}}
    again = ChatMessage.from_memory(wire)
    assert again == message


@pytest.mark.parametrize("status", ["pending", "streaming"])
def test_unfinished_messages_load_as_complete(status: str) -> None:
    wire = {
        "id": "a",
        "role": "assistant",
        "content": "x",
        "status": status,
        "createdAt": "2026-01-01T00:00:00.000Z",
    }
    loaded = ChatMessage.from_memory(wire)
    assert loaded is not None and loaded.status == "complete"


def test_other_roles_are_skipped() -> None:
    wire = {
        "id": "a",
        "role": "system",
        "content": "x",
        "status": "complete",
        "createdAt": "2026-01-01T00:00:00.000Z",
    }
    assert ChatMessage.from_memory(wire) is None


def test_legacy_component_and_invalid_content_parts() -> None:
    frame = {
        "protocol": "agentskit.chat.component",
        "version": 1,
        "type": "render",
        "componentKey": "progress",
        "instanceId": "p",
        "props": {"label": "L", "value": 5},
        "fallback": {"kind": "progress", "summary": "L"},
    }
    legacy = ChatMessage("a", "assistant", json.dumps(frame), "complete", "t")
    assert message_parts(legacy)[0]["kind"] == "component"
    broken = ChatMessage("b", "assistant", "\x1eagentskit.chat.content/1\n{bad}\n", "complete", "t")
    assert message_parts(broken)[0]["kind"] == "diagnostic"
    assert message_plain_text(broken) == "Assistant content record is invalid."
    user = ChatMessage("c", "user", "\x1eraw", "complete", "t")
    assert message_parts(user) == [{"kind": "text", "text": "\x1eraw"}]


def test_new_conversation_during_a_stream_does_not_save_the_old_answer() -> None:
    gate = asyncio.Event()
    transport = Transport(
        (
            ndjson(
                {"type": "text", "delta": "Old"}, {"type": "text", "delta": "er"}, {"type": "done"}
            ),
            gate,
        )
    )
    conversation, events, store = make(transport)

    async def scenario() -> None:
        task = asyncio.ensure_future(conversation.send("Q"))
        while not any(isinstance(e, PartsAppended) for e in events):
            await asyncio.sleep(0)
        await conversation.new_conversation()
        gate.set()
        await task

    run(scenario())
    assert conversation.messages == [] and conversation.status == "idle"
    assert store.get_item("ask") is None
    assert not any(isinstance(e, Updated) for e in events)


def test_questions_wait_for_a_knowledge_artifact_still_loading() -> None:
    transport = Transport()
    conversation, _events, _ = make(transport)

    async def scenario() -> None:
        async def load() -> None:
            await asyncio.sleep(0.01)
            conversation.knowledge = knowledge()

        conversation.knowledge_pending = asyncio.ensure_future(load())
        await conversation.send("how do i install")

    run(scenario())
    assert conversation.messages[-1].local and transport.requests == []
