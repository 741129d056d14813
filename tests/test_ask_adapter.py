"""The Ask adapter against a scripted transport: every branch of PROTOCOL.md section 5 "Adapter".

The fake transport plays a response script: a header delay, a status, a
content type and body steps (bytes, a pause, or an exception). Each test runs
its own event loop with `asyncio.run`, so no plugin configuration is needed.
"""

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentskit_web.bench.page.ask_stream import recorded_long_stream, run_ask_bench
from agentskit_web.chat import create_ask_adapter
from agentskit_web.chat.ask.adapter import (
    INTERRUPTED_MESSAGE,
    NETWORK_MESSAGE,
    REUSED_MESSAGE,
    TIMEOUT_MESSAGE,
    AskSource,
    build_ask_request,
    endpoint_with_params,
)
from agentskit_web.chat.ask.body import (
    BYTE_LIMIT_MESSAGE,
    RECORD_LIMIT_MESSAGE,
    AskBodyReader,
    read_body,
)
from agentskit_web.protocol import ASSISTANT_CONTENT_PREFIX, decode_assistant_content
from agentskit_web.protocol.ask_request import build_escalation
from agentskit_web.protocol.limits import (
    ASK_LINE_MAX_BYTES,
    ASK_REQUEST_MAX_BODY_BYTES,
    ASK_REQUEST_MAX_MESSAGES,
    ASK_REQUEST_MESSAGE_MAX_CHARS,
    ASSISTANT_CONTENT_MAX_BYTES,
    ASSISTANT_CONTENT_MAX_RECORDS,
    ASSISTANT_CONTENT_TEXT_MAX_CHARS,
)
from agentskit_web.protocol.text_metrics import js_length, split_text, utf8_length

Step = bytes | float | BaseException


class FakeResponse:
    def __init__(self, status: int, content_type: str | None, steps: Sequence[Step]) -> None:
        self.status = status
        self.headers: dict[str, str] = (
            {} if content_type is None else {"Content-Type": content_type}
        )
        self.steps = list(steps)
        self.cancelled = 0
        self.read_cancelled = False

    async def chunks(self) -> AsyncIterator[bytes]:
        for step in self.steps:
            if isinstance(step, float):
                try:
                    await asyncio.sleep(step)
                except asyncio.CancelledError:
                    self.read_cancelled = True
                    raise
            elif isinstance(step, BaseException):
                raise step
            else:
                yield step

    async def cancel(self) -> None:
        self.cancelled += 1


class FakeTransport:
    def __init__(
        self,
        steps: Sequence[Step] = (),
        *,
        status: int = 200,
        content_type: str | None = "application/x-ndjson",
        header_delay: float = 0.0,
        error: BaseException | None = None,
    ) -> None:
        self.response = FakeResponse(status, content_type, steps)
        self.header_delay = header_delay
        self.error = error
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self.post_cancelled = False

    async def post(self, url: str, headers: Mapping[str, str], body: bytes) -> FakeResponse:
        self.requests.append((url, dict(headers), body))
        try:
            await asyncio.sleep(self.header_delay)
        except asyncio.CancelledError:
            self.post_cancelled = True
            raise
        if self.error is not None:
            raise self.error
        return self.response

    @property
    def body(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.requests[-1][2])
        return loaded


def line(event: dict[str, Any]) -> bytes:
    return (json.dumps(event) + "\n").encode()


def text(delta: str) -> bytes:
    return line({"type": "text", "delta": delta})


DONE = line({"type": "done"})
QUESTION = [{"role": "user", "content": "How do I install it?"}]


async def collect(source: AskSource) -> list[dict[str, str]]:
    return [chunk async for chunk in source]


def run(transport: FakeTransport, **options: Any) -> list[dict[str, str]]:
    options.setdefault("endpoint", "https://ask.example.com/v1/ask")
    adapter = create_ask_adapter(transport=transport, **options)
    return asyncio.run(collect(adapter.create_source(QUESTION)))


