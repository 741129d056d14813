"""Conformance subject `render_message`: what a hostile answer looks like once rendered.

fixtures/hostile_render.json drives both this subject (CPython and the
in-page runner) and the browser test that renders the same cases in the
real widget. A case input is one of:
- `{"events": [...]}`: Ask service events, streamed through the adapter's
  body reader (NDJSON), exactly as a live answer;
- `{"parts": [...]}`: ordered content parts as stored in memory;
- `{"content": "..."}`: a raw stored content string (plain or legacy frame).

The outcome lists every live link (`links`), every image that would load
(`images`) and the visible text (`text`) of the settled message, plus the
stream's error message (`error`, None when none).
"""

from typing import Any

from ...protocol.content import encode_assistant_content
from ...protocol.wire_json import dump_json
from ..ask.body import AskBodyReader
from ..message import ChatMessage, message_parts
from .render_plan import render_whole
from .tree import element, images_of, links_of, text_of


def _content_of_events(events: list[Any]) -> tuple[str, str | None]:
    reader = AskBodyReader("application/x-ndjson")
    data = "".join(dump_json(event) + "\n" for event in events).encode("utf-8")
    chunks = [*reader.feed(data), *reader.finish()]
    content = "".join(c.get("content", "") for c in chunks if c.get("type") == "text")
    errors = [c.get("content") for c in chunks if c.get("type") == "error"]
    return content, (errors[0] if errors else None)


def render_case(data: Any) -> dict[str, Any]:
    """Render one case input (see the module doc) and summarise it."""
    error: str | None = None
    if "events" in data:
        content, error = _content_of_events(list(data["events"]))
    elif "parts" in data:
        content = encode_assistant_content(data["parts"])
    else:
        content = str(data["content"])
    message = ChatMessage("m-1", "assistant", content, "complete", "2026-01-01T00:00:00.000Z")
    root = element("div", None, render_whole(message_parts(message)))
    return {
        "ok": True,
        "links": links_of(root),
        "images": images_of(root),
        "text": text_of(root),
        "error": error,
    }
