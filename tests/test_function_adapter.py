"""The page-function adapter: a Python function's answer through the Ask adapter's content path."""

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from agentskit_web.chat import function_adapter
from agentskit_web.chat.ask.body import BYTE_LIMIT_MESSAGE, RECORD_LIMIT_MESSAGE
from agentskit_web.chat.conversation import Conversation
from agentskit_web.chat.definition import define_chat
from agentskit_web.chat.function_adapter import (
    NO_QUESTION_MESSAGE,
    PIECE_MAX_CHARS,
    RAISED_MESSAGE,
    REUSED_MESSAGE,
    WRONG_PIECE_MESSAGE,
    WRONG_RESULT_MESSAGE,
    create_function_adapter,
)
from agentskit_web.protocol.content import AssistantContentEncoder, decode_assistant_content
from agentskit_web.protocol.limits import (
    ASK_REQUEST_MAX_MESSAGES,
    ASSISTANT_CONTENT_MAX_BYTES,
    ASSISTANT_CONTENT_MAX_RECORDS,
    ASSISTANT_CONTENT_TEXT_MAX_CHARS,
)
from agentskit_web.protocol.text_metrics import split_text, utf8_length

QUESTION = [{"role": "user", "content": "What is PyScript?"}]


def run(answer: Any, messages: list[dict[str, str]] | None = None) -> list[dict[str, str]]:
    source = create_function_adapter(answer).create_source(messages or QUESTION)

    async def collect() -> list[dict[str, str]]:
        return [chunk async for chunk in source]

    return asyncio.run(collect())


def texts(chunks: list[dict[str, str]]) -> str:
    """The text the chunks' ordered content holds, decoded as the widget decodes it."""
    content = "".join(chunk["content"] for chunk in chunks if chunk["type"] == "text")
    if not content:
        return ""
    decoded = decode_assistant_content(content)
    assert decoded.ok
    return "".join(part["text"] for part in decoded.parts if part["kind"] == "text")


def test_a_string_answer_is_ordered_content_then_done() -> None:
    chunks = run(lambda question, history: f"You asked: {question}")
    assert chunks[-1] == {"type": "done"}
    assert texts(chunks) == "You asked: What is PyScript?"


def test_sync_and_async_generators_stream_each_piece_in_order() -> None:
    def sync_answer(question: str, history: list[dict[str, str]]) -> Iterator[str]:
        yield "one "
        yield ""
        yield "two"

    async def async_answer(question: str, history: list[dict[str, str]]) -> AsyncIterator[str]:
        yield "three "
        await asyncio.sleep(0)
        yield "four"

    async def coroutine_answer(question: str, history: list[dict[str, str]]) -> list[str]:
        return ["five ", "six"]

    for answer, expected, records in (
        (sync_answer, "one two", 2),
        (async_answer, "three four", 2),
        (coroutine_answer, "five six", 2),
    ):
        chunks = run(answer)
        assert [c["type"] for c in chunks] == ["text"] * records + ["done"]
        assert texts(chunks) == expected


def test_the_function_gets_the_question_and_the_bounded_earlier_turns() -> None:
    seen: list[tuple[str, list[dict[str, str]]]] = []

    def answer(question: str, history: list[dict[str, str]]) -> str:
        seen.append((question, list(history)))
        history.append({"role": "user", "content": "mutated"})  # a copy: nothing else changes
        return "ok"

    earlier = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"} for i in range(100)
    ]
    messages = [*earlier, {"role": "system", "content": "skipped"}, *QUESTION]
    run(answer, messages)
    question, history = seen[0]
    assert question == "What is PyScript?"
    assert len(history) == ASK_REQUEST_MAX_MESSAGES - 1
    assert history[-1] == {"role": "assistant", "content": "turn 99"}
    assert messages[-1] == QUESTION[0]


def test_a_conversation_that_does_not_end_with_a_question_is_an_error() -> None:
    chunks = run(lambda q, h: "never", [{"role": "assistant", "content": "hello"}])
    assert chunks == [{"type": "error", "content": NO_QUESTION_MESSAGE}]