def texts(chunks: list[dict[str, str]]) -> list[str]:
    """The text parts of the content the text chunks build."""
    content = "".join(c["content"] for c in chunks if c["type"] == "text")
    if not content:
        return []
    decoded = decode_assistant_content(content)
    assert decoded.ok and decoded.complete
    return [part["text"] if part["kind"] == "text" else part["frame"] for part in decoded.parts]


def terminal(chunks: list[dict[str, str]]) -> dict[str, str]:
    assert chunks, "no chunks"
    assert all(c["type"] == "text" for c in chunks[:-1])
    return chunks[-1]


# -- request ----------------------------------------------------------------------------------


def test_request_is_an_ask_v1_post_with_projected_messages() -> None:
    transport = FakeTransport([DONE])
    adapter = create_ask_adapter(endpoint="https://ask.example.com/v1/ask", transport=transport)
    messages = [
        {"role": "system", "content": "ignored"},
        {"role": "user", "content": "Q1"},
        {
            "role": "assistant",
            "content": ASSISTANT_CONTENT_PREFIX + '{"kind":"text","text":"A1"}\n',
        },
        {"role": "user", "content": "Q2"},
    ]
    asyncio.run(collect(adapter.create_source(messages, session_id="session-1")))
    url, headers, _body = transport.requests[0]
    assert url == "https://ask.example.com/v1/ask"
    assert headers == {"content-type": "application/json"}
    assert transport.body == {
        "protocol": "agentskit.chat.ask",
        "version": 1,
        "sessionId": "session-1",
        "messages": [
            {"role": "user", "content": "Q1"},
            {"role": "assistant", "content": "A1"},
            {"role": "user", "content": "Q2"},
        ],
    }


@pytest.mark.parametrize("session_id", [None, "", "-bad", "has space", "x" * 129])
def test_session_id_only_when_safe(session_id: str | None) -> None:
    assert "sessionId" not in build_ask_request(QUESTION, session_id)


def test_valid_escalation_is_sent_as_deterministic() -> None:
    escalation = build_escalation("How do I install?", "miss")
    request = build_ask_request(QUESTION, None, escalation)
    assert request["deterministic"] == escalation.to_wire()
    assert build_ask_request(QUESTION, None, escalation.to_wire())["deterministic"]["reason"] == (
        "miss"
    )


@pytest.mark.parametrize(
    "escalation",
    [
        {"protocol": "agentskit.chat.answer", "version": 1, "outcome": "escalation"},
        {"outcome": "escalation"},
        "not an envelope",
        42,
    ],
)
def test_invalid_escalation_is_left_out(escalation: Any) -> None:
    assert "deterministic" not in build_ask_request(QUESTION, None, escalation)


def test_non_escalation_envelope_is_left_out() -> None:
    wire = build_escalation("q", "miss").to_wire()
    wire["outcome"] = "answer"
    assert "deterministic" not in build_ask_request(QUESTION, None, wire)


def test_request_bounds_messages_count_and_length() -> None:
    many = [{"role": "user", "content": f"q{i}"} for i in range(ASK_REQUEST_MAX_MESSAGES + 6)]
    request = build_ask_request(many)
    assert len(request["messages"]) == ASK_REQUEST_MAX_MESSAGES
    assert request["messages"][-1]["content"] == f"q{ASK_REQUEST_MAX_MESSAGES + 5}"
    long = "\U0001f600" * ASK_REQUEST_MESSAGE_MAX_CHARS
    content = build_ask_request([{"role": "user", "content": long}])["messages"][0]["content"]
    assert js_length(content) == ASK_REQUEST_MESSAGE_MAX_CHARS


def test_request_body_fits_64_kib_by_leaving_out_the_oldest() -> None:
    messages = [{"role": "user", "content": f"{i}" + "x" * 15_000} for i in range(8)]
    request = build_ask_request(messages)
    size = utf8_length(json.dumps(request, separators=(",", ":"), ensure_ascii=False))
    assert size <= ASK_REQUEST_MAX_BODY_BYTES
    assert request["messages"][-1]["content"].startswith("7")
    assert len(request["messages"]) == 4


