"""Local knowledge artifact `agentskit.chat.knowledge` v1 and exact local answers (section 8).

An artifact is a bounded list of entries, each with exact match values and a
markdown answer with citations. `answer_locally` answers a question with no
backend call when its normalised key equals one entry's normalised match
value; anything else (miss, stale or corrupt artifact) yields the
low-confidence escalation envelope the Ask adapter forwards as
`deterministic`.

Content hash. `contentHash` is `sha256:` + the lower-case hex SHA-256 of the
UTF-8 bytes of the artifact's canonical JSON *without* its `contentHash`
field. Canonical JSON is `JSON.stringify` of the validated artifact: fields
in schema order (protocol, version, artifactId, siteId, generatedAt,
expiresAt?, entries; entry: id, kind, label, match {type, values}, answer
{markdown, citations [{id, title, href}]}), unknown fields dropped, trimmed
strings as validated, no whitespace, non-ASCII characters (U+2028/U+2029
included) written raw, control characters escaped as JSON.stringify does and
lone surrogates as lower-case `\\udxxx`. This reproduces the reference
producer's hashes (its published fixtures verify here), so artifacts move
between implementations. `parse_knowledge_artifact` verifies the hash
(DETERMINISTIC_HASH_MISMATCH otherwise), and optionally that it equals the
hash a site config expects.
"""

import hashlib
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Final, Literal

from pydantic import Field, PrivateAttr, model_validator

from .ask_request import (
    DETERMINISTIC_INVALID,
    AnswerChoices,
    AnswerCitation,
    AnswerEscalation,
    AnswerResult,
    ContentHash,
    Label,
    build_escalation,
    decode_deterministic,
    envelope_base,
    normalize_knowledge_key,
)
from .dates import IsoDateTime
from .diagnostics import DecodeResult, Diagnostic, ProtocolError
from .identifiers import SafeId, js_chars
from .limits import (
    ANSWER_MAX_SUGGESTIONS,
    ESCALATION_QUERY_MAX_CHARS,
    KNOWLEDGE_ANSWER_MAX_CHARS,
    KNOWLEDGE_MATCH_VALUE_MAX_CHARS,
    KNOWLEDGE_MAX_BYTES,
    KNOWLEDGE_MAX_CITATIONS,
    KNOWLEDGE_MAX_ENTRIES,
    KNOWLEDGE_MAX_MATCH_VALUES,
)
from .text_metrics import js_length
from .wire_fields import JS_TRIM, NOT_NULL, exact_number
from .wire_model import WireModel

KNOWLEDGE_PROTOCOL: Final = "agentskit.chat.knowledge"
KNOWLEDGE_PROTOCOL_VERSION: Final = 1
DETERMINISTIC_HASH_MISMATCH: Final = "DETERMINISTIC_HASH_MISMATCH"

_HASH_NOT_CONTENT: Final = Diagnostic(
    DETERMINISTIC_HASH_MISMATCH, "Deterministic artifact content hash does not match its content."
)
_HASH_NOT_EXPECTED: Final = Diagnostic(
    DETERMINISTIC_HASH_MISMATCH,
    "Deterministic artifact does not match the configured content hash.",
)
_PLACEHOLDER_HASH: Final = "sha256:" + "0" * 64
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MULTIPLE_MATCHES: Final = "More than one exact local answer matches. Choose one to continue."

MatchValue = Annotated[str, JS_TRIM, js_chars(1, KNOWLEDGE_MATCH_VALUE_MAX_CHARS)]
EntryKind = Literal[
    "command", "package", "navigation", "contribution", "ecosystem", "restricted-faq", "document"
]


def _instant_ms(value: str) -> int:
    """Epoch milliseconds of a validated ISO date-time, at `Date.parse` precision (ms, floored)."""
    moment = datetime.fromisoformat(value)  # 3.11+: accepts `Z` and any fraction length
    return (moment - _EPOCH) // timedelta(milliseconds=1)


class KnowledgeMatch(WireModel):
    """Exact match values, unique after `normalize_knowledge_key`."""

    type: Literal["exact"]
    values: Annotated[list[MatchValue], Field(min_length=1, max_length=KNOWLEDGE_MAX_MATCH_VALUES)]

    @model_validator(mode="after")
    def _unique_keys(self) -> "KnowledgeMatch":
        keys = [normalize_knowledge_key(value) for value in self.values]
        if len(set(keys)) != len(keys):
            raise ValueError("match values must be unique after normalization")
        return self


