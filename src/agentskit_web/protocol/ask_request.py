"""Ask backend request `agentskit.chat.ask` v1 and the answer envelope it may carry.

PROTOCOL.md section 6. The request is strict at every level: an unknown
field (`siteId`, `corpus`, a tenant, ...) makes it invalid, because a
request must never smuggle trusted authority the server resolves from its
authenticated context. Its only structured context is a low-confidence
deterministic *escalation* (`agentskit.chat.answer` v1, outcome
`escalation`): the reason local answering (section 8) gave up.

The answer envelope has three outcomes (the reference schema): `answer`
(a local exact match or a backend answer), `choices` (several exact local
matches) and `escalation`. Its objects drop unknown additive fields, as the
reference's non-strict schemas do, even inside a strict request.

`normalize_knowledge_key` is the one equality rule for questions: NFKC,
JavaScript trim, every run of JavaScript whitespace -> one space, lower-case.
"""

import re
import unicodedata
from collections.abc import Callable
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, Field, ValidationError, model_validator

from .diagnostics import DecodeResult, Diagnostic
from .identifiers import SafeId, js_chars
from .json_structure import StructureLimits, check_structure
from .limits import (
    ANSWER_ENVELOPE_MAX_BYTES,
    ANSWER_LABEL_MAX_CHARS,
    ANSWER_MARKDOWN_MAX_CHARS,
    ANSWER_MAX_SUGGESTIONS,
    ANSWER_PROVENANCE_NAME_MAX_CHARS,
    ASK_REQUEST_MAX_BODY_BYTES,
    ASK_REQUEST_MAX_MESSAGES,
    ASK_REQUEST_MESSAGE_MAX_CHARS,
    ESCALATION_MAX_CANDIDATES,
    ESCALATION_MESSAGE_MAX_CHARS,
    ESCALATION_QUERY_MAX_CHARS,
    JSON_MAX_NESTING,
    KNOWLEDGE_MATCH_VALUE_MAX_CHARS,
    KNOWLEDGE_MAX_CITATIONS,
)
from .source_list import PortableUrl
from .text_metrics import js_slice, utf8_length
from .wire_fields import JS_TRIM, NOT_NULL, exact_number
from .wire_json import JSON_INVALID, dump_json, parse_json
from .wire_model import StrictWireModel, WireModel

ASK_PROTOCOL: Final = "agentskit.chat.ask"
ASK_PROTOCOL_VERSION: Final = 1
ANSWER_PROTOCOL: Final = "agentskit.chat.answer"
ANSWER_PROTOCOL_VERSION: Final = 1

ASK_INVALID_REQUEST: Final = "ASK_INVALID_REQUEST"
DETERMINISTIC_INVALID_PAYLOAD: Final = "DETERMINISTIC_INVALID_PAYLOAD"
DETERMINISTIC_UNSUPPORTED_VERSION: Final = "DETERMINISTIC_UNSUPPORTED_VERSION"
DETERMINISTIC_LIMIT_EXCEEDED: Final = "DETERMINISTIC_LIMIT_EXCEEDED"

_REQUEST_TOO_LARGE: Final = Diagnostic(ASK_INVALID_REQUEST, "Request body is too large.")
_REQUEST_NOT_JSON: Final = Diagnostic(ASK_INVALID_REQUEST, "Request body is not valid JSON.")
_REQUEST_INVALID: Final = Diagnostic(ASK_INVALID_REQUEST, "The Ask request payload is invalid.")
DETERMINISTIC_NOT_JSON: Final = Diagnostic(
    DETERMINISTIC_INVALID_PAYLOAD, "Deterministic payload is not valid JSON."
)
DETERMINISTIC_INVALID: Final = Diagnostic(
    DETERMINISTIC_INVALID_PAYLOAD, "Deterministic payload is invalid."
)
DETERMINISTIC_VERSION: Final = Diagnostic(
    DETERMINISTIC_UNSUPPORTED_VERSION, "Deterministic payload uses an unsupported version."
)
DETERMINISTIC_TOO_LARGE: Final = Diagnostic(
    DETERMINISTIC_LIMIT_EXCEEDED, "Deterministic payload exceeds its safety limit."
)

VALIDATION_ERRORS: Final = (ValidationError, ValueError, TypeError, RecursionError)

# ---------------------------------------------------------------------------
# Knowledge keys

# ECMAScript `\s` (WhiteSpace + LineTerminator). Python's `\s` differs: it also
# matches U+001C..U+001F and U+0085 and misses U+FEFF.
_JS_WHITESPACE_RUN: Final = re.compile(
    "[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+"
)


