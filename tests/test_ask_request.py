"""Ask backend request, answer envelope, escalation building and the knowledge key."""

import json
import unicodedata
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentskit_web.protocol import (
    AnswerEscalation,
    AskRequest,
    normalize_knowledge_key,
    parse_answer_envelope,
    parse_ask_request,
)
from agentskit_web.protocol.ask_request import ESCALATION_MESSAGES, build_escalation
from agentskit_web.protocol.limits import (
    ANSWER_ENVELOPE_MAX_BYTES,
    ASK_REQUEST_MAX_BODY_BYTES,
    ASK_REQUEST_MAX_MESSAGES,
    ASK_REQUEST_MESSAGE_MAX_CHARS,
    ESCALATION_MAX_CANDIDATES,
    ESCALATION_QUERY_MAX_CHARS,
)
from agentskit_web.protocol.text_metrics import js_length

USER = {"role": "user", "content": "How do I install it?"}


def request(**changes: Any) -> dict[str, Any]:
    return {"messages": [USER], **changes}


def diagnostic(result: Any) -> tuple[str, str]:
    assert not result.ok and result.diagnostic is not None
    return result.diagnostic.code, result.diagnostic.message


INVALID = ("ASK_INVALID_REQUEST", "The Ask request payload is invalid.")


def test_request_model_and_wire_form() -> None:
    escalation = build_escalation("Why?", "miss").to_wire()
    data = request(
        protocol="agentskit.chat.ask", version=1, sessionId="s-1", deterministic=escalation
    )
    result = parse_ask_request(data)
    assert result.ok and isinstance(result.request, AskRequest)
    assert result.request.to_wire() == data
    assert isinstance(result.request.deterministic, AnswerEscalation)
    assert parse_ask_request(result.request).request is result.request


def test_message_count_limits() -> None:
    assert parse_ask_request({"messages": [USER] * ASK_REQUEST_MAX_MESSAGES}).ok
    assert (
        diagnostic(parse_ask_request({"messages": [USER] * (ASK_REQUEST_MAX_MESSAGES + 1)}))
        == INVALID
    )
    assert diagnostic(parse_ask_request({"messages": []})) == INVALID


def test_message_char_limits_count_utf16_units() -> None:
    def content(text: str) -> Any:
        return parse_ask_request({"messages": [{"role": "assistant", "content": text}]})

    limit = ASK_REQUEST_MESSAGE_MAX_CHARS
    assert content("a" * limit).ok and not content("a" * (limit + 1)).ok
    assert content("😀" * (limit // 2)).ok and not content("😀" * (limit // 2) + "a").ok
    assert content("").ok


def test_body_byte_limit_on_text_input() -> None:
    valid = json.dumps(request())
    valid_at_limit = valid + " " * (ASK_REQUEST_MAX_BODY_BYTES - len(valid))
    assert parse_ask_request(valid_at_limit).ok
    assert parse_ask_request(valid_at_limit.encode()).ok
    too_large = ("ASK_INVALID_REQUEST", "Request body is too large.")
    assert diagnostic(parse_ask_request(valid_at_limit + " ")) == too_large
    assert diagnostic(parse_ask_request((valid_at_limit + " ").encode())) == too_large


@pytest.mark.parametrize(
    "field", ["siteId", "corpus", "persona", "assistant", "tenant", "subject", "components"]
)
def test_authority_fields_are_rejected(field: str) -> None:
    assert diagnostic(parse_ask_request(request(**{field: "x"}))) == INVALID


def test_hostile_inputs_never_raise() -> None:
    cyclic: dict[str, Any] = request()
    cyclic["messages"].append(cyclic)
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    for value in (cyclic, request(x=deep), None, 7, object(), "[" * 100_000, b"\xff\xfe"):
        assert not parse_ask_request(value).ok
    assert diagnostic(parse_ask_request("{")) == (
        "ASK_INVALID_REQUEST",
        "Request body is not valid JSON.",
    )


# ---------------------------------------------------------------------------
# Escalation envelope


@pytest.mark.parametrize("reason", ["miss", "stale", "corrupt", "offline"])
def test_build_escalation_for_every_reason(reason: str) -> None:
    envelope = build_escalation("  Install  CLI ", reason)
    assert envelope.to_wire() == {
        "protocol": "agentskit.chat.answer",
        "version": 1,
        "query": "  Install  CLI ",
        "normalizedQuery": "install cli",
        "outcome": "escalation",
        "message": ESCALATION_MESSAGES[reason],
        "reason": reason,
        "confidence": {"level": "low", "basis": reason},
    }
    assert parse_answer_envelope(envelope.to_wire()).envelope == envelope


def test_build_escalation_cuts_long_queries_without_splitting_pairs() -> None:
    query = "a" + "😀" * ESCALATION_QUERY_MAX_CHARS
    envelope = build_escalation(query, "miss")
    assert js_length(envelope.query) == ESCALATION_QUERY_MAX_CHARS - 1
    assert envelope.query == "a" + "😀" * ((ESCALATION_QUERY_MAX_CHARS - 1) // 2)
    assert parse_ask_request(request(deterministic=envelope.to_wire())).ok


def test_build_escalation_candidates_and_errors() -> None:
    ids = [f"e{i}" for i in range(ESCALATION_MAX_CANDIDATES)]
    assert (
        build_escalation("q", "miss", candidate_entry_ids=ids).to_wire()["candidateEntryIds"] == ids
    )
    with pytest.raises(ValueError):
        build_escalation("q", "miss", candidate_entry_ids=[*ids, "e9"])
    with pytest.raises(ValueError):
        build_escalation("q", "bored")
    with pytest.raises(ValueError):
        build_escalation("q", "miss", message="")


def test_answer_envelope_byte_limit() -> None:
    envelope = json.dumps(build_escalation("q", "miss").to_wire())
    at_limit = envelope + " " * (ANSWER_ENVELOPE_MAX_BYTES - len(envelope))
    assert parse_answer_envelope(at_limit).ok
    assert diagnostic(parse_answer_envelope(at_limit + " ")) == (
        "DETERMINISTIC_LIMIT_EXCEEDED",
        "Deterministic payload exceeds its safety limit.",
    )


# ---------------------------------------------------------------------------
# Knowledge key

_JS_WS = (
    "\t\n\v\f\r \u00a0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from([*list(_JS_WS), "a", "B", "é", "Ｉ", "\x1c", "\x85", "ﬁ"])))
def test_knowledge_key_shape(value: str) -> None:
    key = normalize_knowledge_key(value)
    assert key == key.strip(_JS_WS)
    assert "  " not in key
    assert not any(char in key for char in _JS_WS if char != " ")
    assert key == key.lower()


@settings(max_examples=300)
@given(st.text(max_size=30))
def test_knowledge_key_is_nfkc_then_lower_when_no_whitespace(value: str) -> None:
    composed = unicodedata.normalize("NFKC", value)
    if not any(char in composed for char in _JS_WS):
        assert normalize_knowledge_key(value) == composed.lower()


def test_knowledge_key_rejects_non_strings() -> None:
    with pytest.raises(TypeError):
        normalize_knowledge_key(None)  # type: ignore[arg-type]