class KnowledgeAnswer(WireModel):
    """The stored answer: trimmed markdown and at most 8 safe citations."""

    markdown: Annotated[str, JS_TRIM, js_chars(1, KNOWLEDGE_ANSWER_MAX_CHARS)]
    citations: Annotated[list[AnswerCitation], Field(max_length=KNOWLEDGE_MAX_CITATIONS)]


class KnowledgeEntry(WireModel):
    """One known question family and its answer."""

    id: SafeId
    kind: EntryKind
    label: Label
    match: KnowledgeMatch
    answer: KnowledgeAnswer


class KnowledgeArtifact(WireModel):
    """A validated artifact (hash not yet checked: use `parse_knowledge_artifact`)."""

    protocol: Literal["agentskit.chat.knowledge"]
    version: Annotated[Literal[1], exact_number(KNOWLEDGE_PROTOCOL_VERSION)]
    artifact_id: SafeId = Field(alias="artifactId")
    site_id: SafeId = Field(alias="siteId")
    content_hash: ContentHash = Field(alias="contentHash")
    generated_at: IsoDateTime = Field(alias="generatedAt")
    expires_at: Annotated[IsoDateTime | None, NOT_NULL] = Field(default=None, alias="expiresAt")
    entries: Annotated[list[KnowledgeEntry], Field(max_length=KNOWLEDGE_MAX_ENTRIES)]

    _index: "dict[str, list[KnowledgeEntry]] | None" = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _consistent(self) -> "KnowledgeArtifact":
        ids = [entry.id for entry in self.entries]
        if len(set(ids)) != len(ids):
            raise ValueError("entry ids must be unique")
        if self.expires_at is not None and _instant_ms(self.expires_at) <= _instant_ms(
            self.generated_at
        ):
            raise ValueError("expiration must be after generation")
        return self

    def index(self) -> dict[str, list[KnowledgeEntry]]:
        """Normalised match key -> entries (each once, artifact order); built once."""
        if self._index is None:
            index: dict[str, list[KnowledgeEntry]] = {}
            for entry in self.entries:
                for value in entry.match.values:
                    bucket = index.setdefault(normalize_knowledge_key(value), [])
                    if not bucket or bucket[-1] is not entry:
                        bucket.append(entry)
            self._index = index
        return self._index


