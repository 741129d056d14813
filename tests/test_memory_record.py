"""Memory record validation (PROTOCOL.md section 7): caps at and past their limits, hostile input.

The conformance vectors in fixtures/memory_record.json cover the field rules;
this file covers what JSON fixtures cannot express or should not hold: big
inputs, cycles, non-JSON host objects, immutability and property tests.
"""

import copy
import json
import math
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentskit_web.protocol import ProtocolError, validate_memory_record
from agentskit_web.protocol.limits import (
    MEMORY_RECORD_MAX_DEPTH,
    MEMORY_RECORD_MAX_KEY_CHARS,
    MEMORY_RECORD_MAX_NODES,
)
from agentskit_web.protocol.memory_record import (
    MEMORY_RECORD_ERROR_CODE,
    MEMORY_RECORD_ERROR_MESSAGE,
    FrozenJsonObject,
    MemoryMessage,
    new_message,
    require_memory_record,
    validate_memory_messages,
)

CREATED = "2026-07-11T03:00:00.000Z"
MESSAGE: dict[str, Any] = {
    "id": "m1",
    "role": "user",
    "content": "Hello",
    "status": "complete",
    "createdAt": CREATED,
}


def record(*messages: Any) -> dict[str, Any]:
    return {"version": 1, "messages": list(messages)}


def with_metadata(metadata: Any) -> dict[str, Any]:
    return record({**MESSAGE, "metadata": metadata})


def assert_invalid(value: Any) -> None:
    with pytest.raises(ProtocolError) as caught:
        validate_memory_record(value)
    assert caught.value.code == MEMORY_RECORD_ERROR_CODE == "AK_CONFIG_INVALID"
    assert caught.value.message == MEMORY_RECORD_ERROR_MESSAGE
    assert str(caught.value) == "Serialized message record is invalid."
    # Raised outside any except block: no validator error rides along in a traceback.
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None


def count_nodes(value: Any) -> int:
    """Every value counts once, the root included (the reference's node count)."""
    if isinstance(value, dict):
        return 1 + sum(count_nodes(item) for item in value.values())
    if isinstance(value, list):
        return 1 + sum(count_nodes(item) for item in value)
    return 1


def nested(levels: int, leaf: Any = "leaf") -> Any:
    value = leaf
    for _ in range(levels):
        value = {"d": value}
    return value


