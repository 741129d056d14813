"""Ordered assistant content `agentskit.chat.content/1` (PROTOCOL.md 2)."""

import json
import time
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentskit_web.protocol import limits
from agentskit_web.protocol.component import ComponentFrame
from agentskit_web.protocol.content import (
    ASSISTANT_CONTENT_PREFIX,
    AssistantContentEncoder,
    AssistantContentReader,
    AssistantTextPart,
    decode_assistant_content,
    encode_assistant_content,
    is_assistant_content_candidate,
)
from agentskit_web.protocol.diagnostics import ContentResult, ProtocolError
from agentskit_web.protocol.text_metrics import js_length, split_text, utf8_length

P = ASSISTANT_CONTENT_PREFIX
MAX_BYTES = limits.ASSISTANT_CONTENT_MAX_BYTES
MAX_RECORDS = limits.ASSISTANT_CONTENT_MAX_RECORDS
MAX_TEXT = limits.ASSISTANT_CONTENT_TEXT_MAX_CHARS
MAX_TEXT_CODE_POINTS = limits.ASSISTANT_CONTENT_TEXT_MAX_CODE_POINTS
RECORD_LIMIT_MESSAGE = "Assistant content envelope exceeds its record limit."
BYTE_LIMIT_MESSAGE = "Assistant content envelope exceeds its safety limit."
FRAME: dict[str, Any] = {
    "protocol": "agentskit.chat.component",
    "version": 1,
    "type": "render",
    "componentKey": "source-list",
    "instanceId": "sources-1",
    "props": {"label": "Sources", "sources": [{"id": "s1", "title": "Install", "url": "/i"}]},
    "fallback": {"kind": "source-list", "summary": "Sources: Install."},
}
FIXED_MESSAGES = {
    "Assistant content envelope is invalid.",
    "Assistant content record is invalid.",
    "Assistant content envelope uses an unsupported version.",
    BYTE_LIMIT_MESSAGE,
    RECORD_LIMIT_MESSAGE,
}


def text(value: str) -> dict[str, str]:
    return {"kind": "text", "text": value}


def line(value: str) -> str:
    return json.dumps(text(value), separators=(",", ":"), ensure_ascii=False) + "\n"


def code_of(result: ContentResult) -> str | None:
    return None if result.diagnostic is None else result.diagnostic.code


# ---------------------------------------------------------------- decoder: envelope


def test_prefix_constant() -> None:
    assert P == "\x1eagentskit.chat.content/1\n"
    assert utf8_length(P) == 26


@pytest.mark.parametrize("partial", [P[:n] for n in range(1, len(P) + 1)])
def test_every_partial_prefix_is_inert(partial: str) -> None:
    assert decode_assistant_content(partial) == ContentResult(ok=True, parts=[], complete=False)


@pytest.mark.parametrize("value", ["", "plain text", " " + P, None, 1, [P], b"\x1e", {"a": 1}])
def test_non_candidates_are_envelope_invalid(value: Any) -> None:
    result = decode_assistant_content(value)
    assert result.diagnostic is not None
    assert result.diagnostic.to_wire() == {
        "code": "ASSISTANT_CONTENT_INVALID_RECORD",
        "message": "Assistant content envelope is invalid.",
        "retryable": False,
    }


def test_candidate_check() -> None:
    assert is_assistant_content_candidate("\x1e")
    assert is_assistant_content_candidate(P)
    assert not is_assistant_content_candidate("text")
    assert not is_assistant_content_candidate(json.dumps(FRAME))
    assert not is_assistant_content_candidate(None)


def test_unsupported_version_is_checked_before_the_byte_limit() -> None:
    other = "\x1eagentskit.chat.content/2\n" + "x" * (MAX_BYTES + 10)
    assert code_of(decode_assistant_content(other)) == "ASSISTANT_CONTENT_UNSUPPORTED_VERSION"


# ---------------------------------------------------------------- decoder: limits


def _content_of_exact_bytes(total: int) -> str:
    """Complete text records whose whole content is exactly `total` UTF-8 bytes."""
    encoder = AssistantContentEncoder()
    out = []
    overhead = len(line(""))  # 26 bytes around the text
    while True:
        room = total - encoder.bytes - (0 if encoder.records else len(P)) - overhead
        if room <= 0:
            break
        out.append(encoder.encode(text("a" * min(room, MAX_TEXT))))
    content = "".join(out)
    assert utf8_length(content) == total
    return content