@pytest.mark.parametrize("result", [42, None, b"bytes", {"text": "x"}, 1.5])
def test_a_result_of_the_wrong_type_is_a_clear_error(result: object) -> None:
    chunks = run(lambda q, h: result)
    message = WRONG_RESULT_MESSAGE.format(name=type(result).__name__)
    assert chunks == [{"type": "error", "content": message}]


def test_a_piece_of_the_wrong_type_ends_the_answer_after_what_streamed() -> None:
    def answer(question: str, history: list[dict[str, str]]) -> Iterator[object]:
        yield "kept"
        yield 7
        yield "never"

    chunks = run(answer)
    assert chunks[-1] == {"type": "error", "content": WRONG_PIECE_MESSAGE.format(name="int")}
    assert texts(chunks) == "kept"


@pytest.mark.parametrize("where", ["call", "sync", "async", "await"])
def test_an_exception_is_an_error_chunk_never_raised(where: str) -> None:
    def raising_call(q: str, h: list[dict[str, str]]) -> str:
        raise KeyError("boom")

    def raising_sync(q: str, h: list[dict[str, str]]) -> Iterator[str]:
        yield "before "
        raise KeyError("boom")

    async def raising_async(q: str, h: list[dict[str, str]]) -> AsyncIterator[str]:
        yield "before "
        raise KeyError("boom")

    async def raising_await(q: str, h: list[dict[str, str]]) -> str:
        await asyncio.sleep(0)
        raise KeyError("boom")

    answer = {
        "call": raising_call,
        "sync": raising_sync,
        "async": raising_async,
        "await": raising_await,
    }[where]
    chunks = run(answer)
    assert chunks[-1] == {"type": "error", "content": RAISED_MESSAGE.format(name="KeyError")}
    assert texts(chunks) == ("before " if where in ("sync", "async") else "")


def _longest_fitting_text() -> int:
    """The most ASCII chars one answer can hold: found with the protocol's own encoder."""
    low, high = 0, ASSISTANT_CONTENT_MAX_BYTES
    while low < high:
        size = (low + high + 1) // 2
        encoder = AssistantContentEncoder()
        try:
            for piece in split_text("a" * size, ASSISTANT_CONTENT_TEXT_MAX_CHARS):
                encoder.encode({"kind": "text", "text": piece})
            low = size
        except Exception:
            high = size - 1
    return low


def test_a_string_at_the_byte_bound_fits_and_one_char_more_does_not() -> None:
    longest = _longest_fitting_text()
    at_bound = run(lambda q, h: "a" * longest)
    assert at_bound[-1] == {"type": "done"}
    content = "".join(c["content"] for c in at_bound if c["type"] == "text")
    assert utf8_length(content) == ASSISTANT_CONTENT_MAX_BYTES
    past = run(lambda q, h: "a" * (longest + 1))
    assert past[-1] == {"type": "error", "content": BYTE_LIMIT_MESSAGE}
    # What fitted before the bound is kept, as for a server's answer.
    assert len(texts(past)) == longest - longest % ASSISTANT_CONTENT_TEXT_MAX_CHARS