@pytest.mark.parametrize(
    ("endpoint", "corpus", "persona", "url"),
    [
        ("/api/ask", None, None, "/api/ask"),
        ("/api/ask", "docs", None, "/api/ask?corpus=docs"),
        ("/api/ask", "docs", "guide", "/api/ask?corpus=docs&persona=guide"),
        ("/api/ask", "  ", "\t", "/api/ask"),
        ("api/ask?x=1", "docs", None, "api/ask?x=1&corpus=docs"),
        ("/ask?corpus=old&y=2", "new", None, "/ask?y=2&corpus=new"),
        (
            "https://a.example/v1/ask",
            "docs",
            "a b",
            "https://a.example/v1/ask?corpus=docs&persona=a+b",
        ),
        ("https://a.example/v1/ask#f", "d", None, "https://a.example/v1/ask?corpus=d#f"),
    ],
)
def test_endpoint_params(endpoint: str, corpus: str | None, persona: str | None, url: str) -> None:
    assert endpoint_with_params(endpoint, corpus, persona) == url


def test_relative_endpoint_is_posted_relative() -> None:
    transport = FakeTransport([DONE])
    run(transport, endpoint="/api/ask", corpus="docs")
    assert transport.requests[0][0] == "/api/ask?corpus=docs"


@pytest.mark.parametrize("endpoint", ["", "   "])
def test_blank_endpoint_is_a_host_error(endpoint: str) -> None:
    with pytest.raises(ValueError):
        create_ask_adapter(endpoint=endpoint, transport=FakeTransport())


def test_non_positive_timeout_is_a_host_error() -> None:
    with pytest.raises(ValueError):
        create_ask_adapter(endpoint="/a", transport=FakeTransport(), connect_timeout=0)


# -- connection deadline -----------------------------------------------------------------------


def test_deadline_before_headers_is_an_error_and_cancels_the_request() -> None:
    transport = FakeTransport([DONE], header_delay=5.0)
    chunks = run(transport, connect_timeout=0.05)
    assert chunks == [{"type": "error", "content": TIMEOUT_MESSAGE}]
    assert transport.post_cancelled


def test_headers_on_time_then_a_slow_body_completes() -> None:
    steps: list[Step] = [text("a"), 0.08, text("b"), 0.08, text("c"), 0.08, DONE]
    transport = FakeTransport(steps, header_delay=0.02)
    chunks = run(transport, connect_timeout=0.05)
    assert texts(chunks) == ["a", "b", "c"]
    assert terminal(chunks) == {"type": "done"}


# -- status and network ------------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 401, 403, 404, 429, 500, 502, 304])
def test_non_ok_status(status: int) -> None:
    transport = FakeTransport([DONE], status=status)
    chunks = run(transport)
    assert chunks == [{"type": "error", "content": f"Ask request failed ({status})."}]
    assert transport.response.cancelled


def test_ok_statuses_stream() -> None:
    for status in (200, 201, 299):
        assert run(FakeTransport([text("x"), DONE], status=status))[-1] == {"type": "done"}


@pytest.mark.parametrize(
    "error", [OSError("connection refused"), ConnectionResetError(), RuntimeError("bug")]
)
def test_network_failure_is_an_error_chunk(error: BaseException) -> None:
    chunks = run(FakeTransport(error=error))
    assert chunks == [{"type": "error", "content": NETWORK_MESSAGE}]


def test_body_failure_keeps_what_came_before() -> None:
    transport = FakeTransport([text("partial "), ConnectionResetError("gone")])
    chunks = run(transport)
    assert texts(chunks) == ["partial "]
    assert terminal(chunks) == {"type": "error", "content": INTERRUPTED_MESSAGE}


# -- abort -------------------------------------------------------------------------------------


async def stream_then_abort(
    source: AskSource, after: int, abort: Callable[[], None] | None = None
) -> list[dict[str, str]]:
    chunks: list[dict[str, str]] = []
    async for chunk in source:
        chunks.append(chunk)
        if len(chunks) == after:
            (abort or source.abort)()
    return chunks


