"""Sans-IO reader of one Ask response body: bytes in, ordered-content stream chunks out.

PROTOCOL.md section 5 ("Adapter"). The transport hands over body bytes in any
chunking; this reader decides NDJSON vs plain text, decodes events with the
protocol's `AskEventDecoder`, projects them, and encodes the result as ordered
assistant content (section 2) under the cumulative bounds, checked *before* a
chunk is emitted. It has no I/O and no clock, so the same object serves the
adapter, the CLI and the in-page benchmark.

Work per chunk is proportional to that chunk only (no rescans of what came
before), so a 512-record answer costs the same per chunk at its end as at its
start.

Chunks are `{"type": "text", "content": <encoded records>}`,
`{"type": "error", "content": <message>}` and `{"type": "done"}`; after an
error or done chunk the reader is finished and ignores further input.
"""

import codecs
from collections.abc import Iterable
from typing import Any, Final

from ...protocol.ask_stream import AskEventDecoder, decode_ask_events
from ...protocol.content import ASSISTANT_CONTENT_LIMIT_EXCEEDED, AssistantContentEncoder
from ...protocol.diagnostics import ProtocolError
from ...protocol.limits import (
    ASK_LINE_MAX_BYTES,
    ASSISTANT_CONTENT_TEXT_MAX_CHARS,
)
from ...protocol.text_metrics import js_trim, split_text
from ..once_source import StreamChunk
from .projection import ProjectTool, project_valid_event

RECORD_LIMIT_MESSAGE: Final = "Ask response exceeded the assistant content record limit."
BYTE_LIMIT_MESSAGE: Final = "Ask response exceeded the assistant content byte limit."

_MODE_UNKNOWN: Final = "unknown"
_MODE_NDJSON: Final = "ndjson"
_MODE_TEXT: Final = "text"


