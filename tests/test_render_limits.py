"""The display bounds of one message (chat/view/render_limits.py): each at its limit and past it.

A message within every bound renders whole and carries no note; one unit past
a bound is cut there and ends with the plain-text shortened note. Streaming
the same answer in chunks cuts it at the same place, and the hostile corpus
(fixtures/hostile_markdown) stays under the node bound.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from agentskit_web.bench.page.hostile import expand
from agentskit_web.chat.view.markdown_tree import markdown_to_tree
from agentskit_web.chat.view.render_budget import RenderBudget, table_columns, text_cost
from agentskit_web.chat.view.render_limits import (
    CODE_MAX_MARKERS,
    MESSAGE_MAX_CHARS,
    MESSAGE_MAX_LINES,
    MESSAGE_MAX_NODES,
    MESSAGE_MAX_PARSE_COST,
    NESTING_MAX_DEPTH,
    PARSE_COST_PER_CHAR,
    PARSE_COST_PER_LINE,
    PARSE_COST_PER_MARKUP_CHAR,
    PARSE_COST_PER_OPEN_BRACKET_CHAR,
    PARSE_COST_PER_TABLE_CELL,
    SHORTENED_CLASS,
    SHORTENED_NOTE,
    TABLE_MAX_COLUMNS,
    TABLE_MAX_ROWS,
)
from agentskit_web.chat.view.render_plan import (
    BlocksReady,
    MessageRenderPlan,
    NodeReady,
    TailAppend,
    render_whole,
)
from agentskit_web.chat.view.tree import Child, Node, element, text_of, walk

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "hostile_markdown" / "cases.json"


def text(value: str) -> dict[str, Any]:
    return {"kind": "text", "text": value}


def whole(source: str) -> list[Child]:
    return render_whole([text(source)])


def is_note(child: Child) -> bool:
    return isinstance(child, Node) and child.attr("class") == SHORTENED_CLASS


def shortened(nodes: list[Child]) -> bool:
    notes = [child for child in nodes if is_note(child)]
    assert len(notes) <= 1, "the note is shown once"
    return bool(notes)


def count(nodes: tuple[Child, ...] | list[Child]) -> int:
    return sum(1 for event, _ in walk(element("div", None, nodes)) if event != "close") - 1


def tags(nodes: list[Child], tag: str) -> list[Node]:
    root = element("div", None, nodes)
    return [item for event, item in walk(root) if event == "open" and item.tag == tag]  # type: ignore[union-attr]


def fence(body: str) -> str:
    return "```\n" + body + "```\n"


# -- the note --------------------------------------------------------------------------


def test_the_note_is_plain_visible_text_with_a_role() -> None:
    nodes = whole("a" * (MESSAGE_MAX_PARSE_COST * 2))
    note = nodes[-1]
    assert is_note(note) and isinstance(note, Node)
    assert note.tag == "p" and note.attr("role") == "note"
    assert note.children == (SHORTENED_NOTE,)


def test_a_normal_answer_is_not_shortened() -> None:
    answer = "# Title\n\nSome **bold** text with [a link](/docs) and `code`.\n\n- a\n- b\n"
    assert not shortened(whole(answer))


# -- parse cost ------------------------------------------------------------------------


def test_cost_estimate_charges_markup_lines_and_open_brackets() -> None:
    assert text_cost("ab", 0) == (2 * PARSE_COST_PER_CHAR, 0)
    assert text_cost("*", 0) == (PARSE_COST_PER_CHAR + PARSE_COST_PER_MARKUP_CHAR, 0)
    cost, still_open = text_cost("[ab", 0)  # the `[` stays open over its 3 characters
    assert still_open == 1
    assert cost == 3 + PARSE_COST_PER_MARKUP_CHAR + 3 * PARSE_COST_PER_OPEN_BRACKET_CHAR
    assert text_cost("ab", 2) == (2 + 2 * 2 * PARSE_COST_PER_OPEN_BRACKET_CHAR, 2)
    assert text_cost("a]", 1)[1] == 0


def test_parse_cost_at_the_limit_and_one_past() -> None:
    fits = "a" * (MESSAGE_MAX_PARSE_COST - PARSE_COST_PER_LINE)
    budget = RenderBudget()
    assert budget.take_source(fits) == fits and not budget.shortened and budget.cost == 0
    budget = RenderBudget()
    assert budget.take_source(fits + "a") == fits and budget.shortened
    assert not shortened(whole(fits))
    past = whole(fits + "a")
    assert shortened(past) and text_of(past[0]) == fits + "\n"


def test_an_unclosed_bracket_run_is_cut_long_before_it_turns_quadratic() -> None:
    budget = RenderBudget()
    kept = budget.take_source("![" * 50_000)
    assert budget.shortened and 0 < len(kept) < 2_000


# -- characters and lines --------------------------------------------------------------


def test_characters_at_the_limit_and_one_past() -> None:
    body = "x" * (MESSAGE_MAX_CHARS - len(fence("")) - 1) + "\n"
    at_limit = fence(body)
    assert len(at_limit) == MESSAGE_MAX_CHARS
    assert not shortened(whole(at_limit))
    past = whole(at_limit + "y")
    assert shortened(past)
    assert text_of(past[0]).count("x") == len(body) - 1


def test_lines_at_the_limit_and_one_past() -> None:
    at_limit = fence("x\n" * (MESSAGE_MAX_LINES - 2))
    assert at_limit.count("\n") == MESSAGE_MAX_LINES
    assert not shortened(whole(at_limit))
    assert shortened(whole(at_limit + "y\n"))


def test_the_streaming_tail_never_shows_more_than_the_character_bound() -> None:
    plan = MessageRenderPlan()
    shown = 0
    for _ in range(100):
        for op in plan.append([text("word " * 1_000)]):
            assert isinstance(op, TailAppend)
            shown += len(op.text)
    assert shown == MESSAGE_MAX_CHARS
    assert plan.append([text("more")]) == []  # past the bound: nothing is split or parsed
    ops = plan.finish()
    assert isinstance(ops[0], BlocksReady) and ops[0].tail == ""
    assert isinstance(ops[-1], NodeReady) and is_note(ops[-1].node)


# -- nodes -----------------------------------------------------------------------------


def test_nodes_at_the_limit_and_one_past() -> None:
    source = "- a\n- b\n- c\n"  # ul, three li, three text runs
    needed = count(markdown_to_tree(source))
    assert needed == 7
    budget = RenderBudget(nodes=needed)
    assert count(markdown_to_tree(source, budget)) == needed and not budget.shortened
    budget = RenderBudget(nodes=needed - 1)
    assert count(markdown_to_tree(source, budget)) <= needed - 1 and budget.shortened


def test_a_message_never_builds_more_than_the_node_bound() -> None:
    hidden = "\u200b" * CODE_MAX_MARKERS + "\n"  # each marker: a span and its text
    nodes = whole("\n".join(fence(hidden) for _ in range(8)))
    assert shortened(nodes)
    assert count(nodes) <= MESSAGE_MAX_NODES + 2  # the note: a p and its text
    assert RenderBudget().nodes == MESSAGE_MAX_NODES


# -- tables ----------------------------------------------------------------------------


def table(rows: int, columns: int) -> str:
    header = "|" + "|".join(f"h{i}" for i in range(columns)) + "|\n"
    delimiter = "|" + "---|" * columns + "\n"
    body = ("|" + "|".join("v" for _ in range(columns)) + "|\n") * (rows - 1)
    return header + delimiter + body


def test_table_rows_at_the_limit_and_one_past() -> None:
    at_limit = whole(table(TABLE_MAX_ROWS, 2))
    assert len(tags(at_limit, "tr")) == TABLE_MAX_ROWS and not shortened(at_limit)
    past = whole(table(TABLE_MAX_ROWS + 1, 2))
    assert len(tags(past, "tr")) == TABLE_MAX_ROWS and shortened(past)


def test_table_columns_at_the_limit_and_one_past() -> None:
    at_limit = whole(table(3, TABLE_MAX_COLUMNS))
    assert len(tags(at_limit, "td")) == 2 * TABLE_MAX_COLUMNS and not shortened(at_limit)
    past = whole(table(3, TABLE_MAX_COLUMNS + 1))
    assert len(tags(past, "th")) == TABLE_MAX_COLUMNS
    assert len(tags(past, "td")) == 2 * TABLE_MAX_COLUMNS and shortened(past)


def test_a_wide_header_makes_every_later_row_cost_its_width() -> None:
    assert table_columns("|---|:-:|---:|\n") == 3
    assert table_columns("---\n") == 0 and table_columns("| a | b |\n") == 0
    wide = table(1, 500) + "| v |\n" * 200  # markdown-it pads each short row to 500 cells
    budget = RenderBudget()
    kept = budget.take_source(wide)
    assert budget.shortened
    rows = kept.count("\n") - 2
    assert rows * 500 * PARSE_COST_PER_TABLE_CELL <= MESSAGE_MAX_PARSE_COST


# -- nesting ---------------------------------------------------------------------------


def test_nesting_at_the_limit_and_one_past() -> None:
    below = whole("> " * (NESTING_MAX_DEPTH - 1) + "deep")
    assert len(tags(below, "blockquote")) == NESTING_MAX_DEPTH - 1
    at_limit = whole("> " * NESTING_MAX_DEPTH + "deep")
    assert tags(at_limit, "blockquote") == []
    assert text_of(at_limit[0]).strip().endswith("deep")  # shown as plain text, nothing lost
    assert not shortened(at_limit)


# -- code ------------------------------------------------------------------------------


def test_code_markers_at_the_limit_and_one_past() -> None:
    at_limit = whole(fence("a\u200b" * CODE_MAX_MARKERS + "end\n"))
    assert len(tags(at_limit, "span")) == CODE_MAX_MARKERS and not shortened(at_limit)
    assert "end" in text_of(at_limit[0])
    past = whole(fence("a\u200b" * (CODE_MAX_MARKERS + 1) + "end\n"))
    assert len(tags(past, "span")) == CODE_MAX_MARKERS and shortened(past)
    assert "\u200b" not in text_of(past[0]) and "end" not in text_of(past[0])


# -- the corpus, restored and streamed -------------------------------------------------


def corpus() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads(CORPUS.read_text(encoding="utf-8"))["cases"]
    return cases


def test_the_corpus_is_pinned() -> None:
    assert len(corpus()) == 11


@pytest.mark.parametrize("case", corpus(), ids=lambda case: case["name"])
def test_every_hostile_case_stays_bounded(case: dict[str, Any]) -> None:
    source = expand(case)
    nodes = whole(source)
    assert count(nodes) <= MESSAGE_MAX_NODES + 2
    shown = sum(len(item) for event, item in walk(element("div", None, nodes)) if event == "text")
    assert shown <= MESSAGE_MAX_CHARS + len(SHORTENED_NOTE)
    assert shortened(nodes) or len(source) <= MESSAGE_MAX_CHARS


@pytest.mark.parametrize("case", corpus()[:4], ids=lambda case: case["name"])
def test_a_streamed_answer_is_cut_where_the_restored_one_is(case: dict[str, Any]) -> None:
    source = expand(case)[: 4 * MESSAGE_MAX_CHARS]
    plan = MessageRenderPlan()
    streamed: list[Child] = []
    tail = 0
    for start in range(0, len(source), 997):
        for op in plan.append([text(source[start : start + 997])]):
            if isinstance(op, BlocksReady):
                streamed.extend(op.nodes)
                tail = len(op.tail)
            elif isinstance(op, NodeReady):
                streamed.append(op.node)
            else:
                tail += len(op.text)
            assert tail <= MESSAGE_MAX_CHARS
    for op in plan.finish():
        if isinstance(op, BlocksReady):
            streamed.extend(op.nodes)
        elif isinstance(op, NodeReady):
            streamed.append(op.node)
    assert streamed == whole(source)