def test_total_bytes_at_and_past_the_limit() -> None:
    at_limit = _content_of_exact_bytes(MAX_BYTES)
    result = decode_assistant_content(at_limit)
    assert result.ok and result.complete
    past = at_limit[: -len('"}\n')] + 'a"}\n'
    assert utf8_length(past) == MAX_BYTES + 1
    assert code_of(decode_assistant_content(past)) == "ASSISTANT_CONTENT_LIMIT_EXCEEDED"


def test_byte_limit_counts_the_unfinished_tail() -> None:
    at_limit = P + "x" * (MAX_BYTES - len(P))
    assert decode_assistant_content(at_limit) == ContentResult(ok=True, parts=[], complete=False)
    result = decode_assistant_content(at_limit + "x")
    assert result.diagnostic is not None
    assert result.diagnostic.message == BYTE_LIMIT_MESSAGE


def test_byte_limit_is_in_utf8_bytes_not_chars() -> None:
    content = "".join(
        AssistantContentEncoder().encode(text("😀" * 8192)) if i == 0 else line("😀" * 8192)
        for i in range(9)
    )
    assert js_length(content) < MAX_BYTES < utf8_length(content)
    assert code_of(decode_assistant_content(content)) == "ASSISTANT_CONTENT_LIMIT_EXCEEDED"


