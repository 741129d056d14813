"""One message of the widget's conversation, and how it goes to and from memory.

The controller owns mutable `ChatMessage`s (an assistant message grows while
it streams); memory stores their wire form (PROTOCOL.md 7). Widget-only
facts - the error shown in place, a stopped answer, the reader's feedback -
travel in the record's `metadata` under one `agentskit` key, so they survive a
reload and other implementations simply ignore them.

`message_parts` is the render-side view of any content, old or new: ordered
content decodes to its parts; a plain string is one text part; a legacy
whole-message component frame is one component part; invalid ordered content
is one diagnostic part. It reuses `present_chat_message`, so every renderer
agrees on what a message shows.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ..protocol.limits import ASK_ERROR_MESSAGE_MAX_CHARS
from ..protocol.text_metrics import js_slice, js_trim
from .components.catalog import resolve_component_frame
from .view.presentation import component_fallback_text, present_chat_message

Role = Literal["user", "assistant"]
Status = Literal["pending", "streaming", "complete", "error"]
Feedback = Literal["up", "down"]
InPage = Literal["static", "fallback"]
"""An answer made in the page from the site's static index (chat/static_answers.py)."""

METADATA_KEY: Final = "agentskit"


@dataclass
class ChatMessage:
    """A user question or an assistant answer as the widget holds it.

    `content` is the wire content (ordered content for answers streamed in
    this page). `error` is shown in place below what streamed; `stopped`
    marks an answer the reader stopped; `local` an answer from the page's
    knowledge artifact; `feedback` the reader's thumbs up/down. `notice` is a
    server's plain-text reply that is an answer, not a failure ("not found in
    the docs"); `retry` says whether Retry can help an error, and
    `retry_after` how many seconds to wait first (not stored: it is a
    moment's fact). `in_page` marks an answer made in the page from the site's
    static index: `static` (no backend) or `fallback` (the backend could not be
    reached).
    """

    id: str
    role: Role
    content: str
    status: Status
    created_at: str
    error: str | None = None
    stopped: bool = False
    local: bool = False
    feedback: Feedback | None = None
    extra_metadata: dict[str, Any] = field(default_factory=dict)
    notice: str | None = None
    retry: bool = True
    retry_after: int | None = None
    in_page: InPage | None = None

    def to_memory(self) -> dict[str, Any]:
        """The wire message for memory (PROTOCOL.md 7)."""
        wire: dict[str, Any] = {
            "id": self.id,
            "role": self.role,
            "content": self.content,
            "status": self.status,
            "createdAt": self.created_at,
        }
        ours: dict[str, Any] = {}
        if self.error is not None:
            ours["error"] = self.error
        if self.stopped:
            ours["stopped"] = True
        if self.local:
            ours["local"] = True
        if self.feedback is not None:
            ours["feedback"] = self.feedback
        if self.notice is not None:
            ours["notice"] = self.notice
        if not self.retry:
            ours["noRetry"] = True
        if self.in_page is not None:
            ours["inPage"] = self.in_page
        metadata = dict(self.extra_metadata)
        if ours:
            metadata[METADATA_KEY] = ours
        else:
            metadata.pop(METADATA_KEY, None)
        if metadata:
            wire["metadata"] = metadata
        return wire

    @classmethod
    def from_memory(cls, wire: Mapping[str, Any]) -> "ChatMessage | None":
        """A message from a validated memory record entry; None for roles the widget skips."""
        role = wire.get("role")
        content = wire.get("content")
        if role not in ("user", "assistant") or not isinstance(content, str):
            return None
        metadata = wire.get("metadata")
        metadata = dict(metadata) if isinstance(metadata, Mapping) else {}
        ours = metadata.pop(METADATA_KEY, None)
        ours = ours if isinstance(ours, Mapping) else {}
        # Nothing streams after a reload: an unfinished message is shown as it is.
        status: Status = "error" if wire.get("status") == "error" else "complete"
        error = ours.get("error")
        feedback = ours.get("feedback")
        notice = ours.get("notice")
        in_page = ours.get("inPage")
        return cls(
            id=str(wire.get("id")),
            role=role,
            content=content,
            status=status,
            created_at=str(wire.get("createdAt")),
            error=js_slice(error, ASK_ERROR_MESSAGE_MAX_CHARS)
            if isinstance(error, str) and error
            else None,
            stopped=ours.get("stopped") is True,
            local=ours.get("local") is True,
            feedback=feedback if feedback in ("up", "down") else None,
            extra_metadata=metadata,
            notice=js_slice(notice, ASK_ERROR_MESSAGE_MAX_CHARS)
            if isinstance(notice, str) and notice
            else None,
            retry=ours.get("noRetry") is not True,
            in_page=in_page if in_page in ("static", "fallback") else None,
        )


def message_parts(message: ChatMessage) -> list[dict[str, Any]]:
    """Render parts of a whole message: `text`, `component` (frame) and `diagnostic` dicts.

    Adjacent text is merged (one part per run). Never raises.
    """
    parts: list[dict[str, Any]] = []
    for item in present_chat_message({"role": message.role, "content": message.content}):
        kind = item.get("kind")
        if kind == "message":
            text = item["message"].get("content")
            if isinstance(text, str) and text:
                parts.append({"kind": "text", "text": text})
        elif kind == "component":
            parts.append({"kind": "component", "frame": item["frame"]})
        elif kind == "diagnostic":
            parts.append({"kind": "diagnostic", "code": item["code"], "message": item["message"]})
    return parts


def part_plain_text(part: Mapping[str, Any], manifest: Any = None) -> str:
    """Plain text of one part: its text, a component's fallback text, a diagnostic's message."""
    kind = part.get("kind")
    if kind == "text":
        return str(part.get("text", ""))
    if kind == "component":
        resolved = resolve_component_frame(part.get("frame"), manifest)
        if resolved.ok and resolved.frame.component_key == "source-list":
            props = resolved.props
            lines = [f"{props.label}:"]
            lines += [
                f"- {source.title}" + (f" <{source.url}>" if source.url else "")
                for source in props.sources
            ]
            return "\n".join(lines)
        return component_fallback_text(part.get("frame"), manifest)
    return str(part.get("message", ""))


def message_plain_text(message: ChatMessage, manifest: Any = None) -> str:
    """What "copy answer" puts on the clipboard: markdown text and component summaries."""
    pieces = [part_plain_text(part, manifest) for part in message_parts(message)]
    return js_trim("\n\n".join(piece for piece in pieces if piece))
