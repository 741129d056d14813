"""Ask NDJSON decoding: chunk-boundary independence, bounds at and past each limit, no raising.

The Hypothesis properties are the heart of this file: a stream split at any
byte positions (inside multi-byte UTF-8, inside CRLF, right after RS, inside
a \\uXXXX escape) decodes to exactly the events of the unsplit stream.
"""

import itertools
import json
import time
import tracemalloc
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentskit_web.protocol import AskEventDecoder, decode_ask_events
from agentskit_web.protocol.limits import (
    ASK_LINE_MAX_BYTES,
    ASK_MAX_RECORDS_PER_DECODE,
    ASK_PARTIAL_LINE_MAX_BYTES,
)

DONE = {"type": "done"}
DONE_LINE = '{"type":"done"}'


def line(event: dict[str, Any]) -> str:
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False)


def text_line_of_bytes(size: int) -> str:
    """A valid text-event line (no newline) of exactly `size` UTF-8 bytes."""
    overhead = len(line({"type": "text", "delta": ""}))
    return line({"type": "text", "delta": "a" * (size - overhead)})


def decode_stream(chunks: list[bytes] | list[str]) -> list[dict[str, Any]]:
    decoder = AskEventDecoder()
    events: list[dict[str, Any]] = []
    for chunk in chunks:
        events.extend(decoder.feed(chunk))
    events.extend(decoder.finish())
    return events


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(max(cut, 0), len(data)) for cut in cuts})
    edges = [0, *points, len(data)]
    return [data[start:end] for start, end in itertools.pairwise(edges)]


# ---------------------------------------------------------------------------
# Strategy: Ask-like byte streams full of the characters that break decoders.

_TRICKY_TEXT = st.text(
    alphabet=st.sampled_from(
        ["a", " ", "é", "€", "😀", "日", "\u2028", "\u2029", "\x85", "\x1e", '"', "\\", "\ufeff"]
    ),
    max_size=12,
)


def _valid_event() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.builds(lambda d: {"type": "text", "delta": d}, _TRICKY_TEXT),
        st.builds(
            lambda i, n, v: {"type": "tool", "id": i, "name": n, "args": {"k": v, n: [v]}},
            _TRICKY_TEXT,
            _TRICKY_TEXT,
            _TRICKY_TEXT,
        ),
        st.just(DONE),
        st.builds(lambda m: {"type": "done", "model": m}, _TRICKY_TEXT),
        st.builds(
            lambda m, r: {"type": "error", "message": "x" + m, "code": "ASK_X", "retryable": r},
            _TRICKY_TEXT,
            st.booleans(),
        ),
    )


def _event_line() -> st.SearchStrategy[str]:
    ascii_escaped = st.builds(lambda e: json.dumps(e, ensure_ascii=True), _valid_event())
    return st.one_of(st.builds(line, _valid_event()), ascii_escaped)


_HOSTILE_LINES = st.sampled_from(
    [
        "",
        "   ",
        "\r",
        "not json",
        "\x1e" + DONE_LINE,
        DONE_LINE + "\x1c",
        "\x85" + DONE_LINE,
        "\ufeff" + DONE_LINE,
        '{"type":"done","extra":1}',
        '{"type":"text","delta":"a","delta":"b"}',
        '{"type":"done","model":NaN}',
        '{"type":"cite","sources":[]}',
        "[" * 80 + "]" * 80,
        '{"type":"text","delta":"\\ud83d\\ude00 \\u00e9"}',
        '{"type":"text","delta":"\\u2028"}',
    ]
)

_LINES = st.lists(st.one_of(_event_line(), _HOSTILE_LINES, _TRICKY_TEXT), max_size=12)


@st.composite
def ask_streams(draw: st.DrawFn) -> bytes:
    lines = draw(_LINES)
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    body = ending.join(lines)
    if draw(st.booleans()):
        body += ending
    data = body.encode("utf-8", "surrogatepass")
    if draw(st.booleans()):  # sprinkle raw invalid or truncated UTF-8
        junk = draw(st.sampled_from([b"\xff", b"\xe2\x82", b"\xc0\xaf", b"\xf0\x9f\x98"]))
        spot = draw(st.integers(0, len(data)))
        data = data[:spot] + junk + data[spot:]
    return data


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(ask_streams(), st.lists(st.integers(0, 2_000), max_size=40))
def test_any_split_gives_the_same_events(data: bytes, cuts: list[int]) -> None:
    assert decode_stream(split(data, cuts)) == decode_stream([data])


