"""What a failed Ask request said, and how the widget should put it to the reader.

The adapter's error chunk keeps the contract's text ("Ask request failed
(422).", PROTOCOL.md section 5). Beside it, the source records an
`AskFailure`: the status, the server's `{"error": {code, message,
retryable}}` envelope when the body is one (validated: a strict JSON object
within `ASK_ERROR_BODY_MAX_BYTES`, an Ask error code, a non-blank message of
at most `ASK_ERROR_MESSAGE_MAX_CHARS`, a boolean), and a `Retry-After` in
delta-seconds. `failure_notice` turns that into what the reader sees: plain
text (never markup), whether a retry can help, and how long to wait first.
"""

from dataclasses import dataclass
from typing import Final, Literal

from ...protocol.identifiers import ASK_ERROR_CODE_PATTERN
from ...protocol.limits import (
    ASK_ERROR_BODY_MAX_BYTES,
    ASK_ERROR_MESSAGE_MAX_CHARS,
    ASK_RETRY_AFTER_MAX_SECONDS,
)
from ...protocol.text_metrics import js_is_blank, js_length
from ...protocol.wire_json import JSON_INVALID, parse_json

NoticeKind = Literal["not_found", "unauthorized", "forbidden", "rate_limited", "failed"]
NO_GROUNDED_SOURCES: Final = "ASK_NO_GROUNDED_SOURCES"
NOT_FOUND_TEXT: Final = "The documentation has no passage that answers this question."
UNAUTHORIZED_TEXT: Final = "The Ask service did not accept the request: sign in and ask again."
FORBIDDEN_TEXT: Final = "This site's Ask service does not allow this question from this page."
RATE_LIMITED_TEXT: Final = "Too many questions in a short time."
_DIGITS: Final = frozenset("0123456789")


@dataclass(frozen=True, slots=True)
class ErrorEnvelope:
    """A validated `{"error": {code, message, retryable}}` body."""

    code: str
    message: str
    retryable: bool


@dataclass(frozen=True, slots=True)
class AskFailure:
    """A non-OK Ask response: its status, its envelope if valid, its Retry-After if usable."""

    status: int
    envelope: ErrorEnvelope | None = None
    retry_after_seconds: int | None = None


@dataclass(frozen=True, slots=True)
class FailureNotice:
    """What the widget shows: plain `text`, whether Retry is offered, and after how long."""

    kind: NoticeKind
    text: str
    retry: bool
    retry_after_seconds: int | None = None


def parse_error_envelope(body: bytes) -> ErrorEnvelope | None:
    """The envelope in `body`, or None when it is not exactly one; never raises."""
    try:
        if len(body) > ASK_ERROR_BODY_MAX_BYTES:
            return None
        value = parse_json(body)
        if value is JSON_INVALID or not isinstance(value, dict):
            return None
        error = value.get("error")
        if not isinstance(error, dict):
            return None
        code, message, retryable = error.get("code"), error.get("message"), error.get("retryable")
        if not isinstance(code, str) or not ASK_ERROR_CODE_PATTERN.fullmatch(code):
            return None
        if not isinstance(message, str) or js_is_blank(message):
            return None
        if js_length(message) > ASK_ERROR_MESSAGE_MAX_CHARS or type(retryable) is not bool:
            return None
        return ErrorEnvelope(code, message, retryable)
    except Exception:  # untrusted bytes: anything odd is "no envelope"
        return None


def parse_retry_after(value: str) -> int | None:
    """`Retry-After` as delta-seconds within the bound; an HTTP date or anything else is None."""
    text = value.strip(" \t")
    if not text or len(text) > len(str(ASK_RETRY_AFTER_MAX_SECONDS)) or not set(text) <= _DIGITS:
        return None
    seconds = int(text)
    return seconds if seconds <= ASK_RETRY_AFTER_MAX_SECONDS else None


def failure_notice(failure: AskFailure | None, adapter_text: str) -> FailureNotice:
    """How to show a failed answer; `adapter_text` is the adapter's own error text."""
    if failure is None:  # timeout, network, interrupted body: trying again may work
        return FailureNotice("failed", adapter_text, retry=True)
    envelope = failure.envelope
    if failure.status == 422 and envelope is not None and envelope.code == NO_GROUNDED_SOURCES:
        return FailureNotice("not_found", envelope.message, retry=False)
    if failure.status == 401:
        return FailureNotice("unauthorized", UNAUTHORIZED_TEXT, retry=False)
    if failure.status == 403:
        return FailureNotice("forbidden", FORBIDDEN_TEXT, retry=False)
    if failure.status == 429:
        wait = failure.retry_after_seconds
        return FailureNotice("rate_limited", RATE_LIMITED_TEXT, True, retry_after_seconds=wait)
    if envelope is not None:
        return FailureNotice("failed", envelope.message, retry=envelope.retryable)
    server_side = failure.status >= 500 or failure.status == 408
    return FailureNotice("failed", adapter_text, retry=server_side)
