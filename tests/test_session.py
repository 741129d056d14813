"""Session snapshots: v1/v0 decoding, limits at and past each bound, and the CAS store."""

import json
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentskit_web.protocol import ProtocolError, SessionSnapshot, decode_session_snapshot
from agentskit_web.protocol.limits import (
    JS_MAX_SAFE_INTEGER,
    SESSION_DECISION_CONTENT_MAX_CHARS,
    SESSION_DECISION_INPUT_MAX_CHARS,
    SESSION_MAX_CONFIRMATIONS,
    SESSION_MAX_DECISIONS,
    SESSION_STATE_MAX_CHARS,
)
from agentskit_web.server.session_store import InMemorySessionStore, SessionStore

BASE: dict[str, Any] = {
    "protocol": "agentskit.chat.session",
    "version": 1,
    "sessionId": "cross-client",
    "definitionId": "protocol-session",
    "definitionRevision": 1,
    "updatedAt": "2026-07-11T00:00:00.000Z",
    "cursor": 1,
    "confirmations": [],
}
INVALID = ("SESSION_INVALID_SNAPSHOT", "Session snapshot payload is invalid.")


def decision(index: int, **changes: Any) -> dict[str, Any]:
    return {
        "messageId": f"m-{index}",
        "input": "question",
        "routeId": "route",
        "kind": "deterministic",
        "content": "answer",
        "fromState": "a",
        "toState": "b",
        **changes,
    }


def confirmation(index: int, **changes: Any) -> dict[str, Any]:
    return {
        "token": f"tok-{index}",
        "action": "approve",
        "input": {"n": index},
        "toolCallId": f"call-{index}",
        "expiresAt": 0,
        "status": "pending",
        **changes,
    }


def snapshot(**changes: Any) -> dict[str, Any]:
    return {**BASE, **changes}


def decodes(value: Any) -> bool:
    return bool(decode_session_snapshot(value).ok)


def failure(value: Any) -> tuple[str, str]:
    result = decode_session_snapshot(value)
    assert not result.ok and result.diagnostic is not None
    assert result.diagnostic.retryable is False
    return result.diagnostic.code, result.diagnostic.message


def test_snapshot_is_a_model_with_wire_form() -> None:
    result = decode_session_snapshot(BASE)
    assert result.ok and isinstance(result.snapshot, SessionSnapshot)
    assert result.snapshot.to_wire() == BASE
    assert result.snapshot.cursor == 1 and result.snapshot.session_id == "cross-client"
    assert decode_session_snapshot(result.snapshot).snapshot is result.snapshot


def test_v0_is_migrated_to_v1() -> None:
    legacy = {key: value for key, value in BASE.items() if key != "protocol"} | {"version": 0}
    result = decode_session_snapshot(json.dumps(legacy).encode())
    assert result.ok and result.snapshot.to_wire() == BASE
    assert failure({**legacy, "version": 0, "cursor": -1}) == INVALID


def test_unsupported_versions_are_explicit_and_never_coerced() -> None:
    unsupported = ("SESSION_UNSUPPORTED_VERSION", "Session snapshot uses an unsupported version.")
    for version in (2, -1, 0.5, 1e300, JS_MAX_SAFE_INTEGER):
        assert failure(snapshot(version=version)) == unsupported
    for version in ("1", "0", True, False, None, [1]):
        assert failure(snapshot(version=version)) == INVALID


def test_decisions_limit_and_uniqueness() -> None:
    at = [decision(i) for i in range(SESSION_MAX_DECISIONS)]
    assert decodes(snapshot(conversation={"state": "s", "decisions": at}))
    past = [*at, decision(SESSION_MAX_DECISIONS)]
    assert not decodes(snapshot(conversation={"state": "s", "decisions": past}))
    assert not decodes(snapshot(conversation={"state": "s", "decisions": [decision(1)] * 2}))