def normalize_knowledge_key(value: str) -> str:
    """The canonical question key: NFKC, JS trim, whitespace runs -> " ", lower-case.

    Same order as the reference (`normalize('NFKC').trim().replace(/\\s+/gu,
    ' ').toLocaleLowerCase('en-US')`); the trim is the JavaScript one, so
    `\\x1c`-`\\x1f` and U+0085 are kept and U+FEFF is stripped.
    """
    if not isinstance(value, str):
        raise TypeError("a knowledge key is a string")
    composed = unicodedata.normalize("NFKC", value)
    collapsed = _JS_WHITESPACE_RUN.sub(" ", composed).strip(" ")
    return collapsed.lower()


# ---------------------------------------------------------------------------
# Answer envelope `agentskit.chat.answer` v1

CONTENT_HASH_PATTERN: Final = re.compile(r"sha256:[a-f0-9]{64}")


def _content_hash(value: str) -> str:
    if CONTENT_HASH_PATTERN.fullmatch(value) is None:
        raise ValueError("not a sha256 content hash")
    return value


ContentHash = Annotated[str, AfterValidator(_content_hash)]
"""`sha256:` followed by 64 lower-case hex digits."""

Label = Annotated[str, JS_TRIM, js_chars(1, ANSWER_LABEL_MAX_CHARS)]
QueryText = Annotated[str, js_chars(0, ESCALATION_QUERY_MAX_CHARS)]
EnvelopeMessage = Annotated[str, js_chars(1, ESCALATION_MESSAGE_MAX_CHARS)]
ProvenanceName = Annotated[str, JS_TRIM, js_chars(1, ANSWER_PROVENANCE_NAME_MAX_CHARS)]
EscalationReason = Literal["miss", "stale", "corrupt", "offline"]


class AnswerConfidence(WireModel):
    """How sure the answer is and why; each outcome allows exactly one combination."""

    level: Literal["high", "medium", "low"]
    basis: Literal["exact", "ambiguous", "miss", "stale", "corrupt", "offline", "backend"]


class AnswerCitation(WireModel):
    """A cited page: its href is a PortableUrl (root-relative or credential-free http(s))."""

    id: SafeId
    title: Label
    href: PortableUrl


class AnswerBody(WireModel):
    """Markdown (rendered safely later) plus at most 8 citations."""

    markdown: Annotated[str, js_chars(1, ANSWER_MARKDOWN_MAX_CHARS)]
    citations: Annotated[list[AnswerCitation], Field(max_length=KNOWLEDGE_MAX_CITATIONS)]


class LocalProvenance(WireModel):
    """The answer came from a verified local knowledge artifact."""

    source: Literal["local"]
    artifact_id: SafeId = Field(alias="artifactId")
    content_hash: ContentHash = Field(alias="contentHash")
    entry_ids: Annotated[list[SafeId], Field(min_length=1, max_length=ANSWER_MAX_SUGGESTIONS)] = (
        Field(alias="entryIds")
    )


class BackendProvenance(WireModel):
    """The answer came from the Ask backend."""

    source: Literal["backend"]
    provider: Annotated[ProvenanceName | None, NOT_NULL] = None
    model: Annotated[ProvenanceName | None, NOT_NULL] = None


class AnswerSuggestion(WireModel):
    """One of several exact local matches the user may pick."""

    id: SafeId
    label: Label
    value: Annotated[str, JS_TRIM, js_chars(1, KNOWLEDGE_MATCH_VALUE_MAX_CHARS)]


class _AnswerEnvelope(WireModel):
    protocol: Literal["agentskit.chat.answer"]
    version: Annotated[Literal[1], exact_number(ANSWER_PROTOCOL_VERSION)]
    query: QueryText
    normalized_query: QueryText = Field(alias="normalizedQuery")


class AnswerResult(_AnswerEnvelope):
    """Outcome `answer`: local (high/exact, one entry) or backend (high/backend)."""

    outcome: Literal["answer"]
    answer: AnswerBody
    provenance: Annotated[LocalProvenance | BackendProvenance, Field(discriminator="source")]
    confidence: AnswerConfidence

    @model_validator(mode="after")
    def _confidence_matches_provenance(self) -> "AnswerResult":
        level, basis = self.confidence.level, self.confidence.basis
        if isinstance(self.provenance, LocalProvenance):
            valid = level == "high" and basis == "exact" and len(self.provenance.entry_ids) == 1
        else:
            valid = level == "high" and basis == "backend"
        if not valid:
            raise ValueError("answer confidence must match its provenance")
        return self


