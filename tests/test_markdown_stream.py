"""Streaming markdown: blocks come out once, the tail only grows, chunking is irrelevant."""

from hypothesis import given, settings
from hypothesis import strategies as st

from agentskit_web.chat.view.markdown_stream import MarkdownBlockSplitter, split_markdown_blocks

DOC = (
    "Intro para\nline two\n\n"
    "- a\n\n- b\n\n  continued in b\n\n"
    "Next para\n\n"
    "```py\ncode\n\n\nmore\n```\n\n"
    "    indented\n\n    still code\n\n"
    "~~~~\nfence ``` inside\n~~~\n~~~~\n\n"
    "1. one\n\n2. two\n\n"
    "end"
)


def test_blocks_of_a_document() -> None:
    assert split_markdown_blocks(DOC) == [
        "Intro para\nline two\n\n",
        "- a\n\n- b\n\n  continued in b\n\n",
        "Next para\n\n",
        "```py\ncode\n\n\nmore\n```\n\n    indented\n\n    still code\n\n",
        "~~~~\nfence ``` inside\n~~~\n~~~~\n\n",
        "1. one\n\n2. two\n\n",
        "end",
    ]


def test_blank_lines_inside_a_fence_are_not_boundaries() -> None:
    assert split_markdown_blocks("```\na\n\nb\n```\n\nc") == ["```\na\n\nb\n```\n\n", "c"]


def test_unclosed_fence_keeps_everything_in_one_block() -> None:
    assert split_markdown_blocks("```\na\n\nb\n\nc") == ["```\na\n\nb\n\nc"]


def test_backtick_fence_with_backtick_info_is_not_a_fence() -> None:
    assert split_markdown_blocks("``` a`b\n\nc") == ["``` a`b\n\n", "c"]


def test_tail_grows_until_a_block_finishes() -> None:
    splitter = MarkdownBlockSplitter()
    assert splitter.feed("Hello ") == []
    assert splitter.tail == "Hello "
    assert splitter.feed("world\n\n") == []
    assert splitter.feed("Next") == []
    assert splitter.feed(" line\n") == ["Hello world\n\n"]
    assert splitter.tail == "Next line\n"
    assert splitter.finish() == ["Next line\n"]
    assert splitter.tail == ""


def test_blank_tail_is_not_a_block() -> None:
    splitter = MarkdownBlockSplitter()
    splitter.feed("\n\n  \n")
    assert splitter.finish() == []


def test_leading_blank_lines_stay_with_the_first_block() -> None:
    assert split_markdown_blocks("\n\nfirst\n\nsecond") == ["\n\nfirst\n\n", "second"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=len(DOC)), max_size=20))
def test_chunking_never_changes_the_blocks(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    chunks = [DOC[a:b] for a, b in zip([0, *points], [*points, len(DOC)], strict=True)]
    splitter = MarkdownBlockSplitter()
    blocks: list[str] = []
    fed = ""
    for chunk in chunks:
        fed += chunk
        blocks += splitter.feed(chunk)
        assert "".join(blocks) + splitter.tail == fed
    blocks += splitter.finish()
    assert blocks == split_markdown_blocks(DOC)
    assert "".join(blocks) == DOC


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab-1. >`~\n\t"))))
def test_blocks_plus_tail_is_everything_fed(text: str) -> None:
    splitter = MarkdownBlockSplitter()
    blocks: list[str] = []
    for char in text:
        blocks += splitter.feed(char)
        assert "".join(blocks) + splitter.tail == text[: len("".join(blocks) + splitter.tail)]
    assert "".join(blocks) + splitter.tail == text
