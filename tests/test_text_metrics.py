"""`js_length_within` answers exactly as `js_length(text) <= limit`, shortcut or not."""

from __future__ import annotations

import pytest

from agentskit_web.protocol.text_metrics import js_length, js_length_within

ASTRAL = "\U0001f680"  # two UTF-16 units
LIMIT = 8


@pytest.mark.parametrize(
    "text",
    [
        "",
        "a" * LIMIT,  # ASCII at the limit
        "a" * (LIMIT + 1),  # one past
        ASTRAL * (LIMIT // 2),  # astral at the limit: 8 units in 4 code points
        ASTRAL * (LIMIT // 2) + "a",  # one unit past, still 5 code points (the shortcut's edge)
        "\u65e5" * LIMIT,  # BMP, non-ASCII: one unit each
        "\u65e5" * (LIMIT + 1),
        "\ud800" * LIMIT,  # lone surrogates count one unit each, as in JavaScript
        "\ud800" * (LIMIT + 1),
    ],
)
def test_within_agrees_with_the_measure(text: str) -> None:
    assert js_length_within(text, LIMIT) == (js_length(text) <= LIMIT)


def test_the_shortcut_edge_is_exact() -> None:
    four_rockets = ASTRAL * 4
    assert js_length_within(four_rockets, 8)
    assert not js_length_within(four_rockets, 7)