@pytest.mark.parametrize(
    ("field", "limit"),
    [("input", SESSION_DECISION_INPUT_MAX_CHARS), ("content", SESSION_DECISION_CONTENT_MAX_CHARS)],
)
def test_decision_text_limits(field: str, limit: int) -> None:
    def with_text(text: str) -> dict[str, Any]:
        return snapshot(conversation={"state": "s", "decisions": [decision(1, **{field: text})]})

    assert decodes(with_text("x" * limit)) and not decodes(with_text("x" * (limit + 1)))
    assert decodes(with_text("😀" * (limit // 2)))
    assert not decodes(with_text("😀" * (limit // 2) + "x"))
    assert decodes(with_text(""))


@pytest.mark.parametrize("field", ["fromState", "toState"])
def test_state_names_are_bounded(field: str) -> None:
    def with_state(name: str) -> dict[str, Any]:
        return snapshot(conversation={"state": "s", "decisions": [decision(1, **{field: name})]})

    assert decodes(with_state("s" * SESSION_STATE_MAX_CHARS))
    assert not decodes(with_state("s" * (SESSION_STATE_MAX_CHARS + 1)))
    assert not decodes(with_state(""))


def test_confirmations_limit_and_uniqueness() -> None:
    at = [confirmation(i) for i in range(SESSION_MAX_CONFIRMATIONS)]
    assert decodes(snapshot(confirmations=at))
    assert not decodes(snapshot(confirmations=[*at, confirmation(SESSION_MAX_CONFIRMATIONS)]))
    assert not decodes(snapshot(confirmations=[confirmation(1), confirmation(2, token="tok-1")]))
    assert not decodes(
        snapshot(confirmations=[confirmation(1), confirmation(2, toolCallId="call-1")])
    )


def test_confirmation_input_is_a_bounded_json_object() -> None:
    for good in ({}, {"a": [1, "x", None, True, 2.5]}, {"k" * 256: 1}):
        assert decodes(snapshot(confirmations=[confirmation(1, input=good)])), good
    too_many_nodes = {"a": list(range(1_000))}
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    for bad in ([], "x", None, 1, {"k" * 257: 1}, too_many_nodes, cyclic, {"x": float("inf")}):
        assert not decodes(snapshot(confirmations=[confirmation(1, input=bad)])), bad


def test_decoded_snapshot_does_not_share_host_mutables() -> None:
    data = snapshot(confirmations=[confirmation(1, input={"list": [1, 2]})])
    result = decode_session_snapshot(data)
    data["confirmations"][0]["input"]["list"].append(3)
    assert result.snapshot.to_wire()["confirmations"][0]["input"] == {"list": [1, 2]}


def test_integers_follow_javascript_numbers() -> None:
    assert decode_session_snapshot(snapshot(cursor=3.0)).snapshot.to_wire()["cursor"] == 3
    assert decodes(snapshot(cursor=JS_MAX_SAFE_INTEGER))
    for bad in (JS_MAX_SAFE_INTEGER + 1, 1.5, True, "1", None, -1):
        assert not decodes(snapshot(cursor=bad)), bad
    assert not decodes(snapshot(definitionRevision=0))
    assert not decodes(snapshot(activeTurn={"turnId": "t", "expiresAt": -1}))


def test_hostile_inputs_never_raise() -> None:
    cyclic: dict[str, Any] = dict(BASE)
    cyclic["conversation"] = cyclic
    deep: Any = {}
    for _ in range(100_000):
        deep = {"a": deep}

    class Exploding(dict):  # type: ignore[type-arg]
        def get(self, *args: Any) -> Any:
            raise RuntimeError("boom")

    for value in (cyclic, snapshot(extra=deep), Exploding(BASE), object(), b"\xff", "[" * 100_000):
        result = decode_session_snapshot(value)
        assert not result.ok and result.diagnostic is not None
        assert result.diagnostic.code == "SESSION_INVALID_SNAPSHOT"


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=200)
@given(st.dictionaries(st.sampled_from([*sorted(BASE), "activeTurn", "x"]), _JSONISH))
def test_decode_never_raises_and_round_trips(changes: dict[str, Any]) -> None:
    result = decode_session_snapshot({**BASE, **changes})
    if result.ok:
        again = decode_session_snapshot(json.dumps(result.snapshot.to_wire()))
        assert again.ok and again.snapshot.to_wire() == result.snapshot.to_wire()
    else:
        assert result.diagnostic is not None
        assert result.diagnostic.message in {
            "Session snapshot payload is invalid.",
            "Session snapshot uses an unsupported version.",
        }


# ---------------------------------------------------------------------------
# Compare-and-set store


def stored(cursor: int, session_id: str = "s-1") -> SessionSnapshot:
    result = decode_session_snapshot(snapshot(sessionId=session_id, cursor=cursor))
    assert result.ok
    value: SessionSnapshot = result.snapshot
    return value


def test_store_create_only_then_compare_and_set() -> None:
    store: SessionStore = InMemorySessionStore()
    assert store.load("s-1") is None
    assert store.save(stored(1), None) is True
    assert store.save(stored(5), None) is False  # create-only: already exists
    assert store.save(stored(2), 0) is False  # stale expectation
    assert store.load("s-1") == stored(1)
    assert store.save(stored(2), 1) is True
    assert store.save(stored(3), 1) is False
    assert store.load("s-1") == stored(2)
    assert store.save(stored(0, "s-2"), 0) is False  # nothing stored: only None creates


def test_store_accepts_wire_dicts_and_rejects_invalid_input() -> None:
    store = InMemorySessionStore()
    assert store.save(snapshot(cursor=4), None)
    loaded = store.load("cross-client")
    assert loaded is not None and loaded.cursor == 4
    with pytest.raises(ProtocolError) as error:
        store.save(snapshot(cursor=-1), 4)
    assert error.value.code == "SESSION_INVALID_SNAPSHOT"
    for bad in (-1, 1.0, True, "4"):
        with pytest.raises(ValueError):
            store.save(stored(5, "cross-client"), bad)  # type: ignore[arg-type]
    store.delete("cross-client")
    assert store.load("cross-client") is None


def test_store_compare_and_set_is_atomic_under_threads() -> None:
    store = InMemorySessionStore()
    store.save(stored(0), None)
    barrier = threading.Barrier(16)
    wins: list[int] = []

    def contend(cursor: int) -> None:
        barrier.wait()
        if store.save(stored(cursor), 0):
            wins.append(cursor)

    threads = [threading.Thread(target=contend, args=(i + 1,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(wins) == 1
    loaded = store.load("s-1")
    assert loaded is not None and loaded.cursor == wins[0]
