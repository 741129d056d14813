"""A small element tree built from HTML with the standard library's tokenizer.

The site reader needs a tree, not a token stream: a theme's main content is
"the element matching this selector, minus these descendants", and a Sphinx
anchor is the id of a heading's enclosing `<section>`. Generators write
well-formed HTML, so a forgiving tree builder is enough: void elements never
take children, an end tag closes the nearest open element of that name (and
everything opened inside it), a stray end tag is ignored, and the few tags
HTML closes implicitly (`p`, `li`, `dt`/`dd`, table rows and cells, `option`)
are closed when a sibling starts. No network, no scripts, no entity surprises
(character references are decoded by `html.parser`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Final

VOID_TAGS: Final = frozenset(
    {
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "param", "source", "track", "wbr",
    }
)  # fmt: skip
"""Elements that never have children or an end tag."""

_BLOCK_CLOSES_P: Final = frozenset(
    {
        "address", "article", "aside", "blockquote", "details", "div", "dl", "fieldset",
        "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr",
        "main", "nav", "ol", "p", "pre", "section", "table", "ul",
    }
)  # fmt: skip
"""Start tags that close an open `<p>` (the HTML rule for an implied `</p>`)."""

_CLOSED_BY_SIBLING: Final = {
    "li": frozenset({"li"}),
    "dt": frozenset({"dt", "dd"}),
    "dd": frozenset({"dt", "dd"}),
    "tr": frozenset({"tr"}),
    "td": frozenset({"td", "th", "tr"}),
    "th": frozenset({"td", "th", "tr"}),
    "option": frozenset({"option"}),
}
"""An open element of the key's tag is closed when one of these starts."""

_SCOPES: Final = frozenset({"ul", "ol", "dl", "table", "select", "div", "section"})
"""An implied close never reaches past one of these (a nested list's `<li>` stays inside)."""

_CLOSES: Final = {
    tag: frozenset(open_tag for open_tag, closers in _CLOSED_BY_SIBLING.items() if tag in closers)
    for tag in frozenset().union(*_CLOSED_BY_SIBLING.values())
}
"""_CLOSED_BY_SIBLING turned around: a starting tag -> the open tags it closes."""

MAX_DEPTH: Final = 512
"""Deepest nesting kept; deeper elements are attached at this depth (hostile input stays linear)."""


@dataclass(eq=False, slots=True)
class Element:
    """One element: tag (lower case), attributes, children (elements and text), parent."""

    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Element | str] = field(default_factory=list)
    parent: Element | None = field(default=None, repr=False)
    classes: frozenset[str] = field(default=frozenset(), repr=False)
    """The `class` attribute's names, split once (selectors test them for every element)."""

    def __post_init__(self) -> None:
        if "class" in self.attrs:
            self.classes = frozenset(self.attrs["class"].split())

    @property
    def id(self) -> str | None:
        value = self.attrs.get("id", "").strip()
        return value or None

    def iter(self) -> Iterator[Element]:
        """This element and every descendant element, in document order."""
        stack: list[Element] = [self]
        while stack:
            element = stack.pop()
            yield element
            stack.extend(
                child for child in reversed(element.children) if isinstance(child, Element)
            )

    def ancestors(self) -> Iterator[Element]:
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def text(self) -> str:
        """All text below this element, whitespace as written."""
        parts: list[str] = []
        stack: list[Element | str] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, str):
                parts.append(node)
            else:
                stack.extend(reversed(node.children))
        return "".join(parts)


def remove_all(doomed: list[Element]) -> None:
    """Detach every element of doomed from its parent, in one pass over each parent's children.

    Removing them one at a time rebuilds a parent's child list per removal: 20,000 stripped
    siblings took 4.6 s that way (issue 36).
    """
    gone = {id(element) for element in doomed}
    parents = {id(element.parent): element.parent for element in doomed if element.parent}
    for parent in parents.values():
        parent.children = [child for child in parent.children if id(child) not in gone]
    for element in doomed:
        element.parent = None


class _TreeBuilder(HTMLParser):
    """The tree, built in time linear in the input.

    Each open element's position on the open stack is also kept by tag (`_open_at`), so
    that finding the open element an end tag or an implied close refers to is a look-up,
    not a walk down a stack that may be MAX_DEPTH deep for every tag of the page.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document")
        self._open: list[Element] = [self.root]
        self._open_at: dict[str, list[int]] = {}

    def updatepos(self, i: int, j: int) -> int:
        # The tokenizer counts newlines to report line numbers, which a tree never uses:
        # about a quarter of its time on a built page.
        return j

    def _close_to(self, index: int) -> None:
        for element in self._open[index:]:
            self._open_at[element.tag].pop()
        del self._open[index:]

    def _topmost(self, tags: frozenset[str]) -> int:
        """Position of the topmost open element with one of tags (0, the root, if none)."""
        return max((self._open_at[tag][-1] for tag in tags if self._open_at.get(tag)), default=0)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCK_CLOSES_P and self._open[-1].tag == "p":
            self._close_to(len(self._open) - 1)
        closes = _CLOSES.get(tag)
        while closes:  # a new <tr> closes the open <td>, then the open <tr>
            closed = self._topmost(closes)
            if closed == 0 or closed < self._topmost(_SCOPES):
                break
            self._close_to(closed)
        parent = self._open[-1]
        element = Element(tag, {name: value or "" for name, value in attrs}, parent=parent)
        parent.children.append(element)
        if tag not in VOID_TAGS and len(self._open) < MAX_DEPTH:
            self._open_at.setdefault(tag, []).append(len(self._open))
            self._open.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID_TAGS and self._open[-1].tag == tag and len(self._open) > 1:
            self._close_to(len(self._open) - 1)

    def handle_endtag(self, tag: str) -> None:
        if self._open_at.get(tag):
            self._close_to(self._open_at[tag][-1])

    def handle_data(self, data: str) -> None:
        children = self._open[-1].children
        if children and isinstance(children[-1], str):
            children[-1] += data
        else:
            children.append(data)


def parse_html_tree(html: str) -> Element:
    """The document's tree (a `#document` root); never raises on malformed HTML."""
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder.root
