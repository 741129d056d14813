"""The render plan's rules that `make mutate` showed no test guarding (issue 36 item 9).

Where a bound cuts (lines and characters, whole or streamed in parts), what happens after
the cut (nothing more shows, the tail is emptied), how much a component costs of the node
budget, the tail at the character bound, the manifest a plan was given, and what a
diagnostic without a readable message shows.
"""

import pytest

from agentskit_web.chat.view import render_plan
from agentskit_web.chat.view.markdown_stream import MarkdownBlockSplitter
from agentskit_web.chat.view.render_budget import RenderBudget
from agentskit_web.chat.view.render_limits import (
    CODE_MAX_MARKERS,
    MESSAGE_MAX_CHARS,
    MESSAGE_MAX_LINES,
    MESSAGE_MAX_PARSE_COST,
)
from agentskit_web.chat.view.render_plan import (
    BlocksReady,
    MessageRenderPlan,
    NodeReady,
    RenderOp,
    TailAppend,
    render_whole,
    shortened_note,
)
from agentskit_web.chat.view.tree import Child, Node, text_of, walk
from test_render_plan import FRAME, text


def fence(body: str) -> str:
    return "```\n" + body + "```\n"


def settled(ops: list[RenderOp]) -> list[Child]:
    """What the DOM keeps of a message's operations once it finished (tails emptied)."""
    nodes: list[Child] = []
    for op in ops:
        if isinstance(op, BlocksReady):
            nodes.extend(op.nodes)
        elif isinstance(op, NodeReady):
            nodes.append(op.node)
    return nodes


def streamed(source: str, size: int) -> list[Child]:
    plan = MessageRenderPlan()
    ops: list[RenderOp] = []
    for start in range(0, len(source), size):
        ops.extend(plan.append([text(source[start : start + size])]))
    return settled([*ops, *plan.finish()])


def size_of(node: Child) -> int:
    return sum(1 for event, _ in walk(node) if event != "close")


# -- the line and character bounds cut at exactly the bound, however the text arrives --


LINES_AT_LIMIT = "\n" + fence("x\n" * (MESSAGE_MAX_LINES - 3))  # a first line that is empty
CHARS_AT_LIMIT = fence("x" * (MESSAGE_MAX_CHARS - len(fence("")) - 1) + "\n")


def test_the_line_bound_keeps_exactly_the_first_lines() -> None:
    """Streamed in any parts, the cut is where the restored answer's is: a part that ends
    in the first characters of line MESSAGE_MAX_LINES + 1 does not show them (it did
    before this test: streamed in 7-character parts, the `y` showed)."""
    assert LINES_AT_LIMIT.count("\n") == MESSAGE_MAX_LINES
    kept = render_whole([text(LINES_AT_LIMIT)])
    assert shortened_note() not in kept
    past = LINES_AT_LIMIT + "y\nz\n"
    assert render_whole([text(past)]) == [*kept, shortened_note()]
    for size in (7, 301, 2_000):
        assert streamed(past, size) == [*kept, shortened_note()], size
    assert render_whole([text(LINES_AT_LIMIT + "y")]) == [*kept, shortened_note()]


def test_the_character_bound_keeps_exactly_the_first_characters() -> None:
    assert len(CHARS_AT_LIMIT) == MESSAGE_MAX_CHARS
    kept = render_whole([text(CHARS_AT_LIMIT)])
    assert shortened_note() not in kept
    assert streamed(CHARS_AT_LIMIT, 1_000) == kept
    past = CHARS_AT_LIMIT + "y" * 50
    assert render_whole([text(past)]) == [*kept, shortened_note()]
    for size in (999, 4_096):
        assert streamed(past, size) == [*kept, shortened_note()], size


# -- after a cut ------------------------------------------------------------------------


def test_nothing_shows_after_the_budget_cut_the_message() -> None:
    plan = MessageRenderPlan()
    over = "a" * (MESSAGE_MAX_PARSE_COST + 10) + "\n\nnext\n"  # cut by the parse cost
    ops = plan.append([text(over), text("later"), {"kind": "component", "frame": FRAME}])
    assert isinstance(ops[-1], NodeReady) and ops[-1].node == shortened_note()
    assert plan.shortened
    assert plan.append([text("more")]) == []
    assert plan.append([{"kind": "diagnostic", "message": "Bad."}]) == []
    assert plan.finish() == []