def test_lone_surrogates_count_three_bytes() -> None:
    room = MAX_BYTES - len(P)
    assert decode_assistant_content(P + "\ud800" * (room // 3)).ok
    assert not decode_assistant_content(P + "\ud800" * (room // 3 + 1)).ok


def test_records_at_and_past_the_limit() -> None:
    one = line("a")
    result = decode_assistant_content(P + one * MAX_RECORDS)
    assert result.ok and len(result.parts) == MAX_RECORDS and result.complete
    partial = decode_assistant_content(P + one * MAX_RECORDS + '{"kind":"te')
    assert partial.ok and len(partial.parts) == MAX_RECORDS and not partial.complete
    past = decode_assistant_content(P + one * (MAX_RECORDS + 1))
    assert code_of(past) == "ASSISTANT_CONTENT_LIMIT_EXCEEDED"
    assert past.diagnostic is not None and past.diagnostic.message == RECORD_LIMIT_MESSAGE
    empty_lines = decode_assistant_content(P + "\n" * (MAX_RECORDS + 1))
    assert code_of(empty_lines) == "ASSISTANT_CONTENT_LIMIT_EXCEEDED"
    assert empty_lines.diagnostic is not None
    assert empty_lines.diagnostic.message == RECORD_LIMIT_MESSAGE


def test_record_and_byte_limits_have_their_own_sentences() -> None:
    records = decode_assistant_content(P + line("a") * (MAX_RECORDS + 1))
    size = decode_assistant_content(P + "x" * MAX_BYTES)
    assert records.diagnostic is not None and size.diagnostic is not None
    assert records.diagnostic.code == size.diagnostic.code == "ASSISTANT_CONTENT_LIMIT_EXCEEDED"
    assert records.diagnostic.message == RECORD_LIMIT_MESSAGE
    assert size.diagnostic.message == BYTE_LIMIT_MESSAGE


def test_text_record_bound_counts_code_points() -> None:
    """The reference accepts 8,193 emoji (16,386 UTF-16 units) in one text record."""
    emoji = "😀" * 8_193
    assert js_length(emoji) == 16_386
    assert decode_assistant_content(P + line(emoji)).parts == [text(emoji)]
    assert decode_assistant_content(AssistantContentEncoder().encode(text(emoji))).parts == [
        text(emoji)
    ]


def test_text_record_code_points_at_and_past_the_limit() -> None:
    assert MAX_TEXT_CODE_POINTS == 16_384
    for at, past in [
        ("a" * MAX_TEXT_CODE_POINTS, "a" * (MAX_TEXT_CODE_POINTS + 1)),
        ("😀" * MAX_TEXT_CODE_POINTS, "😀" * (MAX_TEXT_CODE_POINTS + 1)),
        ("a" * (MAX_TEXT_CODE_POINTS - 1) + "😀", "a" * MAX_TEXT_CODE_POINTS + "😀"),
        # A pair kept as two surrogate items is one code point, as JavaScript iterates it.
        ("a" * (MAX_TEXT_CODE_POINTS - 1) + "\ud83d\ude00", "a" * MAX_TEXT_CODE_POINTS + "\ud83d"),
    ]:
        assert decode_assistant_content(P + line(at)).parts == [text(at)]
        assert code_of(decode_assistant_content(P + line(past))) == (
            "ASSISTANT_CONTENT_INVALID_RECORD"
        )
        with pytest.raises(ProtocolError) as error:
            AssistantContentEncoder().encode(text(past))
        assert error.value.code == "ASSISTANT_CONTENT_INVALID_RECORD"


# ---------------------------------------------------------------- decoder: records


def test_only_newline_splits_records() -> None:
    raw = "a\u2028b\u2029c\x85d\x0be"  # \x0b is invalid raw JSON: escape it
    encoded = P + '{"kind":"text","text":"a\u2028b\u2029c\x85d\\u000be"}\n'
    assert decode_assistant_content(encoded).parts == [text(raw)]
    assert raw.splitlines() != [raw]  # what splitlines() would have done


def test_raw_control_characters_in_strings_are_invalid_json() -> None:
    for control in ("\x1e", "\x1c", "\x1d", "\x1f", "\x0c", "\x00"):
        content = P + '{"kind":"text","text":"a' + control + 'b"}\n'
        assert code_of(decode_assistant_content(content)) == "ASSISTANT_CONTENT_INVALID_RECORD"


def test_unfinished_trailing_record_is_never_validated() -> None:
    good = P + line("a")
    for tail in ('{"kind":"text","text":""}', "garbage", "[" * 1000, '{"kind":"text","text":1'):
        assert decode_assistant_content(good + tail) == ContentResult(
            ok=True, parts=[text("a")], complete=False
        )
        assert code_of(decode_assistant_content(good + tail + "\n")) == (
            "ASSISTANT_CONTENT_INVALID_RECORD"
        )


def test_component_records_are_fully_validated() -> None:
    good = P + json.dumps({"kind": "component", "frame": FRAME}) + "\n"
    assert decode_assistant_content(good).parts == [{"kind": "component", "frame": FRAME}]
    for frame in (
        {**FRAME, "version": 2},
        {**FRAME, "props": json.loads("[" * 22 + "]" * 22)},
        {**FRAME, "fallback": {"kind": "k", "summary": "s" * 4097}},
        {k: v for k, v in FRAME.items() if k != "instanceId"},
    ):
        bad = P + json.dumps({"kind": "component", "frame": frame}) + "\n"
        assert code_of(decode_assistant_content(bad)) == "ASSISTANT_CONTENT_INVALID_RECORD"


def test_hostile_records_give_a_diagnostic_quickly() -> None:
    started = time.perf_counter()
    brackets = P + "[" * 100_000 + "]" * 100_000 + "\n"
    assert code_of(decode_assistant_content(brackets)) == "ASSISTANT_CONTENT_INVALID_RECORD"
    objects = P + '{"a":' * 40_000 + "1" + "}" * 40_000 + "\n"
    assert code_of(decode_assistant_content(objects)) == "ASSISTANT_CONTENT_INVALID_RECORD"
    digits = P + '{"kind":"text","text":"a","n":' + "9" * 5000 + "}\n"
    assert code_of(decode_assistant_content(digits)) == "ASSISTANT_CONTENT_INVALID_RECORD"
    fraction = P + '{"kind":"text","text":"a","n":1.' + "5" * 5000 + "}\n"
    assert code_of(decode_assistant_content(fraction)) == "ASSISTANT_CONTENT_INVALID_RECORD"
    many = P + ("[" * 60 + "]" * 60 + "\n") * 512
    assert code_of(decode_assistant_content(many)) == "ASSISTANT_CONTENT_INVALID_RECORD"
    assert time.perf_counter() - started < 2.0


def test_decoder_survives_hostile_string_subclasses() -> None:
    class Weird(str):
        def startswith(self, *args: Any) -> bool:
            raise RuntimeError("blocked")

        def split(self, *args: Any) -> Any:
            raise RuntimeError("blocked")

    result = decode_assistant_content(Weird(P + line("a")))
    assert result.parts == [text("a")]


# ---------------------------------------------------------------- encoder


def test_encoder_writes_the_prefix_once_and_tracks_totals() -> None:
    encoder = AssistantContentEncoder()
    first = encoder.encode(text("Hello\n"))
    second = encoder.encode({"kind": "component", "frame": FRAME})
    assert first == P + '{"kind":"text","text":"Hello\\n"}\n'
    assert not second.startswith(P)
    assert encoder.records == 2
    assert encoder.bytes == utf8_length(first + second)
    assert encoder.remaining_records == MAX_RECORDS - 2
    assert encoder.remaining_bytes == MAX_BYTES - encoder.bytes
    decoded = decode_assistant_content(first + second)
    assert decoded.parts == [text("Hello\n"), {"kind": "component", "frame": FRAME}]


def test_encoder_accepts_models() -> None:
    frame = ComponentFrame.model_validate(FRAME)
    encoder = AssistantContentEncoder()
    content = encoder.encode(AssistantTextPart.model_validate(text("a")))
    content += encoder.encode({"kind": "component", "frame": frame})
    assert decode_assistant_content(content).parts == [
        text("a"),
        {"kind": "component", "frame": FRAME},
    ]


@pytest.mark.parametrize(
    "part",
    [
        text(""),
        {"kind": "text"},
        {"kind": "text", "text": None},
        {"kind": "text", "text": 1},
        {"kind": "other", "text": "a"},
        {"kind": "component", "frame": {**FRAME, "version": 2}},
        {"kind": "component", "frame": json.dumps(FRAME)},
        "raw model output",
        None,
        [text("a")],
    ],
)
def test_encoder_rejects_invalid_parts_without_side_effects(part: Any) -> None:
    encoder = AssistantContentEncoder()
    with pytest.raises(ProtocolError) as error:
        encoder.encode(part)
    assert error.value.code == "ASSISTANT_CONTENT_INVALID_RECORD"
    assert error.value.message == "Assistant content record is invalid."
    assert (encoder.records, encoder.bytes) == (0, 0)
    assert encoder.encode(text("a")).startswith(P)


def test_encoder_record_limit() -> None:
    encoder = AssistantContentEncoder()
    content = "".join(encoder.encode(text("a")) for _ in range(MAX_RECORDS))
    assert encoder.records == MAX_RECORDS
    assert encoder.would_exceed(text("a"))
    with pytest.raises(ProtocolError) as error:
        encoder.encode(text("a"))
    assert error.value.code == "ASSISTANT_CONTENT_LIMIT_EXCEEDED"
    assert error.value.message == RECORD_LIMIT_MESSAGE
    assert encoder.records == MAX_RECORDS
    assert decode_assistant_content(content).ok


def test_encoder_byte_limit_refuses_without_writing() -> None:
    encoder = AssistantContentEncoder()
    parts = []
    while not encoder.would_exceed(text("a" * MAX_TEXT)):
        parts.append(encoder.encode(text("a" * MAX_TEXT)))
    room = encoder.remaining_bytes - len(line(""))
    assert room > 0
    before = (encoder.records, encoder.bytes)
    with pytest.raises(ProtocolError) as error:
        encoder.encode(text("a" * (room + 1)))
    assert error.value.code == "ASSISTANT_CONTENT_LIMIT_EXCEEDED"
    assert error.value.message == BYTE_LIMIT_MESSAGE
    assert (encoder.records, encoder.bytes) == before
    assert not encoder.would_exceed(text("a" * room))
    parts.append(encoder.encode(text("a" * room)))
    assert encoder.bytes == MAX_BYTES == utf8_length("".join(parts))
    assert decode_assistant_content("".join(parts)).ok
    with pytest.raises(ProtocolError):
        encoder.encode(text("a"))


def test_first_part_too_big_writes_no_prefix() -> None:
    encoder = AssistantContentEncoder()
    big = {**FRAME, "props": ["x" * 16_000] * 20}
    with pytest.raises(ProtocolError) as error:
        encoder.encode({"kind": "component", "frame": big})
    assert error.value.code == "ASSISTANT_CONTENT_LIMIT_EXCEEDED"
    assert encoder.encode(text("a")).startswith(P)


def test_would_exceed_raises_on_invalid_parts() -> None:
    with pytest.raises(ProtocolError):
        AssistantContentEncoder().would_exceed(text(""))


def test_encode_text_splits_long_text_all_or_nothing() -> None:
    encoder = AssistantContentEncoder()
    long_text = "a" * (MAX_TEXT - 1) + "😀" + "b" * 10
    content = encoder.encode_text(long_text)
    parts = decode_assistant_content(content).parts
    assert [len(p["text"]) for p in parts] == [MAX_TEXT - 1, 11]  # the emoji is not split
    assert "".join(p["text"] for p in parts) == long_text
    assert encoder.encode_text("") == ""
    before = (encoder.records, encoder.bytes)
    with pytest.raises(ProtocolError):
        encoder.encode_text("x" * MAX_BYTES)
    assert (encoder.records, encoder.bytes) == before


def test_split_text() -> None:
    assert split_text("", 4) == []
    assert split_text("abc", 2) == ["ab", "c"]
    assert split_text("abcd", 4) == ["abcd"]  # at the limit: one piece
    assert split_text("abcde", 4) == ["abcd", "e"]  # one past it: two
    assert split_text("a😀b", 3) == ["a😀", "b"]  # a pair fits exactly at the limit
    assert split_text("ab😀", 3) == ["ab", "😀"]  # ... and is never cut one past it
    assert split_text("a😀", 2) == ["a", "😀"]
    assert split_text("😀😀", 1) == ["😀", "😀"]  # never empty chunks, even if over


def test_encode_assistant_content_helper() -> None:
    assert encode_assistant_content([]) == ""
    assert encode_assistant_content([text("a"), text("b")]) == P + line("a") + line("b")


# ---------------------------------------------------------------- properties


def as_js(value: str) -> str:
    """The same UTF-16 string as JavaScript sees it: a high+low surrogate pair of
    Python code points is one astral character once JSON-escaped and parsed."""
    return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


hostile_alphabet = st.sampled_from(
    [
        "\n",
        "\r",
        "\x1e",
        "\x1c",
        "\x1d",
        "\x85",
        "\u2028",
        "\u2029",
        "\ufeff",
        "\ud800",
        "\udfff",
        "😀",
        '"',
        "\\",
        "{",
        "}",
        P,
        '{"kind":"component","frame":{}}\n',
        '{"kind":"text","text":"x"}',
        "\\u001e",
        "a",
        " ",
    ]
)
hostile_text = st.one_of(
    st.text(min_size=1, max_size=60),
    st.lists(hostile_alphabet, min_size=1, max_size=30).map("".join),
    st.text(alphabet=st.characters(codec=None, categories=None), min_size=1, max_size=40),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(hostile_text, min_size=1, max_size=8))
def test_encoder_round_trips_hostile_text(texts: list[str]) -> None:
    encoder = AssistantContentEncoder()
    chunks = [encoder.encode(text(value)) for value in texts]
    for index, chunk in enumerate(chunks):
        record = chunk[len(P) :] if index == 0 else chunk
        if index == 0:
            assert chunk.startswith(P)
        assert record.endswith("\n") and record.count("\n") == 1
        assert json.loads(record.encode("utf-8")) == text(as_js(texts[index]))
    content = "".join(chunks)
    assert decode_assistant_content(content) == ContentResult(
        ok=True, parts=[text(as_js(v)) for v in texts], complete=True
    )
    assert encoder.bytes == utf8_length(content)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), st.text(max_size=200).map(lambda s: P + s)))
def test_decoder_never_raises_on_text(value: str) -> None:
    result = decode_assistant_content(value)
    if result.ok:
        assert all(set(part) in ({"kind", "text"}, {"kind", "frame"}) for part in result.parts)
    else:
        assert result.diagnostic is not None
        assert result.diagnostic.message in FIXED_MESSAGES


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_decoder_never_raises_on_objects(value: Any) -> None:
    result = decode_assistant_content(value)
    assert result.ok is False
    assert result.diagnostic is not None and result.diagnostic.message in FIXED_MESSAGES


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=30))
def test_diagnostics_never_contain_payload(secret: str) -> None:
    marker = "SECRET<" + secret + ">"
    for value in (
        marker,
        P + marker + "\n",
        P + json.dumps({"kind": "text", "text": marker, "n": float("nan")}) + "\n",
        P + json.dumps({"kind": marker, "text": "a"}) + "\n",
        "\x1eagentskit.chat.content/" + marker + "\n",
    ):
        result = decode_assistant_content(value)
        assert result.diagnostic is not None
        assert marker not in json.dumps(result.diagnostic.to_wire())