def test_abort_mid_stream_keeps_content_and_emits_no_error() -> None:
    steps: list[Step] = [text("one "), text("two "), 0.5, text("never"), DONE]
    transport = FakeTransport(steps)
    adapter = create_ask_adapter(endpoint="/a", transport=transport)
    source = adapter.create_source(QUESTION)
    chunks = asyncio.run(stream_then_abort(source, 2))
    assert texts(chunks) == ["one ", "two "]
    assert all(c["type"] == "text" for c in chunks)
    assert transport.response.cancelled
    assert source.aborted


def test_abort_while_waiting_for_a_chunk() -> None:
    transport = FakeTransport([text("one "), 30.0, DONE])
    adapter = create_ask_adapter(endpoint="/a", transport=transport)
    source = adapter.create_source(QUESTION)

    async def scenario() -> list[dict[str, str]]:
        consumer = asyncio.ensure_future(collect(source))
        await asyncio.sleep(0.05)
        source.abort()
        return await asyncio.wait_for(consumer, 2)

    chunks = asyncio.run(scenario())
    assert texts(chunks) == ["one "]
    assert transport.response.read_cancelled
    assert transport.response.cancelled


def test_abort_while_connecting() -> None:
    transport = FakeTransport([DONE], header_delay=30.0)
    adapter = create_ask_adapter(endpoint="/a", transport=transport)
    source = adapter.create_source(QUESTION)

    async def scenario() -> list[dict[str, str]]:
        consumer = asyncio.ensure_future(collect(source))
        await asyncio.sleep(0.05)
        source.abort()
        return await asyncio.wait_for(consumer, 2)

    assert asyncio.run(scenario()) == []
    assert transport.post_cancelled


def test_abort_before_streaming_sends_nothing() -> None:
    transport = FakeTransport([DONE])
    source = create_ask_adapter(endpoint="/a", transport=transport).create_source(QUESTION)
    source.abort()
    source.abort()  # idempotent
    assert asyncio.run(collect(source)) == []
    assert transport.requests == []


def test_abort_between_chunks_cancels_upstream_even_if_not_iterated_again() -> None:
    transport = FakeTransport([text("a"), 10.0, DONE])
    source = create_ask_adapter(endpoint="/a", transport=transport).create_source(QUESTION)

    async def scenario() -> None:
        iterator = source.__aiter__()
        first = await iterator.__anext__()
        assert first["type"] == "text"
        source.abort()
        await asyncio.sleep(0.01)  # the background cancel runs
        assert transport.response.cancelled
        await iterator.aclose()  # type: ignore[attr-defined]

    asyncio.run(scenario())


def test_consumer_cancellation_propagates_and_cancels_upstream() -> None:
    transport = FakeTransport([text("a"), 30.0, DONE])
    source = create_ask_adapter(endpoint="/a", transport=transport).create_source(QUESTION)

    async def scenario() -> None:
        consumer = asyncio.ensure_future(collect(source))
        await asyncio.sleep(0.05)
        consumer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await consumer

    asyncio.run(scenario())
    assert transport.response.cancelled
    assert not source.aborted


def test_breaking_out_of_the_loop_cancels_upstream() -> None:
    transport = FakeTransport([text("a"), text("b"), DONE])
    source = create_ask_adapter(endpoint="/a", transport=transport).create_source(QUESTION)

    async def scenario() -> None:
        iterator = source.__aiter__()
        await iterator.__anext__()
        await iterator.aclose()  # type: ignore[attr-defined]

    asyncio.run(scenario())
    assert transport.response.cancelled


def test_a_source_streams_once() -> None:
    source = create_ask_adapter(endpoint="/a", transport=FakeTransport([DONE])).send(QUESTION)

    async def twice() -> list[list[dict[str, str]]]:
        return [await collect(source), await collect(source)]

    first, second = asyncio.run(twice())
    assert first == [{"type": "done"}]
    assert second == [{"type": "error", "content": REUSED_MESSAGE}]


def test_terminal_done_cancels_the_rest_of_the_body() -> None:
    transport = FakeTransport([text("a"), DONE, text("after done")])
    chunks = run(transport)
    assert texts(chunks) == ["a"] and chunks[-1] == {"type": "done"}
    assert transport.response.cancelled


