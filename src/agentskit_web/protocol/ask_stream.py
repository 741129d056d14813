"""Bounded Ask NDJSON decoding (PROTOCOL.md section 5, decoder bounds).

Two entry points share one line rule:

- `decode_ask_events(buffer)` is the stateless form of the reference
  decoder: complete lines of one buffer -> events, plus the unfinished
  `rest` to prepend next time and `discarded_partial` when that rest was
  over 1 MiB (the caller must then skip input through the next newline).
- `AskEventDecoder` does that bookkeeping itself for a byte or text stream.

The line rule: split only on `\\n` (never `splitlines()`: U+2028, U+0085 and
`\\x1e` inside JSON strings must not end a record); a line whose raw UTF-8
size without its `\\n` is over 1 MiB is skipped; otherwise it is trimmed with
JavaScript's `trim` (not `str.strip`, which would also strip `\\x1c`-`\\x1f`,
so a `\\x1e{...}` line stays invalid), an empty result is skipped, and the
rest is parsed strictly and validated. Invalid lines are inert.

Why the raw size, when the reference measures the trimmed line: the retained
partial is bounded by its raw size, so measuring complete lines the same way
is what makes the outcome independent of chunk boundaries (a padded or
CRLF-terminated line at the limit would otherwise be kept when it arrived
whole and dropped when it arrived in pieces).

Budget: at most 4,096 complete lines (every line counts, blank and invalid
included, as in the reference) are examined per `decode_ask_events` /
`feed` call; the rest of that call's complete lines are skipped. This is
the one bound that depends on chunking, by design: it caps the work of one
call. Streams of at most 4,096 lines decode identically however split.

Bytes: a chunk boundary inside a multi-byte UTF-8 character never yields
U+FFFD (an incremental decoder holds the incomplete sequence). Invalid bytes
become U+FFFD as `TextDecoder` does. A stream that ends inside a character
(`finish()` with an incomplete sequence held) gets one U+FFFD for it, which
lands in the final line; that line is then decoded like any other (almost
always invalid JSON, so inert). A `str` chunk fed while bytes of an
incomplete character are held ends that character the same way.

`finish()` decodes a final line that has no `\\n` (the reference adapter
appends one at end of stream), unless it is the tail of a discarded
oversized line.
"""

import codecs
from dataclasses import dataclass
from typing import Any, Final

from .ask_events import ask_event_wire_from_parsed
from .diagnostics import AskDecodeResult
from .limits import ASK_LINE_MAX_BYTES, ASK_MAX_RECORDS_PER_DECODE, ASK_PARTIAL_LINE_MAX_BYTES
from .text_metrics import js_trim, utf8_length
from .wire_json import JSON_INVALID, parse_json

_NEWLINE: Final = "\n"
_MAX_UTF8_BYTES: Final = 4


@dataclass(slots=True)
class AskStreamStats:
    """Counters of one stream, for diagnostics (never any payload).

    `lines`: complete lines examined; `events`: valid events returned;
    `invalid_lines`: non-blank lines that were not a valid event;
    `discarded_lines`: lines dropped for size (complete lines over 1 MiB and
    oversized partials); `skipped_records`: complete lines skipped because a
    call's 4,096-line budget was spent.
    """

    lines: int = 0
    events: int = 0
    invalid_lines: int = 0
    discarded_lines: int = 0
    skipped_records: int = 0

    def copy(self) -> "AskStreamStats":
        return AskStreamStats(
            self.lines, self.events, self.invalid_lines, self.discarded_lines, self.skipped_records
        )


def _decode_line(line: str, stats: AskStreamStats) -> dict[str, Any] | None:
    """One complete line (without its `\\n`) -> wire event or None."""
    # A code point is at most 4 UTF-8 bytes: a short line needs no encoding to measure.
    if len(line) * _MAX_UTF8_BYTES > ASK_LINE_MAX_BYTES and utf8_length(line) > ASK_LINE_MAX_BYTES:
        stats.discarded_lines += 1
        return None
    candidate = js_trim(line)
    if not candidate:
        return None
    parsed = parse_json(candidate)
    event = None if parsed is JSON_INVALID else ask_event_wire_from_parsed(parsed)
    if event is None:
        stats.invalid_lines += 1
    return event


def _decode_lines(lines: list[str], stats: AskStreamStats) -> list[dict[str, Any]]:
    """Decode at most the per-call budget of complete lines; count the rest as skipped."""
    budget = min(len(lines), ASK_MAX_RECORDS_PER_DECODE)
    stats.lines += budget
    stats.skipped_records += len(lines) - budget
    events: list[dict[str, Any]] = []
    for index in range(budget):
        event = _decode_line(lines[index], stats)
        if event is not None:
            events.append(event)
    stats.events += len(events)
    return events