class AnswerChoices(_AnswerEnvelope):
    """Outcome `choices`: 2..8 exact local matches, medium/ambiguous confidence."""

    outcome: Literal["choices"]
    message: EnvelopeMessage
    suggestions: Annotated[
        list[AnswerSuggestion], Field(min_length=2, max_length=ANSWER_MAX_SUGGESTIONS)
    ]
    provenance: LocalProvenance
    confidence: AnswerConfidence

    @model_validator(mode="after")
    def _consistent(self) -> "AnswerChoices":
        if (self.confidence.level, self.confidence.basis) != ("medium", "ambiguous"):
            raise ValueError("choices require medium ambiguous confidence")
        if [item.id for item in self.suggestions] != self.provenance.entry_ids:
            raise ValueError("choice provenance must match suggestions in order")
        return self


class AnswerEscalation(_AnswerEnvelope):
    """Outcome `escalation`: local answering gave up; low confidence whose basis is the reason."""

    outcome: Literal["escalation"]
    message: EnvelopeMessage
    reason: EscalationReason
    candidate_entry_ids: Annotated[
        list[SafeId] | None, NOT_NULL, Field(max_length=ESCALATION_MAX_CANDIDATES)
    ] = Field(default=None, alias="candidateEntryIds")
    confidence: AnswerConfidence

    @model_validator(mode="after")
    def _confidence_matches_reason(self) -> "AnswerEscalation":
        if self.confidence.level != "low" or self.confidence.basis != self.reason:
            raise ValueError("escalation confidence must match its reason")
        return self


AnswerEnvelope = AnswerResult | AnswerChoices | AnswerEscalation

_ENVELOPES: Final[dict[str, type[AnswerEnvelope]]] = {
    "answer": AnswerResult,
    "choices": AnswerChoices,
    "escalation": AnswerEscalation,
}

ESCALATION_MESSAGES: Final[dict[str, str]] = {
    "miss": "No exact local answer was found. A backend answer is required.",
    "stale": "Local knowledge is stale. A backend answer is required.",
    "corrupt": "Local knowledge is corrupt. A backend answer is required.",
    "offline": "This question needs the backend, which is not available.",
}
"""The reference's default escalation messages, per reason."""


def envelope_base(query: str) -> dict[str, Any]:
    """Protocol, version, the query cut to 512 chars and its key cut to 512 chars.

    Cuts never split a surrogate pair (the reference's `slice` could).
    """
    return {
        "protocol": ANSWER_PROTOCOL,
        "version": ANSWER_PROTOCOL_VERSION,
        "query": js_slice(query, ESCALATION_QUERY_MAX_CHARS),
        "normalizedQuery": js_slice(normalize_knowledge_key(query), ESCALATION_QUERY_MAX_CHARS),
    }


def build_escalation(
    query: str,
    reason: str,
    *,
    message: str | None = None,
    candidate_entry_ids: list[str] | None = None,
) -> AnswerEscalation:
    """The escalation envelope for `query` (miss|stale|corrupt|offline).

    `message` defaults to the reference's text for the reason. Raises
    ValueError (pydantic's ValidationError) for an invalid reason, message or
    candidate id: the host passed them.
    """
    wire: dict[str, Any] = {
        **envelope_base(query),
        "outcome": "escalation",
        "message": ESCALATION_MESSAGES.get(reason, "") if message is None else message,
        "reason": reason,
        "confidence": {"level": "low", "basis": reason},
    }
    if candidate_entry_ids is not None:
        wire["candidateEntryIds"] = list(candidate_entry_ids)
    return AnswerEscalation.model_validate(wire)


# ---------------------------------------------------------------------------
# Bounded decoding of deterministic payloads (answer envelope, knowledge artifact)


def _is_number(value: object) -> bool:
    return type(value) is int or type(value) is float


def decode_deterministic(
    data: Any,
    *,
    protocol: str,
    version: int,
    max_bytes: int,
    validate: Callable[[dict[str, Any]], WireModel],
    serialize: Callable[[WireModel], str] = lambda model: dump_json(model.to_wire()),
) -> DecodeResult:
    """The reference's bounded decode, in its order; never raises.

    Text over `max_bytes` -> LIMIT_EXCEEDED (before parsing); bad JSON ->
    INVALID_PAYLOAD; an object naming `protocol` with another numeric
    version -> UNSUPPORTED_VERSION; schema failure -> INVALID_PAYLOAD; a
    host object whose serialization is over `max_bytes` -> LIMIT_EXCEEDED.
    """
    try:
        is_text = isinstance(data, str | bytes | bytearray)
        if is_text:
            size = utf8_length(data) if isinstance(data, str) else len(data)
            if size > max_bytes:
                return DecodeResult.failure(DETERMINISTIC_TOO_LARGE)
            candidate = parse_json(data)
            if candidate is JSON_INVALID:
                return DecodeResult.failure(DETERMINISTIC_NOT_JSON)
        else:
            candidate = data
            limits = StructureLimits(max_nodes=max_bytes, max_depth=JSON_MAX_NESTING + 1)
            if not check_structure(candidate, limits):
                return DecodeResult.failure(DETERMINISTIC_INVALID)
        if type(candidate) is not dict:
            return DecodeResult.failure(DETERMINISTIC_INVALID)
        stated = candidate.get("version")
        if candidate.get("protocol") == protocol and _is_number(stated) and stated != version:
            return DecodeResult.failure(DETERMINISTIC_VERSION)
        model = validate(candidate)
        if not is_text and utf8_length(serialize(model)) > max_bytes:
            return DecodeResult.failure(DETERMINISTIC_TOO_LARGE)
        return DecodeResult.success(model)
    except Exception:  # a decoder never raises; schema failures land here
        return DecodeResult.failure(DETERMINISTIC_INVALID)