def test_a_cut_inside_a_block_empties_the_tail() -> None:
    """Too many invisible characters in code cut the message while text is still streaming
    after the block: the tail is emptied with the note, never left on screen."""
    code = fence("\u200b" * (CODE_MAX_MARKERS + 1) + "\n")
    plan = MessageRenderPlan()
    ops = plan.append([text(code + "\nafter the code\n")])
    ready = [op for op in ops if isinstance(op, BlocksReady)]
    assert ready and all(op.tail == "" for op in ready)
    assert isinstance(ops[-1], NodeReady) and ops[-1].node == shortened_note()
    assert not any(isinstance(op, TailAppend) for op in ops)


# -- what a component costs -------------------------------------------------------------


def _component_with(nodes_left: int) -> list[RenderOp]:
    plan = MessageRenderPlan()
    plan.budget = RenderBudget(nodes=nodes_left)
    return plan.append([{"kind": "component", "frame": FRAME}])


def test_a_component_costs_its_elements_and_text_runs() -> None:
    [op] = MessageRenderPlan().append([{"kind": "component", "frame": FRAME}])
    assert isinstance(op, NodeReady)
    needed = size_of(op.node)
    assert _component_with(needed) == [NodeReady(op.node)]
    assert _component_with(needed - 1) == [NodeReady(shortened_note())]


# -- the tail at the character bound -----------------------------------------------------


def test_the_tail_after_a_block_shows_every_character_up_to_the_bound() -> None:
    rest = "x" * (MESSAGE_MAX_CHARS - 4) + "\n"
    [op] = MessageRenderPlan().append([text("a\n\n" + rest)])
    assert isinstance(op, BlocksReady) and op.tail == rest


def test_a_new_segment_tail_shows_every_character_up_to_the_bound() -> None:
    plan = MessageRenderPlan()
    plan.append([text("a")])
    rest = "x" * (MESSAGE_MAX_CHARS - 1)
    ops = plan.append([{"kind": "component", "frame": FRAME}, text(rest)])
    assert ops[-1] == TailAppend(2, rest)


# -- the manifest and diagnostics --------------------------------------------------------


def test_the_plan_resolves_components_through_its_manifest() -> None:
    """A manifest without `source-list` shows the frame's fallback, not the component."""
    part = {"kind": "component", "frame": FRAME}
    [standard] = MessageRenderPlan().append([part])
    assert isinstance(standard, NodeReady) and standard.node.attr("data-key") == "source-list"
    [own] = MessageRenderPlan({}).append([part])
    assert isinstance(own, NodeReady) and own.node.attr("class") == "ak-fallback"
    assert "Sources: T." in text_of(own.node)
    [whole] = render_whole([part], {})
    assert whole == own.node


def test_a_diagnostic_without_a_readable_message_says_unreadable() -> None:
    for message in ("", None, 5, ["x"]):
        [op] = MessageRenderPlan().append([{"kind": "diagnostic", "message": message}])
        assert isinstance(op, NodeReady) and isinstance(op.node, Node)
        assert op.node.children == ("[unreadable]",), message


def test_a_text_part_without_text_shows_nothing() -> None:
    plan = MessageRenderPlan()
    assert plan.append([{"kind": "text", "text": None}, {"kind": "text", "text": 5}]) == []
    assert plan.append([{"kind": "text"}]) == []
    assert plan.finish() == []


# -- text past the bounds is never split or parsed ---------------------------------------


def test_text_past_the_bounds_never_reaches_the_splitter(monkeypatch: pytest.MonkeyPatch) -> None:
    """A megabyte streamed in parts costs what the bound does: the splitter is handed at
    most MESSAGE_MAX_CHARS characters and MESSAGE_MAX_LINES lines, however many parts come
    (the output alone cannot tell: the budget cuts the shown text at the same place)."""
    fed: list[str] = []

    class CountingSplitter(MarkdownBlockSplitter):
        def feed(self, text: str) -> list[str]:
            fed.append(text)
            return super().feed(text)

    monkeypatch.setattr(render_plan, "MarkdownBlockSplitter", CountingSplitter)
    for part in ("word " * 1_000, "line\n" * 100):
        fed.clear()
        plan = MessageRenderPlan()
        for _ in range(1_000):
            plan.append([text(part)])
        plan.finish()
        taken = "".join(fed)
        assert len(taken) <= MESSAGE_MAX_CHARS and taken.count("\n") <= MESSAGE_MAX_LINES
        assert len(taken) == MESSAGE_MAX_CHARS or taken.count("\n") == MESSAGE_MAX_LINES