def _as_text(buffer: Any) -> str | None:
    if isinstance(buffer, str):
        return buffer
    if isinstance(buffer, bytes | bytearray | memoryview):
        return bytes(buffer).decode("utf-8", "replace")
    return None


def decode_ask_events(buffer: str) -> AskDecodeResult:
    """Decode the complete lines of one buffer; keep the unfinished tail as `rest`.

    When the tail is over 1 MiB it is dropped (`rest == ""`,
    `discarded_partial=True`) and the caller must skip its input through the
    next newline. Never raises: anything that is not text or bytes decodes
    to no events.
    """
    try:
        text = _as_text(buffer)
        if text is None:
            return AskDecodeResult()
        parts = text.split(_NEWLINE)
        partial = parts.pop()
        events = _decode_lines(parts, AskStreamStats())
        if utf8_length(partial) > ASK_PARTIAL_LINE_MAX_BYTES:
            return AskDecodeResult(events=events, rest="", discarded_partial=True)
        return AskDecodeResult(events=events, rest=partial, discarded_partial=False)
    except Exception:  # a decoder never raises
        return AskDecodeResult()


class AskEventDecoder:
    """Incremental, bounded Ask NDJSON decoder for one response stream.

    `feed(chunk)` takes bytes or text and returns the events completed by
    it; `finish()` ends the stream and returns the events of a final
    unterminated line. Chunk boundaries never change the events (within the
    per-call line budget). Memory is bounded: the retained partial line is at
    most 1 MiB, and an oversized one is dropped together with the rest of
    its line. Cost is linear in the input: text is searched for `\\n` once,
    and partial pieces are joined only when their line completes.

    After `finish()` the decoder is ready for a new stream; `stats` keeps the
    last stream's counters until the next `feed`.
    """

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pieces: list[str] = []
        self._partial_bytes = 0
        self._discarding = False
        self._finished = False
        self._stats = AskStreamStats()

    @property
    def stats(self) -> AskStreamStats:
        """A copy of this (or the last finished) stream's counters."""
        return self._stats.copy()

    @property
    def discarded_lines(self) -> int:
        return self._stats.discarded_lines

    @property
    def skipped_records(self) -> int:
        return self._stats.skipped_records

    def feed(self, chunk: bytes | str) -> list[dict[str, Any]]:
        """Decode one chunk; returns the wire events whose lines it completed. Never raises."""
        try:
            if self._finished:
                self._finished = False
                self._stats = AskStreamStats()
            return self._consume(self._text(chunk))
        except Exception:  # a decoder never raises; drop the stream state
            self._reset_stream()
            return []

    def finish(self) -> list[dict[str, Any]]:
        """End the stream: flush held bytes and decode a final unterminated line. Never raises."""
        try:
            tail = self._utf8.decode(b"", final=True)
            return self._consume(tail + _NEWLINE) if (tail or self._pieces) else []
        except Exception:  # a decoder never raises
            return []
        finally:
            self._reset_stream()
            self._finished = True

    def _text(self, chunk: Any) -> str:
        if isinstance(chunk, bytes | bytearray | memoryview):
            return self._utf8.decode(bytes(chunk))
        if isinstance(chunk, str):
            held = self._utf8.getstate()[0]
            if not held:
                return chunk
            flushed = self._utf8.decode(b"", final=True)
            self._utf8.reset()
            return flushed + chunk
        return ""

    def _consume(self, text: str) -> list[dict[str, Any]]:
        if self._discarding:
            end = text.find(_NEWLINE)
            if end < 0:
                return []
            text = text[end + 1 :]
            self._discarding = False
        if text.find(_NEWLINE) < 0:
            self._keep_partial(text)
            return []
        parts = text.split(_NEWLINE)
        parts[0] = "".join(self._pieces) + parts[0]
        self._pieces = []
        self._partial_bytes = 0
        partial = parts.pop()
        events = _decode_lines(parts, self._stats)
        self._keep_partial(partial)
        return events

    def _keep_partial(self, text: str) -> None:
        """Retain an unfinished line piece, or drop the whole line once it passes 1 MiB."""
        if not text:
            return
        self._partial_bytes += utf8_length(text)
        if self._partial_bytes > ASK_PARTIAL_LINE_MAX_BYTES:
            self._pieces = []
            self._partial_bytes = 0
            self._discarding = True
            self._stats.discarded_lines += 1
            return
        self._pieces.append(text)

    def _reset_stream(self) -> None:
        self._utf8.reset()
        self._pieces = []
        self._partial_bytes = 0
        self._discarding = False
