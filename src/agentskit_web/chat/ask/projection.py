"""Ask service events -> ordered assistant content parts, and chat messages -> Ask request messages.

PROTOCOL.md section 5. `project_ask_event` turns one validated Ask event into
what the assistant message shows: text (deltas and the `answer` tool), a
`source-list` component (the `cite` tool), a host-projected component (any
other tool, through `project_tool`), or a terminal `error`/`done`. Everything
that does not fit is inert (None), so one odd event never breaks a stream.

`project_ask_messages` is the reverse direction: what of the conversation is
sent back to the service as context.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from ...protocol.ask_events import ask_event_wire_or_none, plain_text_delta
from ...protocol.component import ComponentFrame, decode_component_frame
from ...protocol.content import decode_assistant_content
from ...protocol.identifiers import make_safe_id
from ...protocol.limits import (
    COMPONENT_FALLBACK_SUMMARY_MAX_CHARS,
    SOURCE_LIST_MAX_SOURCES,
    SOURCE_TITLE_MAX_CHARS,
)
from ...protocol.source_list import SOURCE_LIST_COMPONENT_KEY
from ...protocol.text_metrics import js_is_blank, js_slice, js_trim
from ..source_href import safe_source_href

ProjectTool = Callable[[dict[str, Any]], Any]
"""Host callback for tools other than `answer`/`cite`: a render frame (dict or model) or None."""

Projection = dict[str, Any]

SOURCES_LABEL: Final = "Sources"
SOURCES_FALLBACK_INSTANCE: Final = "sources"
ANSWER_TOOL: Final = "answer"
CITE_TOOL: Final = "cite"


def _source_entry(index: int, candidate: object) -> dict[str, Any] | None:
    """One `source-list` source for `args.sources[index]`, or None when it must be skipped."""
    if not isinstance(candidate, dict):
        return None
    title = candidate.get("title")
    path = candidate.get("path")
    if not isinstance(title, str) or js_is_blank(title) or not isinstance(path, str):
        return None
    anchor = candidate.get("anchor")
    url = safe_source_href(path, anchor if isinstance(anchor, str) else None)
    if url is None:
        return None
    return {
        "id": f"source-{index + 1}",
        "title": js_slice(title, SOURCE_TITLE_MAX_CHARS),
        "url": url,
    }


def source_list_frame(tool_id: str, args: Mapping[str, Any]) -> dict[str, Any] | None:
    """The `source-list` render frame for a `cite` tool's args, or None when no source is usable."""
    candidates = args.get("sources")
    if not isinstance(candidates, list):
        return None
    sources: list[dict[str, Any]] = []
    for index, candidate in enumerate(candidates):
        entry = _source_entry(index, candidate)
        if entry is not None:
            sources.append(entry)
            if len(sources) == SOURCE_LIST_MAX_SOURCES:
                break
    if not sources:
        return None
    titles = ", ".join(source["title"] for source in sources)
    frame = {
        "protocol": "agentskit.chat.component",
        "version": 1,
        "type": "render",
        "componentKey": SOURCE_LIST_COMPONENT_KEY,
        "instanceId": make_safe_id(tool_id, SOURCES_FALLBACK_INSTANCE),
        "props": {"label": SOURCES_LABEL, "sources": sources},
        "fallback": {
            "kind": SOURCE_LIST_COMPONENT_KEY,
            "summary": js_slice(
                f"{SOURCES_LABEL}: {titles}.", COMPONENT_FALLBACK_SUMMARY_MAX_CHARS
            ),
        },
    }
    return _validated_frame(frame)


def _validated_frame(candidate: object) -> dict[str, Any] | None:
    """The wire form of `candidate` if it is a valid render frame (dict or model), else None."""
    if not isinstance(candidate, dict | ComponentFrame):
        return None
    result = decode_component_frame(candidate)
    if not result.ok:
        return None
    wire: dict[str, Any] = result.frame.to_wire()
    return wire


def _host_tool(event: dict[str, Any], project_tool: ProjectTool | None) -> Projection | None:
    """A host-projected component: counts only if it validates; a raising callback is inert."""
    if project_tool is None:
        return None
    try:
        frame = _validated_frame(project_tool(event))
    except Exception:  # host presentation policy must never break the stream
        return None
    return None if frame is None else {"kind": "component", "frame": frame}