# -- modes ---------------------------------------------------------------------------------------


STREAM = [text("Hello "), text("w\u00f6rld \U0001f600"), DONE]


@pytest.mark.parametrize(
    "content_type",
    [
        "application/x-ndjson",
        "application/x-ndjson; charset=utf-8",
        "APPLICATION/NDJSON",
        "text/plain",
        "text/plain; charset=utf-8",
        "application/octet-stream",
        None,
    ],
)
def test_valid_ndjson_under_any_content_type(content_type: str | None) -> None:
    chunks = run(FakeTransport(STREAM, content_type=content_type))
    assert texts(chunks) == ["Hello ", "w\u00f6rld \U0001f600"]
    assert terminal(chunks) == {"type": "done"}


def test_one_byte_per_chunk_split_inside_utf8() -> None:
    body = b"".join(STREAM)
    for content_type in ("application/x-ndjson", "text/plain"):
        steps: list[Step] = [body[i : i + 1] for i in range(len(body))]
        chunks = run(FakeTransport(steps, content_type=content_type))
        assert texts(chunks) == ["Hello ", "w\u00f6rld \U0001f600"], content_type


def test_html_body_is_text() -> None:
    html = b"<!doctype html><html><body><script>alert(1)</script>Not found</body></html>"
    chunks = run(FakeTransport([html], content_type="text/html"))
    assert texts(chunks) == [html.decode()]
    assert terminal(chunks) == {"type": "done"}


def test_prose_one_byte_per_chunk_is_text_without_replacement_chars() -> None:
    prose = "Caf\u00e9 \U0001f600 answer\nsecond line\n".encode()
    chunks = run(FakeTransport([prose[i : i + 1] for i in range(len(prose))], content_type=None))
    assert "".join(texts(chunks)) == prose.decode()


def test_ndjson_looking_body_that_is_not_ask_is_text() -> None:
    body = b'{"hello": "world"}\n{"type":"text","delta":"x"}\n'
    chunks = run(FakeTransport([body], content_type="text/plain"))
    assert "".join(texts(chunks)) == body.decode()


def test_declared_ndjson_is_never_shown_as_text() -> None:
    body = b'{"hello": "world"}\nplain words\n{"type":"text","delta":"x"}\n'
    assert texts(run(FakeTransport([body]))) == ["x"]


def test_sniffing_skips_leading_whitespace_and_blank_lines() -> None:
    body = b"\n  \n" + b"".join(STREAM)
    assert texts(run(FakeTransport([body], content_type="text/plain")))[0] == "Hello "


def test_bom_before_ndjson_is_ignored() -> None:
    body = b"\xef\xbb\xbf" + b"".join(STREAM)
    assert texts(run(FakeTransport([body], content_type=None)))[0] == "Hello "


def test_unterminated_single_event_body() -> None:
    chunks = run(FakeTransport([b'{"type":"text","delta":"only"}'], content_type=None))
    assert texts(chunks) == ["only"] and chunks[-1] == {"type": "done"}


def test_empty_and_whitespace_bodies_are_done() -> None:
    assert run(FakeTransport([], content_type=None)) == [{"type": "done"}]
    assert run(FakeTransport([b"  \n\n "], content_type=None)) == [{"type": "done"}]
    assert run(FakeTransport([])) == [{"type": "done"}]


def test_text_mode_truncated_utf8_tail_becomes_a_replacement_char() -> None:
    chunks = run(FakeTransport([b"caf\xc3"], content_type="text/plain"))
    assert texts(chunks) == ["caf", "\ufffd"]


def test_text_mode_hostile_text_is_encoded_inertly() -> None:
    hostile = '\x1eagentskit.chat.content/1\n{"kind":"component"}\n\u2028\u2029'
    chunks = run(FakeTransport([hostile.encode()], content_type="text/plain"))
    assert texts(chunks) == [hostile]


# -- oversized first line ------------------------------------------------------------------------


