"""The conversation's glance: a small plain-text copy the loader paints without Python.

A returning reader's page must cost what a first visit costs until they reach for the
box (no runtime request, no long task), yet their conversation should be there at once.
So, beside the conversation itself, the widget keeps under `<storage-key>:glance` the
last few questions and the beginning of each answer as plain text, in a bounded JSON
value the loader (web/agentskit-ask.js, `readGlance`) validates and paints with
`textContent` only. It is a view, never a source: the full conversation is still read
from the memory key by Python when the reader shows intent, and a glance that is
missing, corrupt or too long is ignored by the loader (the page just shows no glance).

Shape (version 1): `{"v": 1, "turns": [{"q": "...", "a": "..."}, ...]}` with at most
GLANCE_TURNS turns (the latest), each question at most GLANCE_QUESTION_MAX_CHARS and
each answer at most GLANCE_ANSWER_MAX_CHARS UTF-16 units (what JavaScript's `length`
counts), whitespace collapsed and control characters dropped, so the JSON text is
always within GLANCE_MAX_CHARS, the bound the loader enforces on read.
"""

import json
import re
from collections.abc import Sequence
from typing import Final

from ...answering.answer_shape import MORE_FROM_THE_DOCS, QUOTES_NOTE
from ...protocol.text_metrics import js_length, js_slice
from ..message import ChatMessage, message_parts

GLANCE_VERSION: Final = 1
GLANCE_SUFFIX: Final = ":glance"
GLANCE_TURNS: Final = 3
GLANCE_QUESTION_MAX_CHARS: Final = 300
GLANCE_ANSWER_MAX_CHARS: Final = 600
GLANCE_MAX_CHARS: Final = 8_192
"""The longest stored glance (UTF-16 units) the loader accepts; the same number is
GLANCE_MAX_CHARS in web/agentskit-ask.js. Escaping at most doubles a character, so
3 x (300 + 600) x 2 plus the keys stays below it."""
ELLIPSIS: Final = "…"

_FENCE: Final = re.compile(r"^\s*(```|~~~).*$", re.MULTILINE)
_LINE_MARKS: Final = re.compile(r"^\s{0,3}(?:#{1,6}\s+|>\s?|[-*+]\s+|\d{1,9}[.)]\s+)", re.MULTILINE)
"""Heading, block quote and list marks at the start of a line."""
_LINK: Final = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS: Final = re.compile(r"\*\*|__|`+|(?<![\w*])[*_](?=\S)|(?<=\S)[*_](?![\w*])")
"""Strong, code and emphasis marks (a `*` or `_` inside a word, as in snake_case, stays)."""
_CONTROL_OR_SPACE: Final = re.compile(r"[\s\x00-\x1f\x7f-\x9f]+")
_CITATION: Final = re.compile(r"(?:[ \t]*\[\d{1,3}\])+(?!\()")
"""An answer's source markers (`[1]`, `[2][3]`): the glance shows no sources to point at. A link
(`[1](...)`) is read by _LINK first; a question keeps its brackets (`x[1]`)."""
_MORE: Final = re.compile(r"^\*\*" + re.escape(MORE_FROM_THE_DOCS) + r"\*\*$", re.MULTILINE)
"""The label the other passages follow: the answer's opening ends there."""


def glance_key(storage_key: str) -> str:
    """Where the glance of the conversation kept under `storage_key` is stored."""
    return storage_key + GLANCE_SUFFIX


def _plain(text: str) -> str:
    """Markdown read as a line of plain text: fences, heading, quote and list marks,
    emphasis and link targets dropped, every run of whitespace or control characters one space."""
    text = _FENCE.sub(" ", text)
    text = _LINE_MARKS.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _EMPHASIS.sub("", text)
    return _CONTROL_OR_SPACE.sub(" ", text).strip()


def _bounded(text: str, limit: int) -> str:
    if js_length(text) <= limit:
        return text
    return js_slice(text, limit - js_length(ELLIPSIS)).rstrip() + ELLIPSIS


def _answer_text(message: ChatMessage) -> str:
    if message.notice is not None:
        return message.notice
    texts = [str(part["text"]) for part in message_parts(message) if part["kind"] == "text"]
    text = " ".join(texts)
    text = text[: more.start()] if (more := _MORE.search(text)) else text
    # The note says whose words the listed sources hold; the glance lists none.
    text = text.replace(QUOTES_NOTE, "")
    return _CITATION.sub("", _LINK.sub(r"\1", text))


def conversation_glance(messages: Sequence[ChatMessage]) -> str | None:
    """The glance of `messages` as the JSON text to store, or None when there is no
    question to show (an empty conversation: the key is then removed)."""
    turns: list[dict[str, str]] = []
    for index, message in enumerate(messages):
        if message.role != "user":
            continue
        question = _bounded(_plain(message.content), GLANCE_QUESTION_MAX_CHARS)
        if not question:
            continue
        following = messages[index + 1] if index + 1 < len(messages) else None
        answer = ""
        if following is not None and following.role == "assistant":
            answer = _bounded(_plain(_answer_text(following)), GLANCE_ANSWER_MAX_CHARS)
        turns.append({"q": question, "a": answer})
    if not turns:
        return None
    text = json.dumps(
        {"v": GLANCE_VERSION, "turns": turns[-GLANCE_TURNS:]},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    assert js_length(text) <= GLANCE_MAX_CHARS  # by construction (see GLANCE_MAX_CHARS)
    return text