# ---------------------------------------------------------------- incremental reader

stream_content = st.builds(
    lambda parts, garbage: encode_assistant_content(parts) + garbage,
    st.lists(
        st.one_of(
            hostile_text.map(text),
            st.just({"kind": "component", "frame": FRAME}),
        ),
        max_size=6,
    ),
    st.one_of(
        st.just(""),
        st.sampled_from(["\n", "{bad}\n", '{"kind":"te', "\n\n", "[1]\n", "x", "\x1c\n"]),
        st.text(max_size=20),
    ),
)
any_content = st.one_of(
    stream_content,
    st.text(max_size=80),
    st.text(max_size=60).map(lambda s: P[: len(s) % (len(P) + 1)] + s),
    st.sampled_from(["", "\x1e", "\x1eagentskit.chat.content/2\n", "\x1eagentskit.chat.c"]),
)


def _cuts(content: str, points: list[int]) -> list[str]:
    edges = sorted({0, len(content), *(p % (len(content) + 1) for p in points)})
    return [content[a:b] for a, b in pairwise(edges)]


@settings(max_examples=400, deadline=None)
@given(any_content, st.lists(st.integers(min_value=0, max_value=10_000), max_size=12))
def test_reader_feed_matches_decoder_on_every_prefix(content: str, points: list[int]) -> None:
    reader = AssistantContentReader()
    seen = ""
    collected: list[dict[str, Any]] = []
    for chunk in _cuts(content, points):
        seen += chunk
        delta = reader.feed(chunk)
        expected = decode_assistant_content(seen)
        assert reader.result == expected
        assert delta.ok == expected.ok
        assert delta.diagnostic == expected.diagnostic
        if delta.ok:
            collected.extend(delta.new_parts)
            assert collected == expected.parts
            assert delta.complete == expected.complete
        else:
            collected = []


