"""The block splitter's CommonMark rules that `make mutate` showed no test guarding
(issue 36 item 9): what counts as a blank line, when a fence closes (indentation, what may
follow it), a loose list as the very first block, and which lines start a new block.

Each case is one where a wrong rule splits a block that markdown-it parses as one (or
joins two), so the streamed answer would render differently from the restored one.
"""

import pytest

from agentskit_web.chat.view.markdown_stream import split_markdown_blocks


@pytest.mark.parametrize(
    ("source", "blocks"),
    [
        # A line of a no-break space is not blank (CommonMark: spaces and tabs only).
        ("a\n\u00a0\nb\n", ["a\n\u00a0\nb\n"]),
        ("a\nX\nb\n\nc", ["a\nX\nb\n\n", "c"]),
        ("a\n \t\n\nb", ["a\n \t\n\n", "b"]),
    ],
    ids=["no-break space", "letter X", "spaces and tabs"],
)
def test_only_spaces_and_tabs_make_a_blank_line(source: str, blocks: list[str]) -> None:
    assert split_markdown_blocks(source) == blocks


@pytest.mark.parametrize(
    ("closing", "closes"),
    [
        ("```", True),
        ("   ```", True),  # up to three spaces of indentation
        ("    ```", False),  # four: an indented code line, not a fence
        ("\t```", False),  # a tab is four columns
        ("``` \t", True),  # spaces and tabs may follow
        ("```\u00a0", False),  # nothing else may
        ("```X", False),
        ("X```", False),
        ("``", False),  # shorter than the opening
    ],
)
def test_a_fence_closes_only_on_a_commonmark_closing_line(closing: str, closes: bool) -> None:
    source = f"```\na\n{closing}\n\nb\n\nc"
    if closes:
        assert split_markdown_blocks(source) == [f"```\na\n{closing}\n\n", "b\n\n", "c"]
    else:  # the fence is still open: its blank lines are code, not boundaries
        assert split_markdown_blocks(source) == [source]


def test_a_loose_list_that_opens_the_answer_stays_one_block() -> None:
    """The numbering of `1.`, `2.` comes from one list: split, the second item would be a
    list of its own."""
    assert split_markdown_blocks("1. one\n\n2. two\n\nend") == ["1. one\n\n2. two\n\n", "end"]
    assert split_markdown_blocks("- a\n\n- b\n") == ["- a\n\n- b\n"]


def test_a_line_in_column_0_after_a_blank_line_starts_a_block() -> None:
    assert split_markdown_blocks("a\n\nXb\n") == ["a\n\n", "Xb\n"]
    assert split_markdown_blocks("a\n\n b\n") == ["a\n\n b\n"]
    assert split_markdown_blocks("a\n\n\tb\n") == ["a\n\n\tb\n"]
