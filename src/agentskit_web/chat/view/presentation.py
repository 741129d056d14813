"""How one chat message is presented: ordered items of text, components and diagnostics.

Every renderer (DOM widget, tests, text exports) presents a message the same
way. An assistant message whose content is ordered content (PROTOCOL.md 2)
becomes its parts in order, adjacent text merged into one message item; a
legacy assistant message whose whole content is one component frame becomes
that component; anything else is one plain message item. Invalid ordered
content or an invalid legacy frame becomes one diagnostic item (fixed code and
message, never the payload), so a renderer always has something to show.
"""

from collections.abc import Mapping
from typing import Any, Final, TypeGuard

from ...protocol.component import COMPONENT_PROTOCOL, decode_component_frame
from ...protocol.content import decode_assistant_content, is_assistant_content_candidate
from ...protocol.diagnostics import Diagnostic
from ...protocol.wire_json import JSON_INVALID, parse_json
from ..components.catalog import resolve_component_frame

_JSON_WHITESPACE: Final = " \t\n\r"
GENERIC_FALLBACK: Final = "[unsupported visual: component] Component could not be displayed."
"""Shown for a frame so broken that it has no fallback of its own (ours, not the spec's)."""


def semantic_fallback(frame: Any) -> str:
    """`[unsupported visual: <kind>] <summary>` from the frame's own fallback; never raises.

    `frame` may be a ComponentFrame, its wire dict, or frame text. A value
    that is not a valid frame yields GENERIC_FALLBACK.
    """
    decoded = decode_component_frame(frame)
    if not decoded.ok:
        return GENERIC_FALLBACK
    fallback = decoded.frame.fallback
    return f"[unsupported visual: {fallback.kind}] {fallback.summary}"


def component_fallback_text(frame: Any, manifest: Any = None) -> str:
    """Plain text for a component: its definition's fallback when it resolves, else semantic.

    Use where nothing visual can be shown (copying an answer, text exports,
    screen-reader summaries). Never raises.
    """
    resolved = resolve_component_frame(frame, manifest)
    try:
        text = resolved.fallback_text()
    except Exception:  # an application fallback must not break rendering
        text = None
    return text if isinstance(text, str) and text else semantic_fallback(frame)


def _diagnostic_item(diagnostic: Diagnostic | None) -> dict[str, Any]:
    assert diagnostic is not None
    return {"kind": "diagnostic", "code": diagnostic.code, "message": diagnostic.message}


def is_ordered_content(content: object) -> TypeGuard[str]:
    """The spec's candidate check: a string starting with U+001E."""
    return isinstance(content, str) and is_assistant_content_candidate(content)


def is_component_frame_candidate(content: object) -> bool:
    """True when `content` (text or dict) is an object naming the component protocol.

    Text that does not start with `{` (after JSON whitespace) is rejected
    without parsing, so ordinary prose costs nothing.
    """
    candidate = content
    if isinstance(content, str):
        if not content.lstrip(_JSON_WHITESPACE).startswith("{"):
            return False
        candidate = parse_json(content)
        if candidate is JSON_INVALID:
            return False
    return isinstance(candidate, dict) and candidate.get("protocol") == COMPONENT_PROTOCOL


def _present_ordered(message: Mapping[str, Any], content: str) -> list[dict[str, Any]]:
    decoded = decode_assistant_content(content)
    if not decoded.ok:
        return [_diagnostic_item(decoded.diagnostic)]
    items: list[dict[str, Any]] = []
    for part in decoded.parts:
        if part["kind"] == "component":
            items.append({"kind": "component", "frame": part["frame"]})
            continue
        previous = items[-1] if items else None
        if previous is not None and previous["kind"] == "message":
            merged = previous["message"]["content"] + part["text"]
            previous["message"] = {**previous["message"], "content": merged}
        else:
            items.append({"kind": "message", "message": {**message, "content": part["text"]}})
    return items


def _present_frame(content: Any) -> list[dict[str, Any]]:
    decoded = decode_component_frame(content)
    if not decoded.ok:
        return [_diagnostic_item(decoded.diagnostic)]
    return [{"kind": "component", "frame": decoded.frame.to_wire()}]


def present_chat_message(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Ordered presentation items for one message dict; never raises.

    Items: `{"kind": "message", "message": <message dict with text content>}`,
    `{"kind": "component", "frame": <frame wire dict>}` and
    `{"kind": "diagnostic", "code", "message"}`. Only assistant messages are
    decoded; user and system content is always plain text. A value that is
    not a mapping presents as nothing.
    """
    if not isinstance(message, Mapping):
        return []
    try:
        content = message.get("content")
        if message.get("role") == "assistant":
            if is_ordered_content(content):
                return _present_ordered(message, content)
            if is_component_frame_candidate(content):
                return _present_frame(content)
        return [{"kind": "message", "message": dict(message)}]
    except Exception:  # a hostile mapping must not crash a renderer
        return []