class ContentLimitExceeded(Exception):
    """The next record would break the 512-record / 262,144-byte bound of one message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BoundedContentEncoder:
    """An `AssistantContentEncoder` whose refusals carry the adapter's limit messages.

    The protocol encoder already refuses (and writes nothing for) a part that
    would break a bound; this names which bound: the record count is checked
    first, so a refusal after it is the byte bound.
    """

    def __init__(self) -> None:
        self._encoder = AssistantContentEncoder()

    def encode(self, part: dict[str, Any]) -> str:
        """Encode one part; raises ContentLimitExceeded (nothing emitted) past a bound.

        Raises ProtocolError for an invalid part.
        """
        if self._encoder.remaining_records <= 0:
            raise ContentLimitExceeded(RECORD_LIMIT_MESSAGE)
        try:
            encoded: str = self._encoder.encode(part)
        except ProtocolError as error:
            if error.code == ASSISTANT_CONTENT_LIMIT_EXCEEDED:
                raise ContentLimitExceeded(BYTE_LIMIT_MESSAGE) from None
            raise
        return encoded


class _Sniffer:
    """Holds the start of a body whose content type did not say NDJSON until the mode is known.

    Raw bytes are kept (to hand to the NDJSON decoder unchanged) next to their
    decoded text (to find the first non-space character and the first line).
    The text decoder strips a leading BOM and replaces invalid UTF-8, as the
    browser's `TextDecoder` does.
    """

    def __init__(self) -> None:
        self.raw: list[bytes] = []
        self.text: list[str] = []
        self.size = 0
        self.first_char = ""
        self.line_start = 0
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")("replace")

    def add(self, data: bytes) -> str:
        """Keep `data`; return its decoded text."""
        self.raw.append(data)
        self.size += len(data)
        piece: str = self.decoder.decode(data)
        self.text.append(piece)
        return piece

    def flush(self) -> str:
        """Decode what an unfinished UTF-8 sequence held back (at the end of the body)."""
        piece: str = self.decoder.decode(b"", True)
        self.text.append(piece)
        return piece

    def clear(self) -> None:
        """Forget what is held (the decoder keeps its state)."""
        self.raw.clear()
        self.text.clear()
        self.size = 0

    def mark_first_line(self) -> None:
        """Note where the line holding the first `{` starts (once, when it is found).

        Whitespace never contains the byte of `{` (UTF-8 continuation and BOM
        bytes are >= 0x80), so the first `{` byte is that character.
        """
        raw = self.joined_raw()
        self.raw = [raw]
        self.line_start = raw.rfind(b"\n", 0, raw.index(b"{")) + 1

    @property
    def first_line_size(self) -> int:
        """Bytes of the first line held so far (leading spaces included, as the decoder counts)."""
        return self.size - self.line_start

    def joined_raw(self) -> bytes:
        return b"".join(self.raw)

    def joined_text(self) -> str:
        return "".join(self.text)


class AskBodyReader:
    """Turns an Ask response body into ordered-content stream chunks (see module doc)."""

    def __init__(self, content_type: str = "", project_tool: ProjectTool | None = None) -> None:
        self._project_tool = project_tool
        self._encoder = BoundedContentEncoder()
        self._events = AskEventDecoder()
        self._mode = _MODE_NDJSON if "ndjson" in content_type.lower() else _MODE_UNKNOWN
        self._sniffer = _Sniffer()
        self._text_decoder: codecs.IncrementalDecoder | None = None
        self._discarding = False
        self._out: list[StreamChunk] = []
        self.finished = False

    def feed(self, data: bytes) -> list[StreamChunk]:
        """Chunks produced by the next piece of the body (the last one may be terminal)."""
        if self.finished or not data:
            return []
        return self._run(bytes(data), final=False)

    def finish(self) -> list[StreamChunk]:
        """The body ended: flush what is pending, then `done` (unless already terminal)."""
        if self.finished:
            return []
        return self._run(b"", final=True)

    def _run(self, data: bytes, final: bool) -> list[StreamChunk]:
        """Route `data`; chunks emitted before a bound is hit are kept, then the error ends it."""
        self._out = []
        try:
            self._route(data, final)
        except ContentLimitExceeded as exceeded:
            self._terminal({"type": "error", "content": exceeded.message})
        if final and not self.finished:
            self._terminal({"type": "done"})
        out, self._out = self._out, []
        return out

    def _terminal(self, chunk: StreamChunk) -> None:
        self.finished = True
        self._out.append(chunk)

    def _route(self, data: bytes, final: bool) -> None:
        if self._mode == _MODE_NDJSON:
            self._ndjson(data, final)
        elif self._mode == _MODE_TEXT:
            assert self._text_decoder is not None
            self._encode_text(self._text_decoder.decode(data, final))
        else:
            self._sniff(data, final)

    def _ndjson(self, data: bytes, final: bool) -> None:
        if data:
            self._project(self._events.feed(data))
        if final and not self.finished:
            self._project(self._events.finish())

    # -- sniffing (content type did not say NDJSON) ------------------------------------------

    def _sniff(self, data: bytes, final: bool) -> None:
        if self._discarding:
            newline = data.find(b"\n")
            if newline < 0:
                return
            self._discarding = False
            data = data[newline + 1 :]
        sniffer = self._sniffer
        piece = sniffer.add(data) if data else ""
        if final:
            piece += sniffer.flush()
        if not sniffer.first_char:
            stripped = js_trim(piece)
            if not stripped:
                if sniffer.size > ASK_LINE_MAX_BYTES:
                    sniffer.clear()  # only whitespace so far: never hold more than a line's worth
                return
            sniffer.first_char = stripped[0]
            if sniffer.first_char != "{":
                self._become_text()
                return
            sniffer.mark_first_line()
            piece = piece[piece.index("{") :]
        if "\n" in piece or final:
            self._decide_by_first_line(final)
        elif sniffer.first_line_size > ASK_LINE_MAX_BYTES:
            self._sniffer = _Sniffer()  # an oversized first line: drop it through its newline
            self._discarding = True

    def _decide_by_first_line(self, final: bool) -> None:
        """NDJSON only when the first line holds at least one valid Ask event.

        A first line over 1 MiB is dropped through its newline whatever the
        chunking (it may complete in the chunk that takes it past the bound),
        and what follows it is sniffed afresh.
        """
        sniffer = self._sniffer
        raw = sniffer.joined_raw()
        brace = raw.index(b"{")
        newline = raw.find(b"\n", brace)
        end = len(raw) if newline < 0 else newline
        if end - sniffer.line_start > ASK_LINE_MAX_BYTES:
            self._sniffer = _Sniffer()
            if newline >= 0:
                self._sniff(raw[newline + 1 :], final)
            return
        first_line = raw[brace:end].decode("utf-8", "replace") + "\n"
        if decode_ask_events(first_line).events:
            self._mode = _MODE_NDJSON
            self._sniffer = _Sniffer()
            self._ndjson(raw, final)
        else:
            self._become_text()

    def _become_text(self) -> None:
        """Plain text from here on: what was held is shown, safely encoded as text records."""
        self._mode = _MODE_TEXT
        self._text_decoder = self._sniffer.decoder
        text = self._sniffer.joined_text()
        self._sniffer = _Sniffer()
        self._encode_text(text)

    # -- projection and encoding -------------------------------------------------------------

    def _project(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            projection = project_valid_event(event, self._project_tool)
            if projection is None:
                continue
            kind = projection["kind"]
            if kind == "error":
                self._terminal({"type": "error", "content": projection["message"]})
                return
            if kind == "done":
                self._terminal({"type": "done"})
                return
            if kind == "text":
                self._encode_text(projection["text"])
            else:
                self._encode_part({"kind": "component", "frame": projection["frame"]})

    def _encode_text(self, text: str) -> None:
        for piece in split_text(text, ASSISTANT_CONTENT_TEXT_MAX_CHARS) if text else ():
            self._encode_part({"kind": "text", "text": piece})

    def _encode_part(self, part: dict[str, Any]) -> None:
        try:
            encoded = self._encoder.encode(part)
        except ProtocolError:
            return  # a part the encoder refuses (cannot happen for projected parts) is inert
        self._out.append({"type": "text", "content": encoded})


def read_body(
    chunks: Iterable[bytes], content_type: str = "", project_tool: ProjectTool | None = None
) -> list[StreamChunk]:
    """Whole-body convenience (tests, fixtures, benchmarks): every chunk a body produces."""
    reader = AskBodyReader(content_type, project_tool)
    out: list[StreamChunk] = []
    for data in chunks:
        out.extend(reader.feed(data))
        if reader.finished:
            return out
    return out + reader.finish()
