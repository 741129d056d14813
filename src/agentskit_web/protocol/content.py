"""Ordered assistant content `agentskit.chat.content/1` (PROTOCOL.md section 2).

One assistant message's `content` string carries a prefix and then one JSON
record per line, each a bounded text part or a validated component frame.
The encoder is the only way text gets in: every record is JSON-escaped, so
newlines, `\\x1e` and prefix or record look-alikes in model output stay inert.

Lines are split on `\\n` only. `str.splitlines()` would also split on
`\\x1c`-`\\x1e`, `\\x85`, U+2028 and U+2029, which JSON strings may contain raw.

Three readers of the same rule: `decode_assistant_content` (whole string,
the reference algorithm), `AssistantContentReader` (incremental, for a
widget rendering a growing message) and `AssistantContentEncoder` (which
never emits a string the decoder would reject).
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, ValidationError

from .component import ComponentFrame, component_frame_or_none
from .diagnostics import ContentResult, Diagnostic, ProtocolError
from .limits import (
    ASSISTANT_CONTENT_MAX_BYTES,
    ASSISTANT_CONTENT_MAX_RECORDS,
    ASSISTANT_CONTENT_TEXT_MAX_CHARS,
    ASSISTANT_CONTENT_TEXT_MAX_CODE_POINTS,
)
from .text_metrics import code_point_length, split_text, utf8_length
from .wire_json import JSON_INVALID, dump_json, dump_json_string, parse_json
from .wire_model import WireModel

ASSISTANT_CONTENT_PREFIX: Final = "\x1eagentskit.chat.content/1\n"
ASSISTANT_CONTENT_VERSION_STEM: Final = "\x1eagentskit.chat.content/"
RECORD_SEPARATOR: Final = "\x1e"

ASSISTANT_CONTENT_INVALID_RECORD: Final = "ASSISTANT_CONTENT_INVALID_RECORD"
ASSISTANT_CONTENT_UNSUPPORTED_VERSION: Final = "ASSISTANT_CONTENT_UNSUPPORTED_VERSION"
ASSISTANT_CONTENT_LIMIT_EXCEEDED: Final = "ASSISTANT_CONTENT_LIMIT_EXCEEDED"

ENVELOPE_INVALID: Final = Diagnostic(
    ASSISTANT_CONTENT_INVALID_RECORD, "Assistant content envelope is invalid."
)
RECORD_INVALID: Final = Diagnostic(
    ASSISTANT_CONTENT_INVALID_RECORD, "Assistant content record is invalid."
)
VERSION_UNSUPPORTED: Final = Diagnostic(
    ASSISTANT_CONTENT_UNSUPPORTED_VERSION,
    "Assistant content envelope uses an unsupported version.",
)
LIMIT_EXCEEDED: Final = Diagnostic(
    ASSISTANT_CONTENT_LIMIT_EXCEEDED, "Assistant content envelope exceeds its safety limit."
)
"""The 262,144-byte bound (and the encoder's refusal of a part that would pass a bound)."""
RECORD_LIMIT_EXCEEDED: Final = Diagnostic(
    ASSISTANT_CONTENT_LIMIT_EXCEEDED, "Assistant content envelope exceeds its record limit."
)
"""The 512-record bound: the reference decoder reports it with its own sentence."""


def _text_code_points(value: str) -> str:
    """Text-record bound in code points (not UTF-16 units), as the reference counts it."""
    if not 1 <= code_point_length(value) <= ASSISTANT_CONTENT_TEXT_MAX_CODE_POINTS:
        raise ValueError("length out of bounds")
    return value


class AssistantTextPart(WireModel):
    """`{"kind": "text", "text": 1..16384 code points}`."""

    kind: Literal["text"]
    text: Annotated[str, AfterValidator(_text_code_points)]


class AssistantComponentPart(WireModel):
    """`{"kind": "component", "frame": <valid render frame>}`."""

    kind: Literal["component"]
    frame: ComponentFrame


def is_assistant_content_candidate(value: object) -> bool:
    """The spec's candidate check: a string starting with `\\x1e`.

    Anything else keeps its legacy meaning (plain text, or one whole frame).
    """
    return isinstance(value, str) and value.startswith(RECORD_SEPARATOR)


# ---------------------------------------------------------------- records


def _text_part_wire(record: dict[str, Any]) -> dict[str, Any] | None:
    """A text record checked by hand (an exact `str` within the code-point bound), else None.

    Accepts what `AssistantTextPart` accepts for a plain `str` (extra keys are ignored,
    as the model ignores them) without building a model per record; anything else is
    left to the model.
    """
    text = record.get("text")
    if type(text) is not str:
        return None
    if not 1 <= code_point_length(text) <= ASSISTANT_CONTENT_TEXT_MAX_CODE_POINTS:
        return None
    return {"kind": "text", "text": text}


def _part_from_wire(record: Any) -> dict[str, Any] | None:
    """The canonical wire dict of one parsed record, or None when invalid; never raises."""
    try:
        if not isinstance(record, dict):
            return None
        kind = record.get("kind")
        if kind == "text" and type(kind) is str:
            fast = _text_part_wire(record) if type(record) is dict else None
            return fast or AssistantTextPart.model_validate(record).to_wire()
        if kind == "component" and type(kind) is str:
            frame = component_frame_or_none(record.get("frame"))
            return None if frame is None else {"kind": "component", "frame": frame.to_wire()}
    except (ValidationError, ValueError, TypeError, RecursionError):
        return None
    except Exception:  # hostile objects may raise anything; invalid
        return None
    return None


def _part_from_line(line: str) -> dict[str, Any] | None:
    """One complete record line: an empty line or anything invalid is None."""
    if not line:
        return None
    record = parse_json(line)
    return None if record is JSON_INVALID else _part_from_wire(record)


# ---------------------------------------------------------------- decoder


def _envelope_failure(value: str) -> Diagnostic | None:
    """Steps 1-3 for a string: the diagnostic, or None when the envelope is v1 or partial."""
    if not value.startswith(RECORD_SEPARATOR):
        return ENVELOPE_INVALID
    if value.startswith(ASSISTANT_CONTENT_PREFIX) or ASSISTANT_CONTENT_PREFIX.startswith(value):
        return None
    if value.startswith(ASSISTANT_CONTENT_VERSION_STEM):
        return VERSION_UNSUPPORTED
    return ENVELOPE_INVALID


def _exceeds_bytes(value: str) -> bool:
    # A char is at least one UTF-8 byte: a huge string is refused before encoding it.
    return len(value) > ASSISTANT_CONTENT_MAX_BYTES or utf8_length(value) > (
        ASSISTANT_CONTENT_MAX_BYTES
    )


def _failure(diagnostic: Diagnostic) -> ContentResult:
    return ContentResult(ok=False, diagnostic=diagnostic)


def _decode(value: Any) -> ContentResult:
    if not isinstance(value, str):  # step 1
        return _failure(ENVELOPE_INVALID)
    value = str.__add__("", value)  # a plain str: subclasses cannot override what follows
    envelope = _envelope_failure(value)  # steps 1 and 3
    if envelope is not None:
        return _failure(envelope)
    if len(value) < len(ASSISTANT_CONTENT_PREFIX):  # step 2: partial prefix while streaming
        return ContentResult(ok=True, parts=[], complete=False)
    if _exceeds_bytes(value):  # step 4
        return _failure(LIMIT_EXCEEDED)
    body = value[len(ASSISTANT_CONTENT_PREFIX) :]
    if body.count("\n") > ASSISTANT_CONTENT_MAX_RECORDS:  # step 5
        return _failure(RECORD_LIMIT_EXCEEDED)
    lines = body.split("\n")[:-1]  # the last element is the empty tail or unfinished record
    parts: list[dict[str, Any]] = []
    for line in lines:  # step 6
        part = _part_from_line(line)
        if part is None:
            return _failure(RECORD_INVALID)
        parts.append(part)
    return ContentResult(ok=True, parts=list(parts), complete=body.endswith("\n"))  # step 7


def decode_assistant_content(value: Any) -> ContentResult:
    """Decode one message's content string following the spec's steps 1-7 in order.

    Returns `.ok`, ordered wire `.parts` and `.complete` (body ends with a
    newline), or a fixed `.diagnostic`. An unfinished trailing record is
    never validated nor exposed. Never raises.
    """
    try:
        return _decode(value)
    except Exception:  # a decoder never raises
        return _failure(RECORD_INVALID)


# ---------------------------------------------------------------- incremental reader


@dataclass(frozen=True, slots=True)
class ContentDelta:
    """What one `AssistantContentReader` call changed.

    `new_parts` are the parts completed by this call, in order. `reset`
    means the content was not a continuation of what the reader saw before:
    drop everything rendered so far (`new_parts` then holds all parts). When
    `ok` is False, earlier parts are no longer valid content: show the
    diagnostic instead, as `decode_assistant_content` would.
    """

    ok: bool
    new_parts: tuple[dict[str, Any], ...] = ()
    complete: bool = False
    diagnostic: Diagnostic | None = None
    reset: bool = False


class AssistantContentReader:
    """Incremental `decode_assistant_content` for a message that grows while streaming.

    `feed(suffix)` takes appended text; `update(content)` takes the whole
    current string and feeds only what is new (it starts over when the
    string is not a continuation, e.g. a regenerated answer). Each call
    costs O(new text): only newly completed records are parsed, bytes and
    records are counted incrementally and the unfinished tail is kept as
    pieces. After every call `result` equals `decode_assistant_content` of
    everything seen. `feed` forgets the last `update` string, so mixing the
    two makes the next `update` start over.
    """

    def __init__(self) -> None:
        self._start()

    def _start(self) -> None:
        self._head = ""  # the text seen while the prefix is still incomplete
        self._in_body = False
        self._terminal: Diagnostic | None = None  # a failure no continuation can undo
        self._invalid = False  # a complete record failed: undone only by a limit failure
        self._bytes = 0
        self._records = 0
        self._tail: list[str] = []
        self._parts: list[dict[str, Any]] = []
        self._last_content: str | None = None

    @property
    def parts(self) -> tuple[dict[str, Any], ...]:
        """Every valid part completed so far (empty while the content is invalid)."""
        return tuple(self._parts) if self._status() is None else ()

    @property
    def result(self) -> ContentResult:
        """The same result `decode_assistant_content` gives for everything seen."""
        status = self._status()
        if status is not None:
            return _failure(status)
        return ContentResult(ok=True, parts=list(self._parts), complete=self._complete())

    def reset(self) -> None:
        """Forget everything, as for a new message."""
        self._start()

    def update(self, content: str) -> ContentDelta:
        """Read the whole current content string; only its new suffix is processed."""
        last = self._last_content
        if last is not None and isinstance(content, str) and content.startswith(last):
            delta = self._feed(content[len(last) :])
            self._last_content = content
            return delta
        self._start()
        delta = self._feed(content)
        self._last_content = content if isinstance(content, str) else None
        return ContentDelta(delta.ok, delta.new_parts, delta.complete, delta.diagnostic, True)

    def feed(self, suffix: str) -> ContentDelta:
        """Read text appended to the content; returns the parts it completed."""
        self._last_content = None
        return self._feed(suffix)

    def _feed(self, suffix: Any) -> ContentDelta:
        before = len(self._parts)
        try:
            self._consume(suffix)
        except Exception:  # a reader never raises; mirror the decoder's fallback
            self._terminal = RECORD_INVALID
        status = self._status()
        if status is not None:
            return ContentDelta(ok=False, diagnostic=status)
        return ContentDelta(True, tuple(self._parts[before:]), self._complete())

    def _status(self) -> Diagnostic | None:
        if self._terminal is not None:
            return self._terminal
        if not self._in_body and not self._head:
            return ENVELOPE_INVALID  # "" does not start with \x1e, yet more may come
        return RECORD_INVALID if self._invalid else None

    def _complete(self) -> bool:
        return self._in_body and self._records > 0 and not self._tail

    def _consume(self, suffix: Any) -> None:
        if self._terminal is not None:
            return
        if not isinstance(suffix, str):
            self._terminal = ENVELOPE_INVALID
            self._parts.clear()
            return
        suffix = str.__add__("", suffix)
        if not self._in_body:
            suffix = self._consume_head(suffix)
            if not self._in_body:
                return
        self._consume_body(suffix)

    def _consume_head(self, suffix: str) -> str:
        """Grow the prefix; once whole, switch to the body and return what follows it."""
        head = self._head + suffix
        envelope = _envelope_failure(head) if head else None
        if envelope is not None:
            self._terminal = envelope  # no continuation changes steps 1-3
            return ""
        if len(head) < len(ASSISTANT_CONTENT_PREFIX):
            self._head = head
            return ""
        self._head = ""
        self._in_body = True
        self._bytes = len(ASSISTANT_CONTENT_PREFIX)
        return head[len(ASSISTANT_CONTENT_PREFIX) :]

    def _consume_body(self, suffix: str) -> None:
        self._bytes += utf8_length(suffix)
        if self._bytes > ASSISTANT_CONTENT_MAX_BYTES:  # step 4 on the total so far
            self._fail_terminal(LIMIT_EXCEEDED)
            return
        pieces = suffix.split("\n")
        self._records += len(pieces) - 1
        if self._records > ASSISTANT_CONTENT_MAX_RECORDS:  # step 5
            self._fail_terminal(RECORD_LIMIT_EXCEEDED)
            return
        if len(pieces) == 1:
            if suffix:
                self._tail.append(suffix)
            return
        self._tail.append(pieces[0])
        lines = ["".join(self._tail), *pieces[1:-1]]
        self._tail = [pieces[-1]] if pieces[-1] else []
        self._read_lines(lines)

    def _read_lines(self, lines: Iterable[str]) -> None:
        """Step 6 on newly completed lines; after one failure the rest is not parsed."""
        if self._invalid:
            return
        for line in lines:
            part = _part_from_line(line)
            if part is None:
                self._invalid = True
                self._parts.clear()
                return
            self._parts.append(part)

    def _fail_terminal(self, diagnostic: Diagnostic) -> None:
        self._terminal = diagnostic
        self._parts.clear()
        self._tail.clear()


# ---------------------------------------------------------------- encoder


def _normalise_part(part: Any) -> Any:
    """Models become their wire dicts (a frame model inside a part dict too)."""
    if isinstance(part, WireModel):
        return part.to_wire()
    if isinstance(part, dict) and isinstance(part.get("frame"), ComponentFrame):
        return {**part, "frame": part["frame"].to_wire()}
    return part


def encode_part_line(part: Any) -> str:
    """One validated record as its JSON line with the trailing newline (no prefix).

    Raises ProtocolError(ASSISTANT_CONTENT_INVALID_RECORD) on an invalid part.
    """
    if type(part) is dict and part.get("kind") == "text":
        fast = _text_part_wire(part)
        if fast is not None:
            return _TEXT_RECORD_HEAD + dump_json_string(fast["text"]) + "}\n"
    try:
        wire = _part_from_wire(_normalise_part(part))
    except Exception:  # a hostile part is an invalid part
        wire = None
    if wire is None:
        raise ProtocolError(RECORD_INVALID.code, RECORD_INVALID.message)
    return dump_json(wire) + "\n"


_TEXT_RECORD_HEAD: Final = '{"kind":"text","text":'
"""A text record as `dump_json` writes it, up to its string (the hot path builds it so)."""


class AssistantContentEncoder:
    """Writes one assistant turn's content, one validated record per call.

    The first successful call also writes the prefix. Every call either
    returns text that keeps the whole content within 512 records and
    262,144 UTF-8 bytes, or raises and changes nothing: a part that does not
    fit raises ProtocolError(ASSISTANT_CONTENT_LIMIT_EXCEEDED), an invalid
    part ProtocolError(ASSISTANT_CONTENT_INVALID_RECORD). A host (the Ask
    adapter) asks `would_exceed` or reads `remaining_bytes` /
    `remaining_records` before emitting, and may still emit a smaller part
    (a truncation notice) after a refusal.
    """

    def __init__(self) -> None:
        self._records = 0
        self._bytes = 0

    @property
    def records(self) -> int:
        """Records written so far."""
        return self._records

    @property
    def bytes(self) -> int:
        """UTF-8 bytes written so far, prefix included."""
        return self._bytes

    @property
    def remaining_records(self) -> int:
        return ASSISTANT_CONTENT_MAX_RECORDS - self._records

    @property
    def remaining_bytes(self) -> int:
        return ASSISTANT_CONTENT_MAX_BYTES - self._bytes

    def _with_prefix(self, lines: list[str]) -> str:
        body = "".join(lines)
        return body if self._records else ASSISTANT_CONTENT_PREFIX + body

    def _fits(self, chunk: str, records: int, size: int | None = None) -> bool:
        size = utf8_length(chunk) if size is None else size
        return records <= self.remaining_records and size <= self.remaining_bytes

    def would_exceed(self, part: Any) -> bool:
        """True when `part` would push the content past a limit; raises on an invalid part."""
        return not self._fits(self._with_prefix([encode_part_line(part)]), 1)

    def encode(self, part: Any) -> str:
        """Validate and serialise one part: its JSON line plus `\\n`, the prefix first time."""
        return self._commit([encode_part_line(part)])

    def encode_text(self, text: str) -> str:
        """Encode any amount of text as records of at most 16,384 chars, all or nothing.

        Empty text writes nothing. Raises ProtocolError when the text does not
        fit whole (nothing is written then).
        """
        if not isinstance(text, str):
            raise ProtocolError(RECORD_INVALID.code, RECORD_INVALID.message)
        lines = [
            encode_part_line({"kind": "text", "text": chunk})
            for chunk in split_text(text, ASSISTANT_CONTENT_TEXT_MAX_CHARS)
        ]
        return self._commit(lines) if lines else ""

    def _commit(self, lines: list[str]) -> str:
        chunk = self._with_prefix(lines)
        size = utf8_length(chunk)
        if not self._fits(chunk, len(lines), size):
            too_many = len(lines) > self.remaining_records
            refusal = RECORD_LIMIT_EXCEEDED if too_many else LIMIT_EXCEEDED
            raise ProtocolError(refusal.code, refusal.message)
        self._records += len(lines)
        self._bytes += size
        return chunk


def encode_assistant_content(parts: Iterable[Any]) -> str:
    """The whole content string for `parts` (a fresh encoder); raises ProtocolError."""
    encoder = AssistantContentEncoder()
    return "".join(encoder.encode(part) for part in parts)