@settings(max_examples=100)
@given(ask_streams())
def test_one_byte_chunks_give_the_same_events(data: bytes) -> None:
    single = [data[index : index + 1] for index in range(len(data))]
    assert decode_stream(single) == decode_stream([data])


@settings(max_examples=150)
@given(st.lists(st.one_of(_event_line(), _HOSTILE_LINES), max_size=8), st.data())
def test_text_chunks_split_anywhere_match_bytes(lines: list[str], data: st.DataObject) -> None:
    body = "\n".join(lines) + "\n"
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=10))
    points = sorted(set(cuts))
    edges = [0, *points, len(body)]
    pieces = [body[start:end] for start, end in itertools.pairwise(edges)]
    assert decode_stream(pieces) == decode_stream([body.encode("utf-8", "surrogatepass")])


@settings(max_examples=200)
@given(st.lists(st.binary(max_size=64), max_size=20))
def test_decoder_never_raises_on_arbitrary_bytes(chunks: list[bytes]) -> None:
    events = decode_stream(chunks)
    assert all(isinstance(event, dict) and "type" in event for event in events)


@settings(max_examples=200)
@given(st.text(max_size=200))
def test_buffer_decoder_never_raises_and_keeps_the_tail(buffer: str) -> None:
    result = decode_ask_events(buffer)
    assert result.ok
    assert result.rest == buffer.split("\n")[-1]
    assert not result.discarded_partial


def test_every_two_way_split_of_a_hostile_stream() -> None:
    parts = [
        line({"type": "text", "delta": "café 😀 €"}),
        "\x1e" + DONE_LINE,
        '{"type":"text","delta":"\\u00e9\\ud83d\\ude00"}\r',
        line({"type": "text", "delta": "a\u2028b\x85c"}),
        "",
        DONE_LINE,
    ]
    data = "\n".join(parts).encode()  # last line unterminated: decoded by finish()
    whole = decode_stream([data])
    assert whole == [
        {"type": "text", "delta": "café 😀 €"},
        {"type": "text", "delta": "é😀"},
        {"type": "text", "delta": "a\u2028b\x85c"},
        DONE,
    ]
    for cut in range(len(data) + 1):
        assert decode_stream([data[:cut], data[cut:]]) == whole, cut
    for first in range(0, len(data), 7):
        for second in range(first, len(data), 5):
            assert decode_stream(split(data, [first, second])) == whole


# ---------------------------------------------------------------------------
# UTF-8 handling


def test_split_multibyte_character_never_becomes_replacement() -> None:
    data = (line({"type": "text", "delta": "😀"}) + "\n").encode()
    start = data.index("😀".encode())
    for cut in range(start, start + 5):
        events = decode_stream([data[:cut], data[cut:]])
        assert events == [{"type": "text", "delta": "😀"}]


def test_truncated_tail_at_finish_is_one_replacement_character() -> None:
    decoder = AskEventDecoder()
    assert decoder.feed(b'{"type":"text","delta":"ab') == []
    assert decoder.feed(b'"}\n{"type":"text","delta":"x\xe2\x82') == [
        {"type": "text", "delta": "ab"}
    ]
    # The held bytes become U+FFFD, the final line is then invalid JSON: inert.
    assert decoder.finish() == []
    assert decoder.stats.invalid_lines == 1


def test_truncated_character_before_a_closing_quote_is_replaced() -> None:
    # A truncated character is followed by more bytes: U+FFFD inside a valid line.
    assert decode_stream([b'{"type":"text","delta":"a\xe2\x82', b'"}\n']) == [
        {"type": "text", "delta": "a\ufffd"}
    ]


def test_text_chunk_ends_a_held_partial_character() -> None:
    decoder = AskEventDecoder()
    decoder.feed(b'{"type":"text","delta":"a\xf0\x9f')
    events = decoder.feed('"}\n')
    assert events == [{"type": "text", "delta": "a\ufffd"}]


def test_bytearray_and_memoryview_chunks() -> None:
    data = (DONE_LINE + "\n").encode()
    assert decode_stream([bytearray(data[:3]), memoryview(data[3:])]) == [DONE]  # type: ignore[list-item]