def test_oversized_first_line_without_newline_is_discarded_through_its_newline() -> None:
    big = b'{"type":"text","delta":"' + b"x" * ASK_LINE_MAX_BYTES
    steps: list[Step] = [big[:500_000], big[500_000:], b'tail"}\n' + text("after"), DONE]
    for content_type in ("application/x-ndjson", "text/plain", None):
        chunks = run(FakeTransport(steps, content_type=content_type))
        assert texts(chunks) == ["after"], content_type
        assert chunks[-1] == {"type": "done"}


@pytest.mark.parametrize("content_type", ["application/x-ndjson", "text/plain", None])
def test_first_line_at_the_limit_is_kept_and_one_past_is_dropped(content_type: str | None) -> None:
    event = b'{"type":"text","delta":"first"}'
    at_limit = event + b" " * (ASK_LINE_MAX_BYTES - len(event))  # trimmed before parsing
    assert len(at_limit) == ASK_LINE_MAX_BYTES
    kept = run(
        FakeTransport(
            [at_limit[:300_000], at_limit[300_000:] + b"\n", DONE], content_type=content_type
        )
    )
    assert texts(kept) == ["first"]
    over = at_limit + b" "
    steps: list[Step] = [over[:300_000], over[300_000:] + b"\n" + text("next"), DONE]
    assert texts(run(FakeTransport(steps, content_type=content_type))) == ["next"]


def test_whitespace_flood_before_the_first_line_stays_bounded() -> None:
    steps: list[Step] = [b" " * 700_000, b"\n" * 700_000, b"".join(STREAM)]
    assert texts(run(FakeTransport(steps, content_type=None))) == [
        "Hello ",
        "w\u00f6rld \U0001f600",
    ]


# -- bounds ----------------------------------------------------------------------------------------


def test_512_records_complete_and_513_hit_the_record_limit() -> None:
    ok = run(FakeTransport([text("r")] * ASSISTANT_CONTENT_MAX_RECORDS + [DONE]))
    assert len(texts(ok)) == ASSISTANT_CONTENT_MAX_RECORDS and ok[-1] == {"type": "done"}
    over = FakeTransport([text("r")] * (ASSISTANT_CONTENT_MAX_RECORDS + 1) + [DONE])
    chunks = run(over)
    assert len(texts(chunks)) == ASSISTANT_CONTENT_MAX_RECORDS
    assert terminal(chunks) == {"type": "error", "content": RECORD_LIMIT_MESSAGE}
    assert over.response.cancelled


def test_record_limit_in_one_network_chunk_keeps_the_first_512() -> None:
    body = text("r") * (ASSISTANT_CONTENT_MAX_RECORDS + 1)
    chunks = run(FakeTransport([body]))
    assert len(texts(chunks)) == ASSISTANT_CONTENT_MAX_RECORDS
    assert chunks[-1] == {"type": "error", "content": RECORD_LIMIT_MESSAGE}


def _byte_exact_deltas(extra: int) -> list[Step]:
    """Text deltas whose encoded content is exactly 262,144 bytes (+ `extra`)."""
    overhead = len(b'{"kind":"text","text":""}\n')
    prefix = len(ASSISTANT_CONTENT_PREFIX.encode())
    full = ASSISTANT_CONTENT_TEXT_MAX_CHARS
    count = (ASSISTANT_CONTENT_MAX_BYTES - prefix) // (full + overhead)
    last = ASSISTANT_CONTENT_MAX_BYTES - prefix - count * (full + overhead) - overhead + extra
    return [text("a" * full)] * count + [text("b" * last), DONE]


def test_262144_bytes_complete_and_262145_hit_the_byte_limit() -> None:
    ok = run(FakeTransport(_byte_exact_deltas(0)))
    content = "".join(c["content"] for c in ok if c["type"] == "text")
    assert utf8_length(content) == ASSISTANT_CONTENT_MAX_BYTES
    assert ok[-1] == {"type": "done"}
    over = run(FakeTransport(_byte_exact_deltas(1)))
    assert terminal(over) == {"type": "error", "content": BYTE_LIMIT_MESSAGE}
    kept = "".join(c["content"] for c in over if c["type"] == "text")
    assert utf8_length(kept) < ASSISTANT_CONTENT_MAX_BYTES
    assert all(part == "a" * ASSISTANT_CONTENT_TEXT_MAX_CHARS for part in texts(over))