@settings(max_examples=200, deadline=None)
@given(any_content)
def test_reader_update_char_by_char_matches_decoder(content: str) -> None:
    reader = AssistantContentReader()
    for end in range(len(content) + 1):
        prefix = content[:end]
        delta = reader.update(prefix)
        assert reader.result == decode_assistant_content(prefix)
        assert delta.reset is (end == 0)


def test_reader_update_resets_on_a_new_string() -> None:
    reader = AssistantContentReader()
    first = encode_assistant_content([text("a"), text("b")])
    assert [p["text"] for p in reader.update(first).new_parts] == ["a", "b"]
    assert reader.update(first).new_parts == ()
    regenerated = encode_assistant_content([text("c")])
    delta = reader.update(regenerated)
    assert delta.reset and delta.new_parts == (text("c"),)
    assert reader.parts == (text("c"),)


def test_reader_limits_match_decoder() -> None:
    reader = AssistantContentReader()
    reader.feed(P)
    for _ in range(MAX_RECORDS):
        reader.feed(line("a"))
    assert reader.result.ok and len(reader.parts) == MAX_RECORDS
    delta = reader.feed(line("a"))
    assert delta.diagnostic is not None
    assert delta.diagnostic.code == "ASSISTANT_CONTENT_LIMIT_EXCEEDED"
    assert delta.diagnostic.message == RECORD_LIMIT_MESSAGE
    assert reader.parts == ()
    bytes_reader = AssistantContentReader()
    bytes_reader.feed(P + "{bad}\n")
    assert code_of(bytes_reader.result) == "ASSISTANT_CONTENT_INVALID_RECORD"
    bytes_reader.feed("x" * MAX_BYTES)
    assert code_of(bytes_reader.result) == "ASSISTANT_CONTENT_LIMIT_EXCEEDED"


def test_reader_handles_empty_then_content() -> None:
    reader = AssistantContentReader()
    assert not reader.feed("").ok  # "" does not start with \x1e, as in the decoder
    assert code_of(reader.result) == "ASSISTANT_CONTENT_INVALID_RECORD"
    assert reader.feed("\x1e").ok
    assert reader.feed(P[1:] + line("a")).new_parts == (text("a"),)


def test_reader_non_string_is_inert() -> None:
    reader = AssistantContentReader()
    delta = reader.feed(5)  # type: ignore[arg-type]
    assert not delta.ok
    assert reader.result == decode_assistant_content(5)


def test_reader_is_linear_on_a_large_stream() -> None:
    """Feeding a 256 KiB message one small chunk at a time stays fast (no re-decoding)."""
    content = encode_assistant_content([text("word " * 3000)] * 16)
    assert utf8_length(content) < MAX_BYTES
    reader = AssistantContentReader()
    started = time.perf_counter()
    for start in range(0, len(content), 7):
        reader.feed(content[start : start + 7])
    assert time.perf_counter() - started < 2.0
    assert reader.result == decode_assistant_content(content)