def test_non_text_chunks_are_ignored() -> None:
    decoder = AskEventDecoder()
    for junk in (None, 12, object(), ["x"], {"type": "done"}):
        assert decoder.feed(junk) == []  # type: ignore[arg-type]
    assert decoder.feed(DONE_LINE + "\n") == [DONE]


def test_buffer_decoder_on_non_text_input() -> None:
    for junk in (None, 12, object(), ["x"]):
        result = decode_ask_events(junk)  # type: ignore[arg-type]
        assert result.events == [] and result.rest == "" and not result.discarded_partial
    assert decode_ask_events((DONE_LINE + "\n").encode()).events == [DONE]  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Line bound: 1 MiB of raw line bytes, measured without the "\n"


@pytest.mark.parametrize("chunk_size", [None, 65_536, 1_000_003])
def test_line_at_limit_is_decoded_and_past_it_skipped(chunk_size: int | None) -> None:
    at_limit = text_line_of_bytes(ASK_LINE_MAX_BYTES)
    past = text_line_of_bytes(ASK_LINE_MAX_BYTES + 1)
    assert len(at_limit.encode()) == ASK_LINE_MAX_BYTES
    data = (at_limit + "\n" + past + "\n" + DONE_LINE + "\n").encode()
    if chunk_size is None:
        chunks = [data]
    else:
        chunks = [data[i : i + chunk_size] for i in range(0, len(data), chunk_size)]
    decoder = AskEventDecoder()
    events = [event for chunk in chunks for event in decoder.feed(chunk)] + decoder.finish()
    assert [event["type"] for event in events] == ["text", "done"]
    assert len(events[0]["delta"]) == ASK_LINE_MAX_BYTES - len(line({"type": "text", "delta": ""}))
    assert decoder.stats.discarded_lines == 1