def _project_tool_event(
    event: dict[str, Any], project_tool: ProjectTool | None
) -> Projection | None:
    name = event["name"]
    args = event["args"]
    if name == ANSWER_TOOL and isinstance(args.get("markdown"), str):
        markdown = args["markdown"]
        return {"kind": "text", "text": markdown} if markdown else None
    if name == CITE_TOOL:
        frame = source_list_frame(event["id"], args)
        return None if frame is None else {"kind": "component", "frame": frame}
    return _host_tool(event, project_tool)


def project_valid_event(
    event: dict[str, Any], project_tool: ProjectTool | None = None
) -> Projection | None:
    """Project an Ask event the decoder already validated (the adapter's hot path)."""
    kind = event.get("type")
    if kind == "text":
        delta = event["delta"]
        return {"kind": "text", "text": delta} if delta else None
    if kind == "error":
        return {"kind": "error", "message": event["message"]}
    if kind == "done":
        return {"kind": "done"}
    if kind == "tool":
        return _project_tool_event(event, project_tool)
    return None


def _as_valid_event(event: object) -> dict[str, Any] | None:
    """The wire dict of a valid Ask event (dict, JSON text or model input), or None."""
    try:
        return ask_event_wire_or_none(event)
    except Exception:  # untrusted input is inert (the parser never raises; belt and braces)
        return None


def project_ask_event(event: object, project_tool: ProjectTool | None = None) -> Projection | None:
    """One Ask event -> `{"kind": "text"|"component"|"error"|"done", ...}` or None (inert).

    The event is validated first (an invalid one is inert), so any input is
    safe here; never raises.
    """
    try:
        delta = plain_text_delta(event)  # most events: checked and projected in one step
    except Exception:  # a hostile key object; inert
        return None
    if delta is not None:
        return {"kind": "text", "text": delta} if delta else None
    valid = _as_valid_event(event)
    if valid is None:
        return None
    try:
        return project_valid_event(valid, project_tool)
    except Exception:  # projection of a valid event is inert on surprise
        return None


def _flatten_assistant(content: str) -> str:
    """Ordered content -> its text parts and `[componentKey]` placeholders, joined and trimmed.

    Anything that is not valid ordered content (a plain legacy string) is sent as it is.
    """
    decoded = decode_assistant_content(content)
    if not decoded.ok:
        return content
    pieces = [
        part["text"] if part["kind"] == "text" else f"[{part['frame']['componentKey']}]"
        for part in decoded.parts
    ]
    return js_trim("\n".join(pieces))


def _message_fields(message: object) -> tuple[object, object]:
    if isinstance(message, Mapping):
        return message.get("role"), message.get("content")
    return getattr(message, "role", None), getattr(message, "content", None)


def project_ask_messages(messages: Sequence[object]) -> list[dict[str, str]]:
    """Chat messages -> Ask request messages: user and assistant only, blank ones dropped.

    Messages may be dicts or objects with `role` and `content`; anything else
    (system/tool roles, non-string content) is skipped. Never raises on odd items.
    """
    projected: list[dict[str, str]] = []
    for message in messages:
        try:
            role, content = _message_fields(message)
        except Exception:  # a hostile message object is skipped
            continue
        if role not in ("user", "assistant") or not isinstance(content, str):
            continue
        text = content if role == "user" else _flatten_assistant(content)
        if js_is_blank(text):
            continue
        projected.append({"role": str(role), "content": text})
    return projected


def _fixture_tool(name: object) -> ProjectTool | None:
    """Named host callbacks a JSON fixture can select (a fixture cannot carry code)."""

    def raising(_event: dict[str, Any]) -> Any:
        raise RuntimeError("host callback failed")

    def echo_frame(event: dict[str, Any]) -> Any:
        return event["args"].get("frame")

    tools: dict[object, ProjectTool] = {"raises": raising, "echoFrame": echo_frame}
    return tools.get(name)


def conformance_subject(data: Any) -> dict[str, Any]:
    """Fixture subject: input `{"event": ..., "projectTool"?: "raises"|"echoFrame"}`."""
    if isinstance(data, dict) and "event" in data:
        projection = project_ask_event(data["event"], _fixture_tool(data.get("projectTool")))
    else:
        projection = project_ask_event(data)
    return {"ok": True, "value": projection}
