"""The incremental render plan: only new work per chunk, linear in the answer, same final result."""

from typing import Any

from agentskit_web.chat.view.markdown_tree import MORE_ITEM_CLASS
from agentskit_web.chat.view.render_plan import (
    BlocksReady,
    MessageRenderPlan,
    NodeReady,
    TailAppend,
    render_whole,
)
from agentskit_web.chat.view.tree import Node, element, links_of, text_of, walk

FRAME = {
    "protocol": "agentskit.chat.component",
    "version": 1,
    "type": "render",
    "componentKey": "source-list",
    "instanceId": "c1",
    "props": {"label": "Sources", "sources": [{"id": "s1", "title": "T", "url": "/t"}]},
    "fallback": {"kind": "source-list", "summary": "Sources: T."},
}


def text(value: str) -> dict[str, Any]:
    return {"kind": "text", "text": value}


def test_tail_grows_then_blocks_render() -> None:
    plan = MessageRenderPlan()
    assert plan.append([text("Hello ")]) == [TailAppend(1, "Hello ")]
    assert plan.append([text("**world**\n\n")]) == [TailAppend(1, "**world**\n\n")]
    [op] = plan.append([text("Next")])
    assert op == TailAppend(1, "Next")
    [ready] = plan.append([text("\n")])
    assert isinstance(ready, BlocksReady) and ready.tail == "Next\n"
    assert text_of(element("div", None, ready.nodes)) == "Hello world\n\n"
    [final] = plan.finish()
    assert isinstance(final, BlocksReady) and final.tail == "" and final.segment == 1


def test_component_closes_the_text_segment() -> None:
    plan = MessageRenderPlan()
    plan.append([text("See [docs](/docs)")])
    ops = plan.append([{"kind": "component", "frame": FRAME}, text("after")])
    assert isinstance(ops[0], BlocksReady) and links_of(element("div", None, ops[0].nodes)) == [
        "/docs"
    ]
    assert isinstance(ops[1], NodeReady) and ops[1].node.attr("data-key") == "source-list"
    assert ops[2] == TailAppend(2, "after")


def test_diagnostic_part_shows_a_fallback() -> None:
    [op] = MessageRenderPlan().append([{"kind": "diagnostic", "code": "X", "message": "Bad."}])
    assert isinstance(op, NodeReady) and text_of(op.node) == "Bad.\n"


def test_finish_without_text_is_empty() -> None:
    assert MessageRenderPlan().finish() == []


def test_render_whole_equals_streamed_rendering() -> None:
    source = "# T\n\npara one\n\n- a\n- b\n\n```\ncode\n```\n\nend **bold**"
    streamed = MessageRenderPlan()
    nodes: list[Any] = []
    for char in source:
        for op in streamed.append([text(char)]):
            if isinstance(op, BlocksReady):
                nodes.extend(op.nodes)
    for op in streamed.finish():
        assert isinstance(op, BlocksReady)
        nodes.extend(op.nodes)
    assert nodes == render_whole([text(source)])


def _work(records: int) -> int:
    """Characters handed to the DOM (tail text + text inside rendered nodes) for an answer."""
    plan = MessageRenderPlan()
    total = 0
    paragraph = "Some words of an answer with `code` and a [link](/x). " * 2
    for index in range(records):
        chunk = paragraph + ("\n\n" if index % 4 == 3 else "")
        for op in plan.append([text(chunk)]):
            if isinstance(op, TailAppend):
                total += len(op.text)
            elif isinstance(op, BlocksReady):
                total += len(op.tail) + sum(
                    len(text_of(n)) for n in op.nodes if isinstance(n, Node)
                )
    return total


def test_render_work_is_linear_in_the_answer() -> None:
    small, large = _work(64), _work(512)
    assert large / small <= 9


def test_more_from_the_docs_streams_into_the_same_closed_details() -> None:
    source = (
        "> Lead. [1]\n\n**More from the docs**\n- *A* [2]: One.\n  > One. Then more.\n"
        "- *B* [3]: Two.\n  > Two.\n\n_Quotes._"
    )
    streamed = MessageRenderPlan()
    nodes: list[Any] = []
    for start in range(0, len(source), 7):
        for op in streamed.append([text(source[start : start + 7])]):
            if isinstance(op, BlocksReady):
                nodes.extend(op.nodes)
    for op in streamed.finish():
        assert isinstance(op, BlocksReady)
        nodes.extend(op.nodes)
    assert nodes == render_whole([text(source)])
    [details] = [n for n in nodes if isinstance(n, Node) and n.tag == "details"]
    assert details.attr("open") is None
    opened = [n for e, n in walk(details) if e == "open" and isinstance(n, Node)]
    lines = [n for n in opened if n.tag == "details" and n.attr("class") == MORE_ITEM_CLASS]
    assert len(lines) == 2 and all(line.attr("open") is None for line in lines)
    assert [n.tag for n in nodes if isinstance(n, Node)] == ["blockquote", "details", "p"]
