"""Component frames, events, bounded JSON and the semantic fallback (PROTOCOL.md 3)."""

import json
import math
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from agentskit_web.protocol import limits
from agentskit_web.protocol.component import (
    ComponentFrame,
    ComponentInteraction,
    ComponentSelection,
    create_interaction_event,
    create_selection_event,
    decode_component_event,
    decode_component_frame,
    fallback_text,
    is_bounded_json,
)
from agentskit_web.protocol.diagnostics import ProtocolError

FRAME: dict[str, Any] = {
    "protocol": "agentskit.chat.component",
    "version": 1,
    "type": "render",
    "componentKey": "choice-list",
    "instanceId": "destination-choice",
    "props": {"prompt": "Where?", "choices": [{"id": "docs", "label": "Docs"}]},
    "fallback": {"kind": "choice-list", "summary": "Choose Docs."},
}
FIXED_FRAME_MESSAGES = {
    "Component frame is not valid JSON.",
    "Component frame payload is invalid.",
    "Component frame uses an unsupported version.",
    "Component frame type is unknown.",
}


def nest(levels: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(levels):
        value = [value]
    return value


def nest_objects(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"child": value}
    return value


# ---------------------------------------------------------------- bounded JSON


def test_bounded_json_depth_at_and_past_the_limit() -> None:
    assert is_bounded_json(nest(limits.BOUNDED_JSON_MAX_DEPTH))
    assert not is_bounded_json(nest(limits.BOUNDED_JSON_MAX_DEPTH + 1))
    assert is_bounded_json(nest_objects(limits.BOUNDED_JSON_MAX_DEPTH))
    assert not is_bounded_json(nest_objects(limits.BOUNDED_JSON_MAX_DEPTH + 1))


def test_bounded_json_nodes_at_and_past_the_limit() -> None:
    nodes = limits.BOUNDED_JSON_MAX_NODES
    assert is_bounded_json([0] * (nodes - 1))  # the array itself is a node
    assert not is_bounded_json([0] * nodes)
    assert is_bounded_json({f"k{i}": None for i in range(nodes - 1)})
    assert not is_bounded_json({f"k{i}": None for i in range(nodes)})
    spread = [[0] * 9 for _ in range(99)] + [[0] * 8]  # 1 + 100 + 99*9 + 8 = 1000
    assert is_bounded_json(spread)
    spread[-1].append(0)
    assert not is_bounded_json(spread)


def test_bounded_json_strings_in_utf16_units() -> None:
    cap = limits.BOUNDED_JSON_MAX_STRING_CHARS
    assert is_bounded_json("a" * cap)
    assert not is_bounded_json("a" * (cap + 1))
    assert is_bounded_json("😀" * (cap // 2))
    assert not is_bounded_json("😀" * (cap // 2) + "a")
    assert not is_bounded_json(["😀" * (cap // 2 + 1)])


def test_bounded_json_keys_in_utf16_units() -> None:
    cap = limits.BOUNDED_JSON_MAX_KEY_CHARS
    assert is_bounded_json({"k" * cap: 1})
    assert not is_bounded_json({"k" * (cap + 1): 1})
    assert is_bounded_json({"😀" * (cap // 2): 1})
    assert not is_bounded_json({"😀" * (cap // 2) + "k": 1})


@pytest.mark.parametrize(
    "value",
    [math.nan, math.inf, -math.inf, [1.0, math.nan], {"n": math.inf}, 10**400],
)
def test_bounded_json_refuses_non_finite_numbers(value: Any) -> None:
    assert not is_bounded_json(value)


class _Raising(dict[str, Any]):
    def items(self) -> Any:
        raise RuntimeError("blocked")

    def __iter__(self) -> Any:
        raise RuntimeError("blocked")


@pytest.mark.parametrize(
    "value",
    [
        (1, 2),
        {1, 2},
        b"bytes",
        object(),
        {1: "non-string key"},
        _Raising(),
        [_Raising()],
        lambda: None,
    ],
)
def test_bounded_json_refuses_non_json_values(value: Any) -> None:
    assert not is_bounded_json(value)


def test_bounded_json_refuses_cycles() -> None:
    cyclic_list: list[Any] = []
    cyclic_list.append(cyclic_list)
    cyclic_dict: dict[str, Any] = {}
    cyclic_dict["self"] = cyclic_dict
    assert not is_bounded_json(cyclic_list)
    assert not is_bounded_json(cyclic_dict)
    assert not is_bounded_json({"a": [cyclic_dict]})


def test_bounded_json_accepts_plain_values() -> None:
    for value in (None, True, False, 0, -1.5, "", "x", [], {}, {"a": [1, {"b": None}]}):
        assert is_bounded_json(value)


# ---------------------------------------------------------------- frames


def test_decode_valid_frame_from_dict_text_and_bytes() -> None:
    text = json.dumps(FRAME)
    for data in (FRAME, text, text.encode()):
        result = decode_component_frame(data)
        assert result.ok
        assert isinstance(result.frame, ComponentFrame)
        assert result.frame.to_wire() == FRAME


def test_frame_drops_additive_fields() -> None:
    result = decode_component_frame(
        {**FRAME, "future": 1, "fallback": {**FRAME["fallback"], "x": 2}}
    )
    assert result.ok
    assert result.frame.to_wire() == FRAME


def test_frame_props_are_a_private_copy() -> None:
    source = json.loads(json.dumps(FRAME))
    frame = decode_component_frame(source).frame
    source["props"]["choices"].append({"id": "evil", "label": "Evil"})
    source["props"]["prompt"] = "changed"
    assert frame.to_wire() == FRAME


def test_frame_is_frozen() -> None:
    frame = decode_component_frame(FRAME).frame
    with pytest.raises(ValidationError):
        frame.instance_id = "other"


@pytest.mark.parametrize("version", ["1", True, None, [1], {"v": 1}])
def test_version_is_never_coerced(version: Any) -> None:
    result = decode_component_frame({**FRAME, "version": version})
    assert result.diagnostic.code == "COMPONENT_INVALID_FRAME"
    with pytest.raises(ValidationError):
        ComponentFrame.model_validate({**FRAME, "version": version})


@pytest.mark.parametrize("version", [2, 0, -1, 1.5, 10**30, math.nan, math.inf])
def test_numeric_other_version_is_unsupported(version: Any) -> None:
    result = decode_component_frame({**FRAME, "version": version})
    assert result.diagnostic.to_wire() == {
        "code": "COMPONENT_UNSUPPORTED_VERSION",
        "message": "Component frame uses an unsupported version.",
        "retryable": False,
    }


def test_version_missing_with_unknown_type_is_unknown_type() -> None:
    # Reference order: within this protocol, the type check precedes the schema.
    frame = {k: v for k, v in FRAME.items() if k != "version"}
    assert decode_component_frame({**frame, "type": "future"}).diagnostic.code == (
        "COMPONENT_UNKNOWN_TYPE"
    )
    assert decode_component_frame(frame).diagnostic.code == "COMPONENT_INVALID_FRAME"


def test_other_protocol_is_not_triaged() -> None:
    other = {**FRAME, "protocol": "agentskit.chat.turn", "version": 9, "type": "x"}
    assert decode_component_frame(other).diagnostic.code == "COMPONENT_INVALID_FRAME"


def test_model_validate_is_strict() -> None:
    with pytest.raises(ValidationError):
        ComponentFrame.model_validate({**FRAME, "instanceId": 5})
    with pytest.raises(ValidationError):
        ComponentFrame.model_validate({**FRAME, "fallback": {"kind": 1, "summary": "s"}})


def test_fallback_bounds() -> None:
    kind_cap = limits.COMPONENT_FALLBACK_KIND_MAX_CHARS
    summary_cap = limits.COMPONENT_FALLBACK_SUMMARY_MAX_CHARS
    for fallback, ok in [
        ({"kind": "k" * kind_cap, "summary": "s"}, True),
        ({"kind": "k" * (kind_cap + 1), "summary": "s"}, False),
        ({"kind": "😀" * (kind_cap // 2), "summary": "s"}, True),
        ({"kind": "😀" * (kind_cap // 2) + "k", "summary": "s"}, False),
        ({"kind": "k", "summary": "s" * summary_cap}, True),
        ({"kind": "k", "summary": "s" * (summary_cap + 1)}, False),
        ({"kind": "k", "summary": "😀" * (summary_cap // 2) + "s"}, False),
        ({"kind": "", "summary": "s"}, False),
        ({"kind": "k", "summary": ""}, False),
        ({"kind": "k"}, False),
    ]:
        assert decode_component_frame({**FRAME, "fallback": fallback}).ok is ok


def test_identity_bounds() -> None:
    assert decode_component_frame({**FRAME, "componentKey": "a" * 64}).ok
    assert not decode_component_frame({**FRAME, "componentKey": "a" * 65}).ok
    assert decode_component_frame({**FRAME, "instanceId": "i" * 128}).ok
    assert not decode_component_frame({**FRAME, "instanceId": "i" * 129}).ok
    assert not decode_component_frame({**FRAME, "instanceId": "id\n"}).ok
    assert not decode_component_frame({**FRAME, "componentKey": "choice-list\n"}).ok


def test_props_breaches_are_invalid_frames() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    for props in (
        cyclic,
        nest(limits.BOUNDED_JSON_MAX_DEPTH + 1),
        [0] * limits.BOUNDED_JSON_MAX_NODES,
        {"f": lambda: None},
        {"n": math.nan},
        (1, 2),
    ):
        assert decode_component_frame({**FRAME, "props": props}).diagnostic.code == (
            "COMPONENT_INVALID_FRAME"
        )
    assert decode_component_frame({**FRAME, "props": nest(limits.BOUNDED_JSON_MAX_DEPTH)}).ok


def test_props_in_text_within_nesting() -> None:
    text = json.dumps({**FRAME, "props": nest(20)})
    assert decode_component_frame(text).ok
    assert not decode_component_frame(json.dumps({**FRAME, "props": nest(21)})).ok


def test_javascript_url_in_props_is_fine_at_frame_level() -> None:
    assert decode_component_frame({**FRAME, "props": {"href": "javascript:alert(1)"}}).ok


def test_duplicate_keys_in_text_never_win() -> None:
    text = json.dumps(FRAME)[:-1] + ', "componentKey": "form"}'
    result = decode_component_frame(text)
    assert result.diagnostic.message == "Component frame is not valid JSON."


def test_hostile_inputs_never_raise() -> None:
    class Hostile(dict[str, Any]):
        def get(self, *args: Any) -> Any:
            raise RuntimeError("blocked")

        def __getitem__(self, key: str) -> Any:
            raise RuntimeError("blocked")

    class WeirdStr(str):
        def __eq__(self, other: object) -> bool:
            raise RuntimeError("blocked")

        __hash__ = str.__hash__

    for data in (
        Hostile(FRAME),
        {**FRAME, "protocol": WeirdStr("agentskit.chat.component")},
        {**FRAME, "type": WeirdStr("render")},
        None,
        0,
        [],
        object(),
        bytearray(b"{"),
        memoryview(b"{}"),
    ):
        result = decode_component_frame(data)
        assert result.ok is False
        assert result.diagnostic.message in FIXED_FRAME_MESSAGES


def test_huge_inputs_give_a_diagnostic_quickly() -> None:
    started = time.perf_counter()
    brackets = "[" * 100_000 + "]" * 100_000
    assert not decode_component_frame(brackets).ok
    props_brackets = json.dumps(FRAME).replace('"props": {', '"props": {"x": ' + brackets + ", ")
    assert not decode_component_frame(props_brackets).ok
    digits = json.dumps(FRAME).replace('"props": {', '"props": {"n": ' + "9" * 5000 + ", ")
    assert not decode_component_frame(digits).ok
    floats = json.dumps(FRAME).replace('"props": {', '"props": {"n": 0.' + "1" * 5000 + ", ")
    assert not decode_component_frame(floats).ok
    assert time.perf_counter() - started < 2.0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        json_values,
        st.text(max_size=200),
        st.binary(max_size=200),
        st.fixed_dictionaries({}, optional={k: json_values for k in FRAME}),
        st.builds(
            lambda extra: {**FRAME, **extra},
            st.dictionaries(st.sampled_from(list(FRAME)), json_values, max_size=3),
        ),
    )
)
def test_decoder_never_raises(data: Any) -> None:
    result = decode_component_frame(data)
    if result.ok:
        assert isinstance(result.frame, ComponentFrame)
        assert is_bounded_json(result.frame.to_wire()["props"])
    else:
        assert result.diagnostic.message in FIXED_FRAME_MESSAGES


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=1, max_size=40).filter(lambda s: s.strip() != ""))
def test_diagnostics_never_contain_payload(secret: str) -> None:
    marker = "SECRET " + secret  # never a valid id or key
    for data in (
        {**FRAME, "componentKey": marker},
        {**FRAME, "version": 2, "x": marker},
        {**FRAME, "type": marker},
        {**FRAME, "props": {marker: [math.nan]}},
        "{" + marker,
        json.dumps({**FRAME, "instanceId": marker}),
    ):
        diagnostic = decode_component_frame(data).diagnostic
        assert diagnostic is not None
        assert marker not in diagnostic.message
        assert marker not in json.dumps(diagnostic.to_wire())


# ---------------------------------------------------------------- events

SELECT = {
    "protocol": "agentskit.chat.component",
    "version": 1,
    "type": "select",
    "componentKey": "choice-list",
    "instanceId": "destination-choice",
    "choiceId": "docs",
}
INTERACT = {
    "protocol": "agentskit.chat.component",
    "version": 1,
    "type": "interact",
    "componentKey": "form",
    "instanceId": "f1",
    "event": "submit",
    "value": {"email": "ada@example.com"},
}


def test_decode_selection_and_interaction() -> None:
    selection = decode_component_event(json.dumps(SELECT))
    assert isinstance(selection.event, ComponentSelection)
    assert selection.event.to_wire() == SELECT
    interaction = decode_component_event(INTERACT)
    assert isinstance(interaction.event, ComponentInteraction)
    assert interaction.event.to_wire() == INTERACT


def test_interaction_value_absent_and_null_differ() -> None:
    without = {k: v for k, v in INTERACT.items() if k != "value"}
    assert decode_component_event(without).event.to_wire() == without
    with_null = {**INTERACT, "value": None}
    assert decode_component_event(with_null).event.to_wire() == with_null


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ({**SELECT, "version": 2}, "COMPONENT_UNSUPPORTED_VERSION"),
        ({**SELECT, "type": "render"}, "COMPONENT_UNKNOWN_TYPE"),
        ({**SELECT, "type": "future"}, "COMPONENT_UNKNOWN_TYPE"),
        ({**SELECT, "choiceId": "bad id"}, "COMPONENT_INVALID_EVENT"),
        ({**SELECT, "version": "1"}, "COMPONENT_INVALID_EVENT"),
        ({**INTERACT, "event": "Bad Event"}, "COMPONENT_INVALID_EVENT"),
        ({**INTERACT, "value": {"n": math.nan}}, "COMPONENT_INVALID_EVENT"),
        ({**INTERACT, "value": nest(21)}, "COMPONENT_INVALID_EVENT"),
        ("{", "COMPONENT_INVALID_EVENT"),
        (None, "COMPONENT_INVALID_EVENT"),
    ],
)
def test_event_failures(data: Any, code: str) -> None:
    result = decode_component_event(data)
    assert result.ok is False
    assert result.diagnostic.code == code


def test_create_events_from_a_frame() -> None:
    frame = decode_component_frame(FRAME).frame
    assert create_selection_event(frame, "docs").to_wire() == {
        **SELECT,
        "componentKey": "choice-list",
    }
    event = create_interaction_event({**FRAME, "componentKey": "form"}, "submit", {"a": 1})
    assert event.to_wire()["value"] == {"a": 1}
    assert "value" not in create_interaction_event(frame, "retry").to_wire()
    for bad in (
        lambda: create_selection_event(frame, "bad id"),
        lambda: create_interaction_event(frame, "Bad Event"),
        lambda: create_interaction_event(frame, "select", {"f": lambda: None}),
        lambda: create_selection_event({**FRAME, "version": 2}, "docs"),
    ):
        with pytest.raises(ProtocolError):
            bad()


def test_fallback_text() -> None:
    frame = decode_component_frame(FRAME).frame
    assert fallback_text(frame) == "[unsupported visual: choice-list] Choose Docs."
    assert fallback_text(FRAME) == "[unsupported visual: choice-list] Choose Docs."
    html = {**FRAME, "fallback": {"kind": "<b>", "summary": "<script>x</script>"}}
    assert fallback_text(html) == "[unsupported visual: <b>] <script>x</script>"
    with pytest.raises(ProtocolError):
        fallback_text({**FRAME, "fallback": {}})