def test_line_limit_counts_multibyte_bytes_not_characters() -> None:
    overhead = len(line({"type": "text", "delta": ""}))
    fits = line({"type": "text", "delta": "é" * ((ASK_LINE_MAX_BYTES - overhead) // 2)})
    too_big = line({"type": "text", "delta": "é" * ((ASK_LINE_MAX_BYTES - overhead) // 2 + 1)})
    result = decode_ask_events(fits + "\n" + too_big + "\n")
    assert len(result.events) == 1


@pytest.mark.parametrize("whole", [True, False])
def test_carriage_return_and_padding_count_toward_the_line(whole: bool) -> None:
    # Raw size decides, so a CRLF line at the limit is the same whole or split.
    fits = text_line_of_bytes(ASK_LINE_MAX_BYTES - 1) + "\r"
    over = text_line_of_bytes(ASK_LINE_MAX_BYTES) + "\r"
    padded = "  " + text_line_of_bytes(ASK_LINE_MAX_BYTES - 1)
    data = (fits + "\n" + over + "\n" + padded + "\n").encode()
    chunks = [data] if whole else [data[i : i + 4096] for i in range(0, len(data), 4096)]
    events = decode_stream(chunks)
    assert len(events) == 1


# ---------------------------------------------------------------------------
# Retained partial: at most 1 MiB; an oversized one is dropped through its newline


def test_buffer_partial_at_limit_kept_past_limit_discarded() -> None:
    at_limit = "x" * ASK_PARTIAL_LINE_MAX_BYTES
    kept = decode_ask_events(DONE_LINE + "\n" + at_limit)
    assert kept.events == [DONE] and kept.rest == at_limit and not kept.discarded_partial
    dropped = decode_ask_events(DONE_LINE + "\n" + at_limit + "y")
    assert dropped.events == [DONE] and dropped.rest == "" and dropped.discarded_partial


def test_stream_partial_at_limit_completes_as_a_line() -> None:
    partial = text_line_of_bytes(ASK_PARTIAL_LINE_MAX_BYTES)
    decoder = AskEventDecoder()
    assert decoder.feed(partial) == []
    assert decoder.discarded_lines == 0
    events = decoder.feed("\n")
    assert len(events) == 1 and events[0]["type"] == "text"


def test_stream_partial_past_limit_is_discarded_and_resumes_after_newline() -> None:
    partial = text_line_of_bytes(ASK_PARTIAL_LINE_MAX_BYTES + 1)
    tail_that_looks_like_an_event = '\n{"type":"text","delta":"tail"}'
    decoder = AskEventDecoder()
    assert decoder.feed(partial[:-5]) == []
    assert decoder.feed(partial[-5:]) == []
    assert decoder.discarded_lines == 1
    # The rest of the oversized line (even one shaped like an event) never surfaces.
    assert decoder.feed('more","x":1}' + DONE_LINE) == []
    events = decoder.feed(tail_that_looks_like_an_event + "\n" + DONE_LINE + "\n")
    assert events == [{"type": "text", "delta": "tail"}, DONE]


def test_discarded_partial_tail_is_dropped_at_finish() -> None:
    decoder = AskEventDecoder()
    decoder.feed("x" * (ASK_PARTIAL_LINE_MAX_BYTES + 1))
    decoder.feed(DONE_LINE)  # still the oversized line: no newline yet
    assert decoder.finish() == []


def test_stream_without_any_newline_stays_bounded() -> None:
    chunk = b"a" * 65_536
    decoder = AskEventDecoder()
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        for _ in range(160):  # 10 MiB, no newline
            assert decoder.feed(chunk) == []
        peak = tracemalloc.get_traced_memory()[1] - baseline
    finally:
        tracemalloc.stop()
    assert peak < 4 * ASK_PARTIAL_LINE_MAX_BYTES
    assert decoder.stats.discarded_lines == 1
    assert decoder.feed(b"\n" + DONE_LINE.encode() + b"\n") == [DONE]


def test_one_byte_chunks_of_a_one_mebibyte_stream_are_linear() -> None:
    data = (text_line_of_bytes(ASK_LINE_MAX_BYTES - 64) + "\n" + DONE_LINE + "\n").encode()
    decoder = AskEventDecoder()
    started = time.perf_counter()
    events: list[dict[str, Any]] = []
    for index in range(len(data)):
        events.extend(decoder.feed(data[index : index + 1]))
    elapsed = time.perf_counter() - started
    assert [event["type"] for event in events] == ["text", "done"]
    assert elapsed < 20, elapsed  # ~1 s here; quadratic joining would take minutes


# ---------------------------------------------------------------------------
# Per-call budget: 4,096 complete lines (blank and invalid lines count)


def test_buffer_budget_at_and_past_limit() -> None:
    at_limit = decode_ask_events((DONE_LINE + "\n") * ASK_MAX_RECORDS_PER_DECODE + "tail")
    assert len(at_limit.events) == ASK_MAX_RECORDS_PER_DECODE and at_limit.rest == "tail"
    past = decode_ask_events((DONE_LINE + "\n") * (ASK_MAX_RECORDS_PER_DECODE + 1) + "tail")
    assert len(past.events) == ASK_MAX_RECORDS_PER_DECODE and past.rest == "tail"


def test_budget_counts_lines_not_events() -> None:
    result = decode_ask_events("\n" * ASK_MAX_RECORDS_PER_DECODE + DONE_LINE + "\n")
    assert result.events == []


def test_feed_budget_is_per_call() -> None:
    decoder = AskEventDecoder()
    many = (DONE_LINE + "\n") * (ASK_MAX_RECORDS_PER_DECODE + 1)
    assert len(decoder.feed(many + DONE_LINE)) == ASK_MAX_RECORDS_PER_DECODE
    assert decoder.skipped_records == 1
    assert decoder.feed("\n" + DONE_LINE + "\n") == [DONE, DONE]  # a fresh budget
    assert decoder.finish() == []
    assert decoder.stats.events == ASK_MAX_RECORDS_PER_DECODE + 2


def test_stats_and_reuse_after_finish() -> None:
    decoder = AskEventDecoder()
    decoder.feed("bad\n\n" + DONE_LINE + "\n" + "x" * (ASK_PARTIAL_LINE_MAX_BYTES + 1))
    decoder.finish()
    stats = decoder.stats
    assert (stats.lines, stats.events, stats.invalid_lines, stats.discarded_lines) == (3, 1, 1, 1)
    assert decoder.feed(DONE_LINE + "\n") == [DONE]  # a new stream: fresh state and counters
    assert decoder.stats.lines == 1 and decoder.stats.discarded_lines == 0


def test_finish_decodes_unterminated_final_line_once() -> None:
    decoder = AskEventDecoder()
    assert decoder.feed(DONE_LINE) == []
    assert decoder.finish() == [DONE]
    assert decoder.finish() == []