@pytest.mark.parametrize("size", [PIECE_MAX_CHARS, PIECE_MAX_CHARS + 1, 50_000_000])
def test_a_huge_string_costs_no_more_than_the_bound(
    size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []

    def measured_split(text: str, limit: int) -> list[str]:
        seen.append(len(text))
        return split_text(text, limit)

    monkeypatch.setattr(function_adapter, "split_text", measured_split)
    chunks = run(lambda q, h: "a" * size)
    assert seen == [PIECE_MAX_CHARS], "only the bound plus one char is ever split or encoded"
    assert chunks[-1] == {"type": "error", "content": BYTE_LIMIT_MESSAGE}


@pytest.mark.parametrize(
    "count", [ASSISTANT_CONTENT_MAX_RECORDS, ASSISTANT_CONTENT_MAX_RECORDS + 1]
)
def test_pieces_at_the_record_bound_fit_and_one_more_does_not(count: int) -> None:
    chunks = run(lambda q, h: ("x" for _ in range(count)))
    records = [c for c in chunks if c["type"] == "text"]
    assert len(records) == min(count, ASSISTANT_CONTENT_MAX_RECORDS)
    if count > ASSISTANT_CONTENT_MAX_RECORDS:
        assert chunks[-1] == {"type": "error", "content": RECORD_LIMIT_MESSAGE}
    else:
        assert chunks[-1] == {"type": "done"}


def test_markup_stays_text_for_the_renderer() -> None:
    chunks = run(lambda q, h: "<img src=x onerror=alert(1)> **bold**")
    assert texts(chunks) == "<img src=x onerror=alert(1)> **bold**"


def test_abort_stops_an_async_answer_quietly_and_closes_it() -> None:
    closed: list[bool] = []

    async def slow(q: str, h: list[dict[str, str]]) -> AsyncIterator[str]:
        try:
            yield "first"
            await asyncio.sleep(3600)
            yield "never"
        finally:
            closed.append(True)

    source = create_function_adapter(slow).create_source(QUESTION)

    async def main() -> list[dict[str, str]]:
        seen: list[dict[str, str]] = []
        async for chunk in source:
            seen.append(chunk)
            asyncio.get_running_loop().call_later(0.01, source.abort)
        return seen

    chunks = asyncio.run(asyncio.wait_for(main(), 5))
    assert [c["type"] for c in chunks] == ["text"]
    assert closed == [True]


def test_a_source_streams_once() -> None:
    source = create_function_adapter(lambda q, h: "once").create_source(QUESTION)

    async def twice() -> list[list[dict[str, str]]]:
        return [[c async for c in source], [c async for c in source]]

    first, second = asyncio.run(twice())
    assert first[-1] == {"type": "done"}
    assert second == [{"type": "error", "content": REUSED_MESSAGE}]


def test_a_non_callable_is_refused_when_the_chat_is_defined() -> None:
    with pytest.raises(ValueError, match="answer must be a function"):
        create_function_adapter("not a function")  # type: ignore[arg-type]


def test_a_conversation_renders_the_function_answer_and_its_errors() -> None:
    def answer(question: str, history: list[dict[str, str]]) -> Iterator[str]:
        if question == "fail":
            raise RuntimeError("page bug")
        yield f"**{question}** has {len(history)} earlier messages."

    chat = define_chat(id="page-answers", adapter=create_function_adapter(answer))
    conversation = Conversation(chat)

    async def talk() -> None:
        await conversation.send("first")
        await conversation.send("fail")

    asyncio.run(talk())
    first, failed = conversation.messages[1], conversation.messages[3]
    assert first.status == "complete"
    decoded = decode_assistant_content(first.content)
    assert decoded.parts[0]["text"] == "**first** has 0 earlier messages."
    assert failed.status == "error"
    assert failed.error == RAISED_MESSAGE.format(name="RuntimeError")


def test_an_offline_page_still_asks_its_own_function() -> None:
    """The widget refuses an Ask question while offline; a page function needs no network."""
    chat = define_chat(id="page-answers", adapter=create_function_adapter(lambda q, h: "here"))
    conversation = Conversation(chat, online=lambda: False)
    asyncio.run(conversation.send("anyone there?"))
    answer = conversation.messages[-1]
    assert answer.status == "complete"
    assert decode_assistant_content(answer.content).parts[0]["text"] == "here"


def test_mount_chat_refuses_anything_but_a_chat_definition_before_touching_the_page() -> None:
    from agentskit_web.browser.page_mount import NOT_A_DEFINITION, mount_chat

    adapter = create_function_adapter(lambda q, h: "x")
    with pytest.raises(TypeError) as raised:
        asyncio.run(mount_chat("#ask", adapter))  # type: ignore[arg-type]
    assert str(raised.value) == NOT_A_DEFINITION.format(name="FunctionAdapter")