def max_depth(value: Any) -> int:
    """Depth of the deepest value with the record root at depth 0 (reference convention)."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else []
        )
        stack.extend((child, depth + 1) for child in children)
    return deepest


# --- structural caps ---------------------------------------------------------


def record_with_nodes(total: int) -> dict[str, Any]:
    base = with_metadata({"list": []})
    filler = total - count_nodes(base)
    return with_metadata({"list": [0] * filler})


def test_node_limit_at_and_past() -> None:
    at_limit = record_with_nodes(MEMORY_RECORD_MAX_NODES)
    assert count_nodes(at_limit) == 10_000
    assert validate_memory_record(at_limit)["messages"][0]["metadata"]["list"][-1] == 0
    past = record_with_nodes(MEMORY_RECORD_MAX_NODES + 1)
    assert count_nodes(past) == 10_001
    assert_invalid(past)


def test_node_limit_counts_messages_too() -> None:
    # Each minimal message is 6 nodes; the wrapper is 3 (root, version, messages).
    many = record(*([MESSAGE] * ((MEMORY_RECORD_MAX_NODES - 3) // 6)))
    assert count_nodes(many) <= MEMORY_RECORD_MAX_NODES
    assert len(validate_memory_record(many)["messages"]) == 1_666
    assert_invalid(record(*([MESSAGE] * 1_667)))


def test_depth_limit_at_and_past() -> None:
    # root 0, messages 1, message 2, metadata 3: 29 more levels put the leaf at 32.
    at_limit = with_metadata(nested(29))
    assert max_depth(at_limit) == MEMORY_RECORD_MAX_DEPTH == 32
    assert validate_memory_record(at_limit)["messages"][0]["metadata"] == nested(29)
    past = with_metadata(nested(30))
    assert max_depth(past) == 33
    assert_invalid(past)


def test_empty_containers_count_for_depth() -> None:
    assert validate_memory_record(with_metadata(nested(29, leaf={})))
    assert_invalid(with_metadata(nested(30, leaf=[])))


def test_very_deep_dict_is_rejected_without_recursion() -> None:
    deep: Any = {}
    for _ in range(100_000):
        deep = {"d": deep}
    assert_invalid(with_metadata(deep))
    assert_invalid(deep)


def test_key_length_at_and_past_in_js_chars() -> None:
    limit = MEMORY_RECORD_MAX_KEY_CHARS
    assert validate_memory_record(with_metadata({"k" * limit: 1}))
    assert_invalid(with_metadata({"k" * (limit + 1): 1}))
    # An emoji is 2 UTF-16 units: 128 emoji are exactly 256 chars, one more unit is past.
    emoji_key = "\U0001f600" * (limit // 2)
    assert validate_memory_record(with_metadata({emoji_key: 1}))
    assert_invalid(with_metadata({emoji_key + "a": 1}))


def test_cyclic_values_are_rejected() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    assert_invalid(with_metadata(cyclic))
    loop: list[Any] = []
    loop.append(loop)
    assert_invalid(with_metadata({"loop": loop}))
    message = dict(MESSAGE)
    rec = record(message)
    message["metadata"] = {"record": rec}
    assert_invalid(rec)


def test_shared_but_acyclic_values_are_fine() -> None:
    shared = {"a": 1}
    result = validate_memory_record(with_metadata({"x": shared, "y": shared}))
    assert result["messages"][0]["metadata"] == {"x": {"a": 1}, "y": {"a": 1}}


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_non_finite_numbers_are_rejected(number: float) -> None:
    assert_invalid(with_metadata({"n": number}))
    part = {"type": "audio", "source": "s", "durationSec": number}
    assert_invalid(record({**MESSAGE, "parts": [part]}))


def test_integer_beyond_float_range_is_rejected() -> None:
    assert_invalid(with_metadata({"n": 10**400}))


class Unserialisable:
    pass


class RaisingEq(str):
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("boom")

    def __hash__(self) -> int:
        raise RuntimeError("boom")


class RaisingDict(dict):  # type: ignore[type-arg]
    def __getitem__(self, key: Any) -> Any:
        raise RuntimeError("boom")

    def items(self) -> Any:
        raise RuntimeError("boom")


@pytest.mark.parametrize(
    "value",
    [
        None,
        1,
        "text",
        b"{}",
        [MESSAGE],
        (MESSAGE,),
        Unserialisable(),
        RaisingDict(version=1, messages=[]),
        {"version": 1, "messages": (MESSAGE,)},
        {"version": 1, "messages": [RaisingDict(MESSAGE)]},
        with_metadata(Unserialisable()),
        with_metadata({"when": datetime.now(UTC)}),
        with_metadata({"set": {1, 2}}),
        with_metadata({1: "non-string key"}),
        with_metadata({"f": lambda: None}),
        record({**MESSAGE, "role": RaisingEq("user")}),
        {"version": 1.5, "messages": []},
    ],
    ids=repr,
)
def test_hostile_values_are_refused_with_the_one_fixed_error(value: Any) -> None:
    assert_invalid(value)


def test_a_string_subclass_in_metadata_is_accepted_as_a_plain_string() -> None:
    # A str subclass is JSON text; what comes back must be plain data, not the host's object.
    result = validate_memory_record(record({**MESSAGE, "metadata": {"k": RaisingEq("v")}}))
    value = result["messages"][0]["metadata"]["k"]
    assert type(value) is str
    assert value == "v"


# --- projection and immutability -------------------------------------------------


def test_projection_drops_unknown_fields_and_orders_like_the_spec() -> None:
    message = {
        "metadata": {"z": 1, "a": {"keep": "all"}},
        "future": True,
        "toolCalls": [{"status": "complete", "args": {"q": 1}, "name": "n", "id": "c", "x": 1}],
        "createdAt": CREATED,
        "status": "complete",
        "content": "c",
        "role": "assistant",
        "id": "m",
        "parts": [{"detail": "low", "source": "s", "type": "image", "y": 2}],
    }
    result = validate_memory_record({"messages": [message], "version": 1, "extra": 1})
    assert list(result) == ["version", "messages"]
    wire = result["messages"][0]
    assert list(wire) == [
        "id",
        "role",
        "content",
        "status",
        "createdAt",
        "parts",
        "toolCalls",
        "metadata",
    ]
    assert wire["parts"] == [{"type": "image", "source": "s", "detail": "low"}]
    assert wire["toolCalls"] == [{"id": "c", "name": "n", "args": {"q": 1}, "status": "complete"}]
    assert wire["metadata"] == {"z": 1, "a": {"keep": "all"}}


def test_result_is_plain_json_and_independent_of_the_input() -> None:
    source = with_metadata({"list": [1, {"a": 2}]})
    before = copy.deepcopy(source)
    result = validate_memory_record(source)
    assert json.loads(json.dumps(result)) == result
    assert type(result["messages"]) is list
    assert type(result["messages"][0]["metadata"]["list"]) is list
    result["messages"][0]["metadata"]["list"].append(3)
    assert source == before
    source["messages"][0]["metadata"]["list"].append(4)
    assert result["messages"][0]["metadata"]["list"] == [1, {"a": 2}, 3]


def test_validated_models_are_deeply_immutable() -> None:
    parsed = require_memory_record(
        record(
            {**MESSAGE, "metadata": {"a": [1, {"b": 2}]}, "parts": [{"type": "text", "text": "t"}]}
        )
    )
    message = parsed.messages[0]
    assert isinstance(parsed.messages, tuple)
    assert isinstance(message.parts, tuple)
    metadata = message.metadata
    assert isinstance(metadata, FrozenJsonObject)
    with pytest.raises(TypeError):
        metadata["c"] = 1
    with pytest.raises(TypeError):
        metadata["a"][1]["b"] = 3
    with pytest.raises(TypeError):
        metadata.update(c=1)
    with pytest.raises(AttributeError):
        metadata["a"].append(1)  # a tuple
    with pytest.raises(Exception):  # noqa: B017 - pydantic's frozen-instance error
        message.content = "changed"  # type: ignore[misc]
    assert copy.deepcopy(metadata) is metadata
    assert message.to_wire()["metadata"] == {"a": [1, {"b": 2}]}


def test_explicit_nulls_are_not_absent_fields() -> None:
    for field in ("parts", "toolCalls", "toolCallId", "metadata"):
        assert_invalid(record({**MESSAGE, field: None}))
    assert_invalid(record({**MESSAGE, "parts": [{"type": "image", "source": "s", "detail": None}]}))
    assert_invalid(
        record(
            {
                **MESSAGE,
                "toolCalls": [
                    {"id": "c", "name": "n", "args": {}, "status": "complete", "result": None}
                ],
            }
        )
    )


@pytest.mark.parametrize("duration", [0, 0.0, 1, 2.5, 10**300])
def test_finite_non_negative_durations(duration: float) -> None:
    part = {"type": "video", "source": "s", "durationSec": duration}
    result = validate_memory_record(record({**MESSAGE, "parts": [part]}))
    assert result["messages"][0]["parts"][0]["durationSec"] == duration


def test_message_id_counts_js_chars() -> None:
    assert validate_memory_record(record({**MESSAGE, "id": "\U0001f600"}))
    assert_invalid(record({**MESSAGE, "id": ""}))


# --- helpers for the chat layer ------------------------------------------------------


def test_new_message_formats_datetimes() -> None:
    aware = datetime(2026, 7, 11, 5, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
    message = new_message("m1", "assistant", "Hi", "streaming", aware)
    assert isinstance(message, MemoryMessage)
    assert message.to_wire() == {
        "id": "m1",
        "role": "assistant",
        "content": "Hi",
        "status": "streaming",
        "createdAt": "2026-07-11T03:00:00.123Z",
    }
    assert new_message("m2", "user", "x", created_at=CREATED).created_at == CREATED
    assert new_message("m3", "user", "x").status == "complete"


def test_new_message_takes_optional_wire_fields_and_validates() -> None:
    message = new_message("m1", "tool", "", toolCallId="c1", metadata={"a": 1})
    assert message.to_wire()["toolCallId"] == "c1"
    with pytest.raises(ProtocolError):
        new_message("", "user", "x")
    with pytest.raises(ProtocolError):
        new_message("m", "robot", "x")  # type: ignore[arg-type]
    with pytest.raises(ProtocolError):
        new_message("m", "user", "x", created_at="2026-02-30T00:00:00.000Z")


def test_validate_memory_messages_wraps_a_bare_list() -> None:
    messages = validate_memory_messages([MESSAGE])
    assert messages[0].to_wire() == MESSAGE
    with pytest.raises(ProtocolError):
        validate_memory_messages({"0": MESSAGE})


# --- properties ------------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
json_like = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(json_like)
def test_arbitrary_values_never_raise_anything_but_protocol_error(value: Any) -> None:
    for candidate in (
        value,
        {"version": 1, "messages": value},
        record(value),
        with_metadata(value),
    ):
        try:
            validate_memory_record(candidate)
        except ProtocolError as error:
            assert (error.code, error.message) == (
                MEMORY_RECORD_ERROR_CODE,
                MEMORY_RECORD_ERROR_MESSAGE,
            )


texts = st.text(st.characters(codec=None), max_size=40)
finite_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
instants = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(2999, 12, 31), timezones=st.just(UTC)
)
parts = st.one_of(
    st.builds(lambda text: {"type": "text", "text": text}, texts),
    st.builds(
        lambda source, detail: {"type": "image", "source": source, "detail": detail},
        texts,
        st.sampled_from(["low", "high", "auto"]),
    ),
    st.builds(
        lambda source, duration: {"type": "audio", "source": source, "durationSec": duration},
        texts,
        st.floats(min_value=0, allow_infinity=False, allow_nan=False),
    ),
)
messages = st.builds(
    lambda id_, role, content, status, moment, part_list, metadata: {
        "id": id_,
        "role": role,
        "content": content,
        "status": status,
        "createdAt": moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z",
        "parts": part_list,
        "metadata": metadata,
    },
    texts.filter(bool),
    st.sampled_from(["user", "assistant", "system", "tool"]),
    texts,
    st.sampled_from(["pending", "streaming", "complete", "error"]),
    instants,
    st.lists(parts, max_size=3),
    st.dictionaries(st.text(max_size=8), finite_scalars, max_size=3),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(messages, max_size=4))
def test_valid_records_round_trip_and_are_idempotent(message_list: list[dict[str, Any]]) -> None:
    first = validate_memory_record(record(*message_list))
    assert first == record(*message_list)
    assert validate_memory_record(first) == first
    line = json.dumps(first, allow_nan=False)
    assert validate_memory_record(json.loads(line)) == first


def test_lone_surrogates_survive_in_keys_and_values() -> None:
    # Valid in JSON strings and in JavaScript; pydantic's JSON dump mode would mangle the keys.
    metadata = {"\ud800": "\udfff", "k": ["\ud83d", {"\udc00": 1}]}
    result = validate_memory_record(record({**MESSAGE, "metadata": metadata, "content": "\ud800"}))
    assert result["messages"][0]["metadata"] == metadata
    assert result["messages"][0]["content"] == "\ud800"
    args = {"\udfff": "x"}
    call = {"id": "c", "name": "n", "args": args, "status": "complete"}
    assert (
        validate_memory_record(record({**MESSAGE, "toolCalls": [call]}))["messages"][0][
            "toolCalls"
        ][0]["args"]
        == args
    )
