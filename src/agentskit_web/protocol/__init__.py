"""Pure AgentsKit wire contracts (PROTOCOL.md sections 1-8): no I/O, runs on CPython and Pyodide.

The names below are the stable public API (spec/API.md) that outside
conformance suites call; internal modules behind them may change.
"""

from .ask_events import AskDoneEvent, AskErrorEvent, AskTextEvent, AskToolEvent, parse_ask_event
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
    "parse_ask_event",
    "parse_ask_request",
    "parse_knowledge_artifact",
    "parse_site_config",
    "validate_memory_record",
]
