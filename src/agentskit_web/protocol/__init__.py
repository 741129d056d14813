"""Pure AgentsKit wire contracts (PROTOCOL.md sections 1-8): no I/O, runs on CPython and Pyodide.

The names below are the stable public API (spec/API.md) that outside
conformance suites call; internal modules behind them may change.

Exports resolve lazily (PEP 562): importing the package costs nothing until a
name is used, so the page boots without building models it does not need yet
(in Pyodide every imported module and pydantic model is paid for at boot).
"""

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .ask_events import (
        AskDoneEvent,
        AskErrorEvent,
        AskTextEvent,
        AskToolEvent,
        ask_event_wire_or_none,
    )
    from .ask_request import (
        AnswerEscalation,
        AskRequest,
        normalize_knowledge_key,
        parse_answer_envelope,
        parse_ask_request,
    )
    from .ask_stream import AskEventDecoder, decode_ask_events
    from .component import (
        ComponentFrame,
        ComponentInteraction,
        ComponentSelection,
        decode_component_frame,
        is_bounded_json,
    )
    from .content import ASSISTANT_CONTENT_PREFIX, AssistantContentEncoder, decode_assistant_content
    from .diagnostics import AskDecodeResult, ContentResult, DecodeResult, Diagnostic, ProtocolError
    from .knowledge import KnowledgeArtifact, parse_knowledge_artifact
    from .memory_record import validate_memory_record
    from .session import SessionSnapshot, decode_session_snapshot
    from .site_config import SiteConfig, parse_site_config
    from .turn import (
        TurnSnapshotCursor,
        create_snapshot_event,
        decode_turn_event,
        encode_turn_event,
    )

_EXPORTS: dict[str, str] = {
    "AnswerEscalation": "ask_request",
    "AskDecodeResult": "diagnostics",
    "AskDoneEvent": "ask_events",
    "AskErrorEvent": "ask_events",
    "AskEventDecoder": "ask_stream",
    "AskRequest": "ask_request",
    "AskTextEvent": "ask_events",
    "AskToolEvent": "ask_events",
    "ASSISTANT_CONTENT_PREFIX": "content",
    "AssistantContentEncoder": "content",
    "ComponentFrame": "component",
    "ComponentInteraction": "component",
    "ComponentSelection": "component",
    "ContentResult": "diagnostics",
    "create_snapshot_event": "turn",
    "decode_ask_events": "ask_stream",
    "decode_assistant_content": "content",
    "decode_component_frame": "component",
    "decode_session_snapshot": "session",
    "decode_turn_event": "turn",
    "DecodeResult": "diagnostics",
    "Diagnostic": "diagnostics",
    "encode_turn_event": "turn",
    "is_bounded_json": "component",
    "KnowledgeArtifact": "knowledge",
    "normalize_knowledge_key": "ask_request",
    "parse_answer_envelope": "ask_request",
    "ask_event_wire_or_none": "ask_events",
    "parse_ask_request": "ask_request",
    "parse_knowledge_artifact": "knowledge",
    "parse_site_config": "site_config",
    "ProtocolError": "diagnostics",
    "SessionSnapshot": "session",
    "SiteConfig": "site_config",
    "TurnSnapshotCursor": "turn",
    "validate_memory_record": "memory_record",
}

__all__ = [
    "ASSISTANT_CONTENT_PREFIX",
    "AnswerEscalation",
    "AskDecodeResult",
    "AskDoneEvent",
    "AskErrorEvent",
    "AskEventDecoder",
    "AskRequest",
    "AskTextEvent",
    "AskToolEvent",
    "AssistantContentEncoder",
    "ComponentFrame",
    "ComponentInteraction",
    "ComponentSelection",
    "ContentResult",
    "DecodeResult",
    "Diagnostic",
    "KnowledgeArtifact",
    "ProtocolError",
    "SessionSnapshot",
    "SiteConfig",
    "TurnSnapshotCursor",
    "ask_event_wire_or_none",
    "create_snapshot_event",
    "decode_ask_events",
    "decode_assistant_content",
    "decode_component_frame",
    "decode_session_snapshot",
    "decode_turn_event",
    "encode_turn_event",
    "is_bounded_json",
    "normalize_knowledge_key",
    "parse_answer_envelope",
    "parse_ask_request",
    "parse_knowledge_artifact",
    "parse_site_config",
    "validate_memory_record",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
