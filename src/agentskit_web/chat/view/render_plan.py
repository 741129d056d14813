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
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .component_view import component_view, fallback_view
from .markdown_stream import MarkdownBlockSplitter
from .markdown_tree import markdown_to_tree
from .tree import Child, Node


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


class MessageRenderPlan:
    """Turns the parts of one assistant message, as they arrive, into render operations."""

    def __init__(self, manifest: Any = None) -> None:
        self._manifest = manifest
        self._segment = 0
        self._splitter: MarkdownBlockSplitter | None = None

    def append(self, parts: Iterable[Mapping[str, Any]]) -> list[RenderOp]:
        """Operations for newly decoded parts (`text`, `component`, `diagnostic`)."""
        ops: list[RenderOp] = []
        for part in parts:
            kind = part.get("kind")
            if kind == "text":
                text = part.get("text")
                if isinstance(text, str) and text:
                    ops.extend(self._text(text))
            else:
                ops.extend(self._close_segment())
                ops.append(NodeReady(self._node(part)))
        return ops

    def finish(self) -> list[RenderOp]:
        """The message is complete (or stopped, or failed): render the last tail as markdown."""
        return self._close_segment()

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
            return [TailAppend(self._segment, text)]
        nodes = tuple(node for block in blocks for node in markdown_to_tree(block))
        return [BlocksReady(self._segment, nodes, self._splitter.tail)]

    def _close_segment(self) -> list[RenderOp]:
        splitter, self._splitter = self._splitter, None
        if splitter is None:
            return []
        nodes = tuple(node for block in splitter.finish() for node in markdown_to_tree(block))
        return [BlocksReady(self._segment, nodes, "")]


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
