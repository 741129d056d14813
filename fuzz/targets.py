"""The fuzz targets: one function per decoder, each taking the fuzzer's raw bytes.

A target fails (raises `FuzzFailure`, or anything else escapes) when the code
under test breaks its contract: a decoder raised, returned something other
than a result, produced a diagnostic that is not a fixed, short message, or
handed back more than its bounds allow. `validate_memory_record` is the one
API that raises by contract, and only `ProtocolError` with its fixed message.

Input shape: the first byte chooses how the rest reaches the decoder, so one
corpus exercises every input form the decoders accept (see `as_value`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from agentskit_web.chat.message import ChatMessage, message_parts
from agentskit_web.chat.view.markdown_tree import markdown_to_tree
from agentskit_web.chat.view.render_limits import (
    MESSAGE_MAX_CHARS,
    MESSAGE_MAX_NODES,
    SHORTENED_NOTE,
)
from agentskit_web.chat.view.render_plan import render_whole
from agentskit_web.chat.view.tree import element, images_of, is_safe_link, links_of, walk
from agentskit_web.protocol import (
    AskEventDecoder,
    ProtocolError,
    decode_assistant_content,
    decode_component_frame,
    decode_session_snapshot,
    decode_turn_event,
    parse_ask_request,
    parse_site_config,
    validate_memory_record,
)
from agentskit_web.protocol.limits import (
    ASK_LINE_MAX_BYTES,
    ASK_MAX_RECORDS_PER_DECODE,
    ASSISTANT_CONTENT_MAX_RECORDS,
)
from agentskit_web.protocol.memory_record import MEMORY_RECORD_ERROR_MESSAGE

# Forms a fuzz input takes (its first byte, modulo their number).
MODE_BYTES: Final = 0
MODE_TEXT: Final = 1
MODE_JSON: Final = 2
MODES: Final = 3
DIAGNOSTIC_MESSAGE_MAX_CHARS: Final = 200
DIAGNOSTIC_CODE: Final = re.compile(r"[A-Z][A-Z0-9_]{1,63}")


class FuzzFailure(AssertionError):
    """A contract broken on a fuzz input (libFuzzer saves the input that caused it)."""


def check(condition: bool, what: str) -> None:
    """Fail the input with `what` unless `condition` holds."""
    if not condition:
        raise FuzzFailure(what)


def as_value(data: bytes) -> Any:
    """The decoder input a fuzz input stands for: raw bytes, text, or a parsed JSON value.

    Text keeps undecodable bytes as lone surrogates (surrogateescape), which is
    exactly the kind of string a JavaScript host can hand over.
    """
    if not data:
        return b""
    mode, rest = data[0] % MODES, data[1:]
    if mode == MODE_BYTES:
        return rest
    text = rest.decode("utf-8", "surrogateescape")
    if mode == MODE_TEXT:
        return text
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def check_result(result: Any) -> None:
    """A decode result: `ok` is a bool; a failure carries a fixed, short, typed diagnostic."""
    check(isinstance(result.ok, bool), "ok is not a bool")
    if result.ok:
        return
    diagnostic = result.diagnostic
    check(diagnostic is not None, "failure without a diagnostic")
    check(bool(DIAGNOSTIC_CODE.fullmatch(diagnostic.code)), "diagnostic code is not a code")
    check(isinstance(diagnostic.message, str), "diagnostic message is not text")
    check(len(diagnostic.message) <= DIAGNOSTIC_MESSAGE_MAX_CHARS, "diagnostic message too long")
    check(isinstance(diagnostic.retryable, bool), "retryable is not a bool")


def turn_event(data: bytes) -> None:
    check_result(decode_turn_event(as_value(data)))


def assistant_content(data: bytes) -> None:
    result = decode_assistant_content(as_value(data))
    check_result(result)
    if result.ok:
        check(len(result.parts) <= ASSISTANT_CONTENT_MAX_RECORDS, "more parts than records")


def component_frame(data: bytes) -> None:
    check_result(decode_component_frame(as_value(data)))


def session_snapshot(data: bytes) -> None:
    check_result(decode_session_snapshot(as_value(data)))


def ask_request(data: bytes) -> None:
    check_result(parse_ask_request(as_value(data)))


def site_config(data: bytes) -> None:
    check_result(parse_site_config(as_value(data)))


def memory_record(data: bytes) -> None:
    try:
        accepted = validate_memory_record(as_value(data))
    except ProtocolError as error:
        check(error.message == MEMORY_RECORD_ERROR_MESSAGE, "memory error is not the fixed one")
        return
    check(type(accepted) is dict and accepted.get("version") == 1, "accepted a non-record")
    json.dumps(accepted)  # what is accepted is plain JSON


def ask_stream(data: bytes) -> None:
    """Feed the body in chunks whose sizes the input picks, then finish; check every event."""
    if not data:
        return
    size, body = data[0] + 1, data[1:]
    decoder = AskEventDecoder()
    events: list[dict[str, Any]] = []
    for start in range(0, len(body), size):
        fed = decoder.feed(body[start : start + size])
        check(len(fed) <= ASK_MAX_RECORDS_PER_DECODE, "more events than one decode may give")
        events.extend(fed)
    events.extend(decoder.finish())
    check(len(events) <= len(body) // 2 + 1, "more events than lines")
    for event in events:
        check(type(event) is dict and isinstance(event.get("type"), str), "event without a type")
        check(len(json.dumps(event).encode()) <= 2 * ASK_LINE_MAX_BYTES, "event beyond line bound")


def _check_tree(root: Any) -> None:
    for link in links_of(root):
        check(is_safe_link(link), "an unvetted href")
    for _event, item in walk(root):
        check(isinstance(item, str) or hasattr(item, "tag"), "a node that is neither")


NOTE_NODES: Final = 2  # the shortened note: a paragraph and its text
ADDED_CHARS_PER_NODE: Final = 32
"""Text the view adds of its own, per node: `<U+200B>` markers, "Copy", code warnings."""


def _check_bounds(root: Any, extra_nodes: int, extra_chars: int) -> None:
    """The display bounds of render_limits.py: nodes and characters shown under the root."""
    nodes = 0
    chars = 0
    for event, item in walk(root):
        if event != "close":
            nodes += 1
        if isinstance(item, str):
            chars += len(item)
    check(nodes - 1 <= MESSAGE_MAX_NODES + extra_nodes, "more nodes than the message bound")
    added = ADDED_CHARS_PER_NODE * nodes
    check(chars <= MESSAGE_MAX_CHARS + added + extra_chars, "more characters than the bound")


def markdown_view(data: bytes) -> None:
    """Markdown text to view nodes, and a stored content string through the whole render path."""
    text = data.decode("utf-8", "surrogateescape")
    tree = element("div", None, markdown_to_tree(text))
    _check_tree(tree)
    _check_bounds(tree, 0, 0)
    message = ChatMessage("m-1", "assistant", text, "complete", "2026-01-01T00:00:00.000Z")
    root = element("div", None, render_whole(message_parts(message)))
    _check_tree(root)
    _check_bounds(root, NOTE_NODES, len(SHORTENED_NOTE))
    check(all(isinstance(src, str) for src in images_of(root)), "an image without a source")


def _turn_submit(data: bytes) -> None:
    """A `POST /api/turn` body to the reference server (fuzz/turn_submit.py)."""
    from .turn_submit import turn_submit

    turn_submit(data)


@dataclass(frozen=True)
class Target:
    """One fuzz target: its entry point and the fixture subjects that seed it."""

    name: str
    run: Callable[[bytes], None]
    subjects: tuple[str, ...]


TARGETS: Final = {
    target.name: target
    for target in (
        Target("decode_turn_event", turn_event, ("decode_turn_event", "turn_snapshot_cursor")),
        Target("decode_assistant_content", assistant_content, ("decode_assistant_content",)),
        Target("decode_component_frame", component_frame, ("decode_component_frame",)),
        Target("decode_session_snapshot", session_snapshot, ("decode_session_snapshot",)),
        Target("ask_event_decoder", ask_stream, ("ask_event_decoder", "decode_ask_events")),
        Target("parse_ask_request", ask_request, ("parse_ask_request",)),
        Target("parse_site_config", site_config, ("parse_site_config",)),
        Target("validate_memory_record", memory_record, ("validate_memory_record",)),
        Target("markdown_view", markdown_view, ("render_message",)),
        Target("turn_submit", _turn_submit, ("decode_turn_event",)),
    )
}
