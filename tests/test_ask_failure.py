"""A failed Ask request says what happened: the envelope, Retry-After, and what the reader sees.

The adapter's error chunk keeps the contract's text; `source.failure` carries
the rest, validated and bounded (chat/ask/failure.py).
"""

import asyncio
import json
from typing import Any

import pytest

from agentskit_web.chat.ask.adapter import create_ask_adapter
from agentskit_web.chat.ask.failure import (
    FORBIDDEN_TEXT,
    RATE_LIMITED_TEXT,
    UNAUTHORIZED_TEXT,
    AskFailure,
    ErrorEnvelope,
    failure_notice,
    parse_error_envelope,
    parse_retry_after,
)
from agentskit_web.protocol.limits import (
    ASK_ERROR_BODY_MAX_BYTES,
    ASK_ERROR_CODE_MAX_CHARS,
    ASK_ERROR_MESSAGE_MAX_CHARS,
    ASK_RETRY_AFTER_MAX_SECONDS,
)
from test_ask_adapter import QUESTION, FakeTransport

NOT_FOUND = "No passage of the documentation matches this question."


def envelope(
    code: Any = "ASK_NO_GROUNDED_SOURCES", message: Any = NOT_FOUND, retryable: Any = False
) -> bytes:
    return json.dumps(
        {"error": {"code": code, "message": message, "retryable": retryable}},
        ensure_ascii=False,
    ).encode()


def test_a_valid_envelope_is_read() -> None:
    assert parse_error_envelope(envelope()) == ErrorEnvelope(
        "ASK_NO_GROUNDED_SOURCES", NOT_FOUND, False
    )


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not json",
        b"[]",
        b'{"error": "text"}',
        envelope(code="lower"),
        envelope(code=5),
        envelope(message="   "),
        envelope(message=None),
        envelope(retryable="yes"),
        envelope(retryable=0),
        b'{"error": {"code": "A", "code": "B", "message": "m", "retryable": true}}',
    ],
)
def test_anything_else_is_no_envelope(body: bytes) -> None:
    assert parse_error_envelope(body) is None


def test_message_bound_at_the_limit_and_one_past() -> None:
    assert parse_error_envelope(envelope(message="m" * ASK_ERROR_MESSAGE_MAX_CHARS)) is not None
    assert parse_error_envelope(envelope(message="m" * (ASK_ERROR_MESSAGE_MAX_CHARS + 1))) is None


def test_code_bound_at_the_limit_and_one_past() -> None:
    assert parse_error_envelope(envelope(code="A" * ASK_ERROR_CODE_MAX_CHARS)) is not None
    assert parse_error_envelope(envelope(code="A" * (ASK_ERROR_CODE_MAX_CHARS + 1))) is None


def test_body_bound_at_the_limit_and_one_past() -> None:
    # Four-byte characters fill the bytes while the message stays within its char bound.
    filler = ASK_ERROR_BODY_MAX_BYTES - len(envelope(message=""))
    message = "\U0001f600" * (filler // 4) + "m" * (filler % 4)
    assert len(envelope(message=message)) == ASK_ERROR_BODY_MAX_BYTES
    assert parse_error_envelope(envelope(message=message)) is not None
    assert parse_error_envelope(envelope(message=message + "m")) is None


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("12", 12),
        (" 0 ", 0),
        (str(ASK_RETRY_AFTER_MAX_SECONDS), ASK_RETRY_AFTER_MAX_SECONDS),
        (str(ASK_RETRY_AFTER_MAX_SECONDS + 1), None),
        ("Wed, 21 Oct 2026 07:28:00 GMT", None),
        ("-1", None),
        ("1.5", None),
        ("", None),
        ("٣", None),  # a non-ASCII digit is not a delta-seconds
    ],
)
def test_retry_after_is_delta_seconds_within_the_bound(value: str, seconds: int | None) -> None:
    assert parse_retry_after(value) == seconds


def test_what_the_reader_is_told() -> None:
    not_found = AskFailure(422, parse_error_envelope(envelope()))
    assert failure_notice(not_found, "x") == failure_notice(not_found, "x")
    notice = failure_notice(not_found, "Ask request failed (422).")
    assert (notice.kind, notice.text, notice.retry) == ("not_found", NOT_FOUND, False)
    assert failure_notice(AskFailure(401), "x").text == UNAUTHORIZED_TEXT
    assert not failure_notice(AskFailure(401), "x").retry
    assert failure_notice(AskFailure(403), "x").text == FORBIDDEN_TEXT
    limited = failure_notice(AskFailure(429, None, 7), "x")
    assert (limited.text, limited.retry, limited.retry_after_seconds) == (
        RATE_LIMITED_TEXT,
        True,
        7,
    )
    server = AskFailure(503, ErrorEnvelope("ASK_BUSY", "Busy, try soon.", True))
    assert (failure_notice(server, "x").text, failure_notice(server, "x").retry) == (
        "Busy, try soon.",
        True,
    )
    final = AskFailure(400, ErrorEnvelope("ASK_INVALID_REQUEST", "Bad question.", False))
    assert not failure_notice(final, "x").retry
    assert failure_notice(AskFailure(502), "Ask request failed (502).").retry
    assert not failure_notice(AskFailure(405), "Ask request failed (405).").retry
    assert failure_notice(None, "timed out").retry


def run_source(transport: FakeTransport) -> tuple[list[dict[str, str]], Any]:
    adapter = create_ask_adapter(endpoint="https://ask.example.com/v1/ask", transport=transport)
    source = adapter.create_source(QUESTION)

    async def collect() -> list[dict[str, str]]:
        return [chunk async for chunk in source]

    return asyncio.run(collect()), source.failure


def test_the_adapter_keeps_its_error_text_and_records_the_failure() -> None:
    transport = FakeTransport([envelope()[:10], envelope()[10:]], status=422)
    transport.response.headers["Retry-After"] = "30"
    chunks, failure = run_source(transport)
    assert chunks == [{"type": "error", "content": "Ask request failed (422)."}]
    assert failure == AskFailure(
        422, ErrorEnvelope("ASK_NO_GROUNDED_SOURCES", NOT_FOUND, False), 30
    )


def test_an_oversized_or_broken_error_body_is_no_envelope() -> None:
    big = envelope(message="m" * ASK_ERROR_BODY_MAX_BYTES)
    chunks, failure = run_source(FakeTransport([big], status=500))
    assert chunks == [{"type": "error", "content": "Ask request failed (500)."}]
    assert failure == AskFailure(500, None, None)
    _, broken = run_source(FakeTransport([envelope()[:5], ConnectionError("reset")], status=500))
    assert broken == AskFailure(500, None, None)
