"""Incremental render plan of one assistant message: parts in, small DOM operations out.

The DOM layer executes these operations and nothing else, so the whole
incremental-rendering policy is pure and tested on CPython:

- adjacent text parts are merged into one *text segment* (a component ends
  the segment);
- inside a segment, the unfinished tail is plain text that only grows
  (`TailAppend`: extend the tail text node), and each finished markdown block
  is rendered once (`BlocksReady`: insert the block nodes before the tail and
  set the tail to what remains, which is at most one block);
- components and diagnostics become one node each (`NodeReady`), resolved
  through the manifest with the semantic fallback.

Each text character is split once, parsed as markdown once and appended to
the tail at most twice, so the total work is linear in the answer length and
a chunk costs O(chunk + one block).

One `RenderBudget` per message bounds what it shows (render_limits.py): the
markdown parsed, the characters shown (the tail included) and the nodes
built. When a bound cuts, the plan appends `SHORTENED_NOTE` (`NodeReady`),
empties the tail and ignores every later part, so a streamed answer and the
same answer restored from storage end up cut at the same place.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .component_view import component_view, fallback_view
from .markdown_stream import MarkdownBlockSplitter
from .markdown_tree import markdown_to_tree
from .render_budget import RenderBudget
from .render_limits import MESSAGE_MAX_CHARS, MESSAGE_MAX_LINES, SHORTENED_CLASS, SHORTENED_NOTE
from .tree import Child, Node, element, walk


@dataclass(frozen=True, slots=True)
class TailAppend:
    """Append `text` to the plain-text tail of `segment` (creating the segment if new)."""

    segment: int
    text: str


@dataclass(frozen=True, slots=True)
class BlocksReady:
    """Insert `nodes` before the tail of `segment`, then make its tail exactly `tail`."""

    segment: int
    nodes: tuple[Child, ...]
    tail: str


@dataclass(frozen=True, slots=True)
class NodeReady:
    """Append a component (or diagnostic) node after everything rendered so far."""

    node: Node


RenderOp = TailAppend | BlocksReady | NodeReady


def shortened_note() -> Node:
    """The visible, plain-text note that ends a message a display bound cut."""
    return element("p", {"class": SHORTENED_CLASS, "role": "note"}, (SHORTENED_NOTE,))


class MessageRenderPlan:
    """Turns the parts of one assistant message, as they arrive, into render operations."""

    def __init__(self, manifest: Any = None) -> None:
        self._manifest = manifest
        self._segment = 0
        self._splitter: MarkdownBlockSplitter | None = None
        self.budget = RenderBudget()
        self._tail_shown = 0  # characters the current segment's tail shows
        self._fed = 0  # text characters taken in; past MESSAGE_MAX_CHARS none can show
        self._lines_fed = 0  # and lines, past MESSAGE_MAX_LINES
        self._overflow = False
        self.shortened = False  # a bound cut the message; everything later is ignored

    def append(self, parts: Iterable[Mapping[str, Any]]) -> list[RenderOp]:
        """Operations for newly decoded parts (`text`, `component`, `diagnostic`)."""
        ops: list[RenderOp] = []
        for part in parts:
            if self.shortened or self._overflow:
                break
            kind = part.get("kind")
            if kind == "text":
                text = part.get("text")
                taken = self._take_in(text) if isinstance(text, str) else ""
                if taken:
                    ops.extend(self._text(taken))
            else:
                ops.extend(self._close_segment())
                if not self.shortened:
                    ops.extend(self._component(part))
            ops.extend(self._note())
        return ops

    def finish(self) -> list[RenderOp]:
        """The message is complete (or stopped, or failed): render the last tail as markdown."""
        ops = self._close_segment()
        self.budget.shortened = self.budget.shortened or self._overflow
        return [*ops, *self._note()]

    def _take_in(self, text: str) -> str:
        """The part of `text` that could still show: MESSAGE_MAX_CHARS and MESSAGE_MAX_LINES
        (the newline that ends the last allowed line is the last character taken in).

        Text past those is never split or parsed (a restored megabyte costs what the
        bound does); the message is marked shortened when it finishes.
        """
        room = MESSAGE_MAX_CHARS - self._fed
        if len(text) > room:
            text = text[:room]
            self._overflow = True
        lines = text.count("\n")
        if self._lines_fed + lines >= MESSAGE_MAX_LINES:
            # Nothing after the last allowed newline shows, even before its own newline
            # comes: a streamed part ending in "y" would otherwise show a line that the
            # same answer restored in one part ("y\nz\n") never shows.
            end = -1
            for _ in range(MESSAGE_MAX_LINES - self._lines_fed):
                end = text.find("\n", end + 1)
            if end + 1 < len(text):
                text = text[: end + 1]
                self._overflow = True
            lines = MESSAGE_MAX_LINES - self._lines_fed
        self._fed += len(text)
        self._lines_fed += lines
        return text

    def _note(self) -> list[RenderOp]:
        """The shortened note, once, when a bound has just cut the message."""
        if self.shortened or not self.budget.shortened:
            return []
        self.shortened = True
        self._splitter = None
        return [NodeReady(shortened_note())]

    def _component(self, part: Mapping[str, Any]) -> list[RenderOp]:
        node = self._node(part)
        if not self.budget.take_nodes(sum(1 for event, _ in walk(node) if event != "close")):
            return []
        return [NodeReady(node)]

    def _node(self, part: Mapping[str, Any]) -> Node:
        if part.get("kind") == "component":
            return component_view(part.get("frame"), self._manifest)
        message = part.get("message")
        return fallback_view(message if isinstance(message, str) and message else "[unreadable]")

    def _text(self, text: str) -> list[RenderOp]:
        if self._splitter is None:
            self._segment += 1
            self._splitter = MarkdownBlockSplitter()
        blocks = self._splitter.feed(text)
        if not blocks:
            shown = self.budget.take_tail(self._tail_shown, text)
            self._tail_shown += len(shown)
            return [TailAppend(self._segment, shown)] if shown else []
        nodes = self._markdown(blocks)
        tail = "" if self.budget.shortened else self.budget.take_tail(0, self._splitter.tail)
        self._tail_shown = len(tail)
        return [BlocksReady(self._segment, nodes, tail)]

    def _markdown(self, blocks: list[str]) -> tuple[Child, ...]:
        """The nodes of finished blocks, within the budget (blocks after a cut are dropped)."""
        nodes: list[Child] = []
        for block in blocks:
            if self.budget.shortened:
                break
            nodes.extend(markdown_to_tree(block, self.budget))
        return tuple(nodes)

    def _close_segment(self) -> list[RenderOp]:
        splitter, self._splitter = self._splitter, None
        if splitter is None:
            return []
        self._tail_shown = 0
        return [BlocksReady(self._segment, self._markdown(splitter.finish()), "")]


def render_whole(parts: Iterable[Mapping[str, Any]], manifest: Any = None) -> list[Child]:
    """The final nodes of a complete message (what the DOM shows once it settled).

    Tails are dropped because `finish` always empties them; used by tests,
    text exports and the hostile-render conformance subject.
    """
    plan = MessageRenderPlan(manifest)
    nodes: list[Child] = []
    for op in [*plan.append(parts), *plan.finish()]:
        if isinstance(op, BlocksReady):
            nodes.extend(op.nodes)
        elif isinstance(op, NodeReady):
            nodes.append(op.node)
    return nodes