def test_257_kib_text_body_hits_the_byte_limit() -> None:
    chunks = run(FakeTransport([b"z" * (257 * 1024)], content_type="text/plain"))
    assert terminal(chunks) == {"type": "error", "content": BYTE_LIMIT_MESSAGE}
    assert decode_assistant_content("".join(c["content"] for c in chunks[:-1])).ok


def test_long_delta_is_split_into_records() -> None:
    delta = "x" * (ASSISTANT_CONTENT_TEXT_MAX_CHARS * 2 + 5)
    parts = texts(run(FakeTransport([text(delta), DONE])))
    assert [len(p) for p in parts] == [ASSISTANT_CONTENT_TEXT_MAX_CHARS] * 2 + [5]


def test_split_text_never_splits_a_surrogate_pair() -> None:
    pieces = split_text(
        "a" + "\U0001f600" * ASSISTANT_CONTENT_TEXT_MAX_CHARS, ASSISTANT_CONTENT_TEXT_MAX_CHARS
    )
    assert "".join(pieces) == "a" + "\U0001f600" * ASSISTANT_CONTENT_TEXT_MAX_CHARS
    assert all(js_length(p) <= ASSISTANT_CONTENT_TEXT_MAX_CHARS for p in pieces)
    assert js_length(pieces[0]) == ASSISTANT_CONTENT_TEXT_MAX_CHARS - 1
    assert split_text("", ASSISTANT_CONTENT_TEXT_MAX_CHARS) == []


# -- inert lines, errors, tools --------------------------------------------------------------------


def test_unknown_extra_field_and_malformed_lines_are_inert() -> None:
    steps: list[Step] = [
        text("a"),
        line({"type": "thinking", "delta": "hidden"}),
        line({"type": "text", "delta": "hidden", "extra": True}),
        b'{"type":"text","delta":"unterminated\n',
        b"not json at all\n",
        b'{"type":"text","delta":"dup","delta":"dup2"}\n',
        b'{"type":"text","delta":NaN}\n',
        b"[1,2,3]\n",
        b"\n\n",
        text("b"),
        DONE,
    ]
    chunks = run(FakeTransport(steps))
    assert texts(chunks) == ["a", "b"] and chunks[-1] == {"type": "done"}


def test_error_mid_stream_keeps_what_came_before() -> None:
    steps: list[Step] = [
        text("partial answer"),
        line({"type": "error", "message": "Generation failed.", "code": "ASK_GENERATION_FAILED"}),
        text("never"),
    ]
    transport = FakeTransport(steps)
    chunks = run(transport)
    assert texts(chunks) == ["partial answer"]
    assert terminal(chunks) == {"type": "error", "content": "Generation failed."}
    assert transport.response.cancelled


def test_cite_becomes_a_source_list_record() -> None:
    cite = {
        "type": "tool",
        "id": "sources-req-9",
        "name": "cite",
        "args": {"sources": [{"id": "a", "title": "Intro", "path": "/docs/intro"}]},
    }
    chunks = run(FakeTransport([text("See docs."), line(cite), DONE]))
    parts = texts(chunks)
    assert parts[0] == "See docs."
    assert parts[1]["componentKey"] == "source-list"
    assert parts[1]["props"]["sources"] == [
        {"id": "source-1", "title": "Intro", "url": "/docs/intro"}
    ]


def test_answer_tool_is_text() -> None:
    answer = {"type": "tool", "id": "t", "name": "answer", "args": {"markdown": "**Yes**"}}
    assert texts(run(FakeTransport([line(answer), DONE]))) == ["**Yes**"]


FRAME = {
    "protocol": "agentskit.chat.component",
    "version": 1,
    "type": "render",
    "componentKey": "link-card",
    "instanceId": "card-1",
    "props": {"title": "Docs", "url": "/docs"},
    "fallback": {"kind": "link-card", "summary": "Docs"},
}
CUSTOM = line({"type": "tool", "id": "c", "name": "codeBlock", "args": {"code": "x"}})