def require_answer_envelope(candidate: dict[str, Any]) -> AnswerEnvelope:
    """Validate a parsed envelope by its `outcome`; raises ValueError when invalid."""
    outcome = candidate.get("outcome")
    model = _ENVELOPES.get(outcome) if type(outcome) is str else None
    if model is None:
        raise ValueError("unknown answer outcome")
    return model.model_validate(candidate)


def parse_answer_envelope(data: Any) -> DecodeResult:
    """Decode an `agentskit.chat.answer` v1 envelope (text, bytes or dict); `.envelope`.

    Bounded to 256 KiB. Codes: DETERMINISTIC_INVALID_PAYLOAD,
    DETERMINISTIC_UNSUPPORTED_VERSION, DETERMINISTIC_LIMIT_EXCEEDED. Never raises.
    """
    if isinstance(data, AnswerResult | AnswerChoices | AnswerEscalation):
        return DecodeResult.success(data)
    return decode_deterministic(
        data,
        protocol=ANSWER_PROTOCOL,
        version=ANSWER_PROTOCOL_VERSION,
        max_bytes=ANSWER_ENVELOPE_MAX_BYTES,
        validate=require_answer_envelope,
    )


# ---------------------------------------------------------------------------
# Ask backend request `agentskit.chat.ask` v1

_REQUEST_LIMITS: Final = StructureLimits(
    max_nodes=ASK_REQUEST_MAX_BODY_BYTES, max_depth=JSON_MAX_NESTING + 1
)


class AskMessage(StrictWireModel):
    """One projected conversation message: user or assistant text only."""

    role: Literal["user", "assistant"]
    content: Annotated[str, js_chars(0, ASK_REQUEST_MESSAGE_MAX_CHARS)]


class AskRequest(StrictWireModel):
    """The body an Ask client POSTs. Carries no site, corpus or other authority."""

    protocol: Annotated[Literal["agentskit.chat.ask"] | None, NOT_NULL] = None
    version: Annotated[Literal[1] | None, NOT_NULL, exact_number(ASK_PROTOCOL_VERSION)] = None
    session_id: Annotated[SafeId | None, NOT_NULL] = Field(default=None, alias="sessionId")
    messages: Annotated[list[AskMessage], Field(min_length=1, max_length=ASK_REQUEST_MAX_MESSAGES)]
    deterministic: Annotated[AnswerEscalation | None, NOT_NULL] = None


def _decode_request(data: Any) -> DecodeResult:
    if isinstance(data, AskRequest):
        return DecodeResult.success(data)
    if isinstance(data, str | bytes | bytearray):
        size = utf8_length(data) if isinstance(data, str) else len(data)
        if size > ASK_REQUEST_MAX_BODY_BYTES:
            return DecodeResult.failure(_REQUEST_TOO_LARGE)
        candidate = parse_json(data)
        if candidate is JSON_INVALID:
            return DecodeResult.failure(_REQUEST_NOT_JSON)
    else:
        candidate = data
        if not check_structure(candidate, _REQUEST_LIMITS):
            return DecodeResult.failure(_REQUEST_INVALID)
    if type(candidate) is not dict:
        return DecodeResult.failure(_REQUEST_INVALID)
    try:
        return DecodeResult.success(AskRequest.model_validate(candidate))
    except VALIDATION_ERRORS:
        return DecodeResult.failure(_REQUEST_INVALID)


def parse_ask_request(data: Any) -> DecodeResult:
    """Decode an untrusted Ask request (text, bytes or dict); `.request` on success.

    Text over 64 KiB, bad JSON and any schema failure (unknown field
    included) -> ASK_INVALID_REQUEST with a fixed message. Never raises.
    """
    try:
        return _decode_request(data)
    except Exception:  # a decoder never raises
        return DecodeResult.failure(_REQUEST_INVALID)