# ---------------------------------------------------------------------------
# Canonical JSON and the content hash

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def js_stringify(value: Any) -> str:
    """`JSON.stringify(value)` for plain JSON data (the canonical form that is hashed)."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _hashed_bytes(artifact: KnowledgeArtifact) -> bytes:
    wire = artifact.to_wire()
    del wire["contentHash"]
    return js_stringify(wire).encode("utf-8")


def _content_hash_of(artifact: KnowledgeArtifact) -> str:
    return "sha256:" + hashlib.sha256(_hashed_bytes(artifact)).hexdigest()


def compute_knowledge_hash(artifact: "KnowledgeArtifact | dict[str, Any]") -> str:
    """The `contentHash` an artifact must carry (see the module docstring for the bytes).

    A dict may omit `contentHash` (a producer computing it). Raises
    ProtocolError (DETERMINISTIC_INVALID_PAYLOAD) when the rest is invalid.
    """
    if isinstance(artifact, KnowledgeArtifact):
        return _content_hash_of(artifact)
    candidate = dict(artifact) if isinstance(artifact, dict) else artifact
    if isinstance(candidate, dict):
        candidate["contentHash"] = _PLACEHOLDER_HASH
    result = _decode(candidate)
    if not result.ok:
        assert result.diagnostic is not None
        raise ProtocolError(result.diagnostic.code, result.diagnostic.message)
    return _content_hash_of(result.artifact)


def _validate(candidate: dict[str, Any]) -> KnowledgeArtifact:
    return KnowledgeArtifact.model_validate(candidate)


def _decode(data: Any) -> DecodeResult:
    return decode_deterministic(
        data,
        protocol=KNOWLEDGE_PROTOCOL,
        version=KNOWLEDGE_PROTOCOL_VERSION,
        max_bytes=KNOWLEDGE_MAX_BYTES,
        validate=_validate,
        serialize=lambda model: js_stringify(model.to_wire()),
    )


def parse_knowledge_artifact(data: Any, expected_content_hash: str | None = None) -> DecodeResult:
    """Decode and verify a knowledge artifact (text, bytes or dict); `.artifact`.

    Bounds (512 KiB, 1,024 entries, 16 values, 16,384-char answers, 8
    citations), then the content hash, then `expected_content_hash` when a
    site config names one. Codes: DETERMINISTIC_INVALID_PAYLOAD,
    DETERMINISTIC_UNSUPPORTED_VERSION, DETERMINISTIC_LIMIT_EXCEEDED,
    DETERMINISTIC_HASH_MISMATCH. Never raises.
    """
    try:
        result = (
            DecodeResult.success(data) if isinstance(data, KnowledgeArtifact) else _decode(data)
        )
        if not result.ok:
            return result
        artifact: KnowledgeArtifact = result.artifact
        if _content_hash_of(artifact) != artifact.content_hash:
            return DecodeResult.failure(_HASH_NOT_CONTENT)
        if expected_content_hash is not None and artifact.content_hash != expected_content_hash:
            return DecodeResult.failure(_HASH_NOT_EXPECTED)
        return result
    except Exception:  # a decoder never raises
        return DecodeResult.failure(DETERMINISTIC_INVALID)


# ---------------------------------------------------------------------------
# Exact local answers

LocalAnswer = AnswerResult | AnswerChoices | AnswerEscalation


def _now_ms(now: datetime | None) -> int:
    """`now` (naive means UTC) or the current time, in epoch milliseconds."""
    moment = datetime.now(UTC) if now is None else now
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // timedelta(milliseconds=1)


def _answer(artifact: KnowledgeArtifact, query: str, entry: KnowledgeEntry) -> AnswerResult:
    return AnswerResult.model_validate(
        {
            **envelope_base(query),
            "outcome": "answer",
            "answer": entry.answer.to_wire(),
            "provenance": _provenance(artifact, [entry]),
            "confidence": {"level": "high", "basis": "exact"},
        }
    )


def _choices(
    artifact: KnowledgeArtifact, query: str, entries: list[KnowledgeEntry]
) -> AnswerChoices:
    shown = entries[:ANSWER_MAX_SUGGESTIONS]
    return AnswerChoices.model_validate(
        {
            **envelope_base(query),
            "outcome": "choices",
            "message": _MULTIPLE_MATCHES,
            "suggestions": [
                {"id": entry.id, "label": entry.label, "value": entry.match.values[0]}
                for entry in shown
            ],
            "provenance": _provenance(artifact, shown),
            "confidence": {"level": "medium", "basis": "ambiguous"},
        }
    )


def _provenance(artifact: KnowledgeArtifact, entries: list[KnowledgeEntry]) -> dict[str, Any]:
    return {
        "source": "local",
        "artifactId": artifact.artifact_id,
        "contentHash": artifact.content_hash,
        "entryIds": [entry.id for entry in entries],
    }


def answer_locally(artifact: Any, question: str, *, now: datetime | None = None) -> LocalAnswer:
    """Answer `question` from the artifact by exact normalised match; never calls a backend.

    - artifact not a verified `KnowledgeArtifact` and not decodable as one -> escalation `corrupt`
    - `expiresAt` at or before `now` (default: the current UTC time) -> escalation `stale`
    - question or its key over 512 chars, or no entry matches -> escalation `miss`
    - exactly one entry matches -> `answer` (high/exact, local provenance)
    - several match -> `choices` (the first 8, medium/ambiguous), as the reference does

    Pure apart from reading the clock when `now` is omitted.
    """
    if not isinstance(question, str):
        raise TypeError("a question is a string")
    if not isinstance(artifact, KnowledgeArtifact):
        decoded = parse_knowledge_artifact(artifact)
        if not decoded.ok:
            return build_escalation(question, "corrupt")
        artifact = decoded.artifact
    assert isinstance(artifact, KnowledgeArtifact)
    if artifact.expires_at is not None and _instant_ms(artifact.expires_at) <= _now_ms(now):
        return build_escalation(question, "stale")
    key = normalize_knowledge_key(question)
    too_long = max(js_length(question), js_length(key)) > ESCALATION_QUERY_MAX_CHARS
    entries = [] if too_long else artifact.index().get(key, [])
    if not entries:
        return build_escalation(question, "miss")
    if len(entries) > 1:
        return _choices(artifact, question, entries)
    return _answer(artifact, question, entries[0])