def raising_tool(_event: dict[str, Any]) -> Any:
    raise RuntimeError("host bug")


@pytest.mark.parametrize(
    ("project_tool", "expected"),
    [
        (None, ["before", "after"]),
        (raising_tool, ["before", "after"]),
        (lambda _e: {"not": "a frame"}, ["before", "after"]),
        (lambda _e: {**FRAME, "version": 2}, ["before", "after"]),
        (lambda _e: FRAME, ["before", FRAME, "after"]),
    ],
)
def test_project_tool_in_the_stream(project_tool: Any, expected: list[Any]) -> None:
    steps: list[Step] = [text("before"), CUSTOM, text("after"), DONE]
    chunks = run(FakeTransport(steps), project_tool=project_tool)
    assert texts(chunks) == expected
    assert chunks[-1] == {"type": "done"}


def test_first_chunk_carries_the_prefix_once() -> None:
    chunks = run(FakeTransport([text("a"), text("b"), DONE]))
    assert chunks[0]["content"].startswith(ASSISTANT_CONTENT_PREFIX)
    assert not chunks[1]["content"].startswith("\x1e")


# -- chunking independence (property) --------------------------------------------------------------


EVENT_LINES = [
    text("Hello "),
    text("w\u00f6rld \U0001f600\u2028"),
    b"garbage line\n",
    line(
        {
            "type": "tool",
            "id": "s",
            "name": "cite",
            "args": {"sources": [{"title": "T", "path": "/t"}]},
        }
    ),
    b'{"type":"text","delta":"crlf"}\r\n',
    text("end"),
    DONE,
]
BODY = b"".join(EVENT_LINES)


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    bounds = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds) if b > a]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=20),
    st.sampled_from(["application/x-ndjson", "text/plain", ""]),
)
def test_result_is_independent_of_chunk_boundaries(cuts: list[int], content_type: str) -> None:
    assert read_body(_split(BODY, cuts), content_type) == read_body([BODY], content_type)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300), st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_any_body_never_raises_and_yields_valid_content(body: bytes, cuts: list[int]) -> None:
    for content_type in ("application/x-ndjson", ""):
        chunks = read_body(_split(body, cuts), content_type)
        assert chunks[-1]["type"] in ("done", "error")
        content = "".join(c["content"] for c in chunks if c["type"] == "text")
        if content:
            assert decode_assistant_content(content).ok


def test_reader_ignores_input_after_terminal() -> None:
    reader = AskBodyReader("application/x-ndjson")
    assert reader.feed(DONE) == [{"type": "done"}]
    assert reader.feed(text("x")) == []
    assert reader.finish() == []


OVERSIZED_BODY = b'  {"type":"text","delta":"' + b"x" * ASK_LINE_MAX_BYTES + b'"}\n' + BODY


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=len(OVERSIZED_BODY)), min_size=1, max_size=4),
    st.sampled_from(["application/x-ndjson", "text/plain"]),
)
def test_oversized_first_line_outcome_is_independent_of_chunking(
    cuts: list[int], content_type: str
) -> None:
    expected = read_body([BODY], content_type)
    assert read_body(_split(OVERSIZED_BODY, cuts), content_type) == expected


# -- benchmark helpers -----------------------------------------------------------------------------


def test_recorded_long_stream_fits_every_bound() -> None:
    chunks = read_body([recorded_long_stream()])
    assert chunks[-1] == {"type": "done"}
    content = "".join(c["content"] for c in chunks[:-1])
    decoded = decode_assistant_content(content)
    assert decoded.ok and len(decoded.parts) == ASSISTANT_CONTENT_MAX_RECORDS - 1


def test_bench_reports_throughput_and_flat_per_chunk_cost() -> None:
    report = run_ask_bench()
    assert report["throughput"]["mbPerSecond"] > 0
    assert report["throughput"]["emitted"] == ASSISTANT_CONTENT_MAX_RECORDS
    # work per chunk must not grow with the answer: generous bound against timer noise
    assert report["flatness"]["endToStartRatio"] < 4
