"""Markdown -> the inert view tree, with markdown-it-py and raw HTML disabled.

Model and server text is markdown. It is parsed by markdown-it-py
(CommonMark, plus tables and strikethrough) with `html` off, so `<script>`
and friends are never HTML tokens: they stay text. The token stream is then
converted, without recursion, into `view_tree.Node`s from an allow-list; no
renderer output (HTML string) is ever produced or used.

Link and image policy (the browser layer applies its own URL parser again):
- a link is live only when `is_safe_link` accepts its normalised href
  (http/https without credentials, root-relative, `#anchor`); otherwise its
  label stays as plain text;
- an image loads only from a relative (same-origin) source; a remote image
  (absolute http/https) becomes a link to it, labelled with its alt text;
  any other source leaves its alt text (or "[image]") as text;
- fenced and indented code blocks become `pre > code` inside a block that
  carries a copy button (`data-action="copy-code"`);
- the answer's "More from the docs" (a paragraph that is exactly that label in
  bold, directly followed by a list, in one block) becomes a closed
  `details.ak-more > (summary, list)`, and each of its items that is a line
  followed by a quote a closed `details.ak-more-item` (the line its summary):
  built here from the parsed nodes, never from HTML in the text (`collapse_more`).

markdown-it-py is imported on first use: the widget boots without paying for
it, and CPython tooling that never renders does not need it.
"""

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from ...answering.answer_shape import MORE_FROM_THE_DOCS
from .render_budget import RenderBudget
from .render_limits import CODE_MAX_MARKERS, NESTING_MAX_DEPTH, TABLE_MAX_COLUMNS, TABLE_MAX_ROWS
from .tree import Child, Node, element, is_relative_image, is_safe_link, walk

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

IMAGE_PLACEHOLDER: Final = "[image]"
COPY_CODE_LABEL: Final = "Copy code"
IMAGE_LINK_CLASS: Final = "ak-image-link"
MORE_CLASS: Final = "ak-more"
"""The class of the collapsed "More from the docs" section (`collapse_more`)."""
MORE_ITEM_CLASS: Final = "ak-more-item"
"""The class of one of its lines, closed over its quote (`collapse_more`)."""
_BLOCK_TAGS: Final = frozenset({"p", "blockquote", "ul", "ol", "div", "table", "hr", "pre"})
"""Block nodes: a list item's line (a summary) holds none of them, only inline text."""
_LANGUAGE_CHARS: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-_.#"
)
_LANGUAGE_MAX_CHARS: Final = 32
_MAX_LIST_START: Final = 999_999_999  # CommonMark allows at most 9 digits
_ALIGNMENTS: Final = {
    "text-align:left": "left",
    "text-align:center": "center",
    "text-align:right": "right",
}

# Opening token type -> tag. Anything not listed renders its children only.
_CONTAINERS: Final = {
    "paragraph_open": "p",
    "blockquote_open": "blockquote",
    "bullet_list_open": "ul",
    "ordered_list_open": "ol",
    "list_item_open": "li",
    "table_open": "table",
    "thead_open": "thead",
    "tbody_open": "tbody",
    "tr_open": "tr",
    "th_open": "th",
    "td_open": "td",
    "em_open": "em",
    "strong_open": "strong",
    "s_open": "s",
}
_HEADINGS: Final = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})

# markdown-it stops nesting at `maxNesting` (20 levels; a list costs two: list
# and item) and silently drops the lines below that depth. Text nested that
# deeply (render_limits.NESTING_MAX_DEPTH) is shown as plain text instead, so
# nothing a reader was sent vanishes.
_CONTAINER_MARKER: Final = re.compile(r"[ \t]*(?:(>)|[-+*](?=[ \t]|$)|[0-9]{1,9}[.)](?=[ \t]|$))")

_parser: "MarkdownIt | None" = None


def markdown_parser() -> "MarkdownIt":
    """The shared parser: CommonMark + tables + strikethrough, raw HTML and linkify off."""
    global _parser
    if _parser is None:
        from ...package_steps import finish

        finish("markdown_it")  # an answer came while the widget was importing it in steps
        from markdown_it import MarkdownIt

        parser = MarkdownIt(
            "commonmark", {"html": False, "linkify": False, "typographer": False}
        ).enable(["table", "strikethrough"])
        parser.disable(["html_block", "html_inline"])
        _parser = parser
    return _parser


@dataclass
class _Open:
    """An element being built; `tag` None means transparent (children go to the parent)."""

    tag: str | None
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Child] = field(default_factory=list)


class _OutOfNodes(Exception):
    """The message's node budget is spent: the tree stops growing here."""


def _size(child: Child) -> int:
    """Nodes in a subtree: its elements and text runs."""
    return sum(1 for event, _item in walk(child) if event != "close")


class _TreeBuilder:
    """Turns a flat open/close token stream into nested nodes, iteratively, within a budget."""

    def __init__(self, budget: RenderBudget) -> None:
        self._stack: list[_Open] = [_Open(None)]
        self._budget = budget

    def _spend(self, count: int) -> None:
        if not self._budget.take_nodes(count):
            raise _OutOfNodes

    def open(self, tag: str | None, attrs: dict[str, str] | None = None) -> None:
        if tag is not None:
            self._spend(1)
        self._stack.append(_Open(tag, attrs or {}))

    def close(self) -> None:
        if len(self._stack) == 1:
            return  # an unbalanced close is ignored rather than trusted
        done = self._stack.pop()
        parent = self._stack[-1].children
        if done.tag is None:
            for child in done.children:
                self._place(child)  # already counted when it was added
        else:
            parent.append(element(done.tag, done.attrs, done.children))

    def add(self, child: Child) -> None:
        """Append a child; adjacent text is merged so the DOM gets one text node per run."""
        if isinstance(child, str) and not child:
            return
        children = self._stack[-1].children
        if not (isinstance(child, str) and children and isinstance(children[-1], str)):
            self._spend(1 if isinstance(child, str) else _size(child))
        self._place(child)

    def _place(self, child: Child) -> None:
        children = self._stack[-1].children
        if isinstance(child, str) and children and isinstance(children[-1], str):
            children[-1] += child
        else:
            children.append(child)

    def finish(self) -> tuple[Child, ...]:
        while len(self._stack) > 1:
            self.close()
        return tuple(self._stack[0].children)


def _language(info: str) -> str | None:
    word = info.strip().split(maxsplit=1)[0] if info.strip() else ""
    if not word or len(word) > _LANGUAGE_MAX_CHARS or not set(word) <= _LANGUAGE_CHARS:
        return None
    return word


# Characters that change how code reads without being seen: the bidi controls (embeddings,
# overrides, isolates, marks) and the zero-width ones. In a code block each is shown as a visible
# `<U+XXXX>` marker (the marker replaces it in the text, so "Copy code" copies what was seen),
# with a warning above the block ("Trojan Source", CVE-2021-42574).
INVISIBLE_IN_CODE: Final = frozenset(
    [
        *range(0x202A, 0x202F),  # LRE, RLE, PDF, LRO, RLO
        *range(0x2066, 0x206A),  # LRI, RLI, FSI, PDI
        0x200E,  # LRM
        0x200F,  # RLM
        0x061C,  # ARABIC LETTER MARK
        0x200B,  # ZERO WIDTH SPACE
        0x200C,  # ZERO WIDTH NON-JOINER
        0x200D,  # ZERO WIDTH JOINER
        0x2060,  # WORD JOINER
        0xFEFF,  # ZERO WIDTH NO-BREAK SPACE (BOM)
        0x180E,  # MONGOLIAN VOWEL SEPARATOR
        0x00AD,  # SOFT HYPHEN
    ]
)
_INVISIBLE: Final = re.compile("[" + "".join(map(chr, sorted(INVISIBLE_IN_CODE))) + "]")
INVISIBLE_WARNING: Final = (
    "This code contains {count} invisible or direction-changing character(s),"
    " shown as <U+...> markers; copying keeps the markers."
)


def _visible_code(code: str) -> tuple[tuple[Child, ...], int, bool]:
    """The code's text with each invisible character as a marked `<U+XXXX>`; their count; cut?

    After `CODE_MAX_MARKERS` markers the rest of the code is cut (never shown raw,
    so no hidden character slips through).
    """
    if _INVISIBLE.search(code) is None:
        return (code,), 0, False
    children: list[Child] = []
    start = 0
    count = 0
    for index, char in enumerate(code):
        if ord(char) in INVISIBLE_IN_CODE:
            if count == CODE_MAX_MARKERS:
                children.append(code[start:index])
                return tuple(children), count, True
            if index > start:
                children.append(code[start:index])
            children.append(element("span", {"class": "ak-invisible"}, (f"<U+{ord(char):04X}>",)))
            start = index + 1
            count += 1
    if start < len(code):
        children.append(code[start:])
    return tuple(children), count, False


def code_block(code: str, language: str | None = None) -> Node:
    """A code block with its copy button: `div.ak-codeblock > (button, pre > code)`.

    Invisible and bidi control characters are shown as markers, with a warning first.
    """
    return _code_block(code, language)[0]


def _code_block(code: str, language: str | None) -> tuple[Node, bool]:
    """The code block, and whether its markers reached `CODE_MAX_MARKERS` and cut it."""
    code_attrs = {"class": f"language-{language}"} if language else {}
    pre_attrs = {"class": "ak-code"}
    if language:
        pre_attrs["data-lang"] = language
    button = element(
        "button",
        {
            "type": "button",
            "class": "ak-copy-code",
            "data-action": "copy-code",
            "aria-label": COPY_CODE_LABEL,
        },
        ("Copy",),
    )
    text, hidden, cut = _visible_code(code)
    pre = element("pre", pre_attrs, (element("code", code_attrs, text),))
    if not hidden:
        return element("div", {"class": "ak-codeblock"}, (button, pre)), cut
    said = INVISIBLE_WARNING.format(count=hidden)
    warning = element("p", {"class": "ak-invisible-warning", "role": "note"}, (said,))
    return element("div", {"class": "ak-codeblock"}, (warning, button, pre)), cut


def _container_attrs(token: "Token", tag: str) -> dict[str, str]:
    attrs: dict[str, str] = {}
    if tag == "ol":
        start = token.attrs.get("start")
        if isinstance(start, int) and not isinstance(start, bool) and 0 <= start <= _MAX_LIST_START:
            attrs["start"] = str(start)
    elif tag in ("th", "td"):
        align = _ALIGNMENTS.get(str(token.attrs.get("style", "")))
        if align is not None:
            attrs["data-align"] = align
        if tag == "th":
            attrs["scope"] = "col"
    return attrs


def _link_attrs(token: "Token") -> dict[str, str] | None:
    href = token.attrs.get("href")
    if not isinstance(href, str) or not is_safe_link(href):
        return None
    attrs = {"href": href}
    title = token.attrs.get("title")
    if isinstance(title, str) and title:
        attrs["title"] = title
    return attrs


def _image(token: "Token") -> Child:
    """A same-origin image, a link to a remote one, or its alt text."""
    src = token.attrs.get("src")
    alt = token.content or ""
    title = token.attrs.get("title")
    if isinstance(src, str) and is_relative_image(src):
        # Never an <img> from here: an image loads by itself, with the reader's cookies. It is
        # a link (a path-relative source: its text, the source kept in data-source) that the
        # page turns into an image only under the site's `images` prefix (browser/dom_render).
        attrs = {"href": src} if is_safe_link(src) else {"data-source": src}
        if isinstance(title, str) and title:
            attrs["title"] = title
        tag = "a" if "href" in attrs else "span"
        return element(tag, {**attrs, "class": IMAGE_LINK_CLASS}, (alt or src,))
    if isinstance(src, str) and is_safe_link(src) and not src.startswith(("/", "#")):
        return element("a", {"href": src, "class": IMAGE_LINK_CLASS}, (alt or src,))
    return alt or IMAGE_PLACEHOLDER


def _inline(builder: _TreeBuilder, tokens: "list[Token]") -> None:
    for token in tokens:
        kind = token.type
        if kind in ("text", "text_special", "html_inline"):
            builder.add(token.content)
        elif kind == "softbreak":
            builder.add("\n")
        elif kind == "hardbreak":
            builder.add(element("br"))
        elif kind == "code_inline":
            builder.add(element("code", None, (token.content,)))
        elif kind == "image":
            builder.add(_image(token))
        elif kind == "link_open":
            attrs = _link_attrs(token)
            builder.open("a" if attrs is not None else None, attrs)
        elif token.nesting == 1:
            builder.open(_CONTAINERS.get(kind))
        elif token.nesting == -1:
            builder.close()
        else:
            builder.add(token.content)


def _block(builder: _TreeBuilder, token: "Token", budget: RenderBudget) -> None:
    kind = token.type
    if kind == "inline":
        _inline(builder, token.children or [])
    elif kind in ("fence", "code_block"):
        language = _language(token.info) if kind == "fence" else None
        block, cut = _code_block(token.content, language)
        budget.shortened = budget.shortened or cut
        builder.add(block)
    elif kind == "hr":
        builder.add(element("hr"))
    elif token.hidden and token.nesting == 1:  # tight-list paragraphs: children only
        builder.open(None)
    elif token.hidden and token.nesting == -1:
        builder.close()
    elif kind == "heading_open":
        builder.open(token.tag if token.tag in _HEADINGS else "p")
    elif token.nesting == 1:
        tag = _CONTAINERS.get(kind)
        builder.open(tag, _container_attrs(token, tag) if tag else None)
    elif token.nesting == -1:
        builder.close()
    elif token.content:  # html_block (disabled) or anything new: its text, inert
        builder.add(element("p", None, (token.content,)))


def _nesting_estimate(line: str) -> int:
    """An upper estimate of the nesting levels a line opens (quotes 1, list items 2, indent)."""
    depth = 0
    position = 0
    while (match := _CONTAINER_MARKER.match(line, position)) is not None and match.end() > position:
        depth += 1 if match.group(1) else 2
        position = match.end()
    indent = len(line) - len(line.lstrip(" \t"))
    return depth + indent // 2


def too_deep(source: str) -> bool:
    """True when some line may nest deeper than markdown-it renders (see above)."""
    return any(_nesting_estimate(line) >= NESTING_MAX_DEPTH for line in source.split("\n"))


class _TableLimits:
    """Counts the rows of the current table and the cells of the current row."""

    def __init__(self) -> None:
        self.rows = 0
        self.cells = 0

    def refuses(self, kind: str) -> bool:
        """True when the token opens a row or cell past `TABLE_MAX_ROWS`/`TABLE_MAX_COLUMNS`."""
        if kind == "table_open":
            self.rows = 0
        elif kind == "tr_open":
            self.rows += 1
            self.cells = 0
            return self.rows > TABLE_MAX_ROWS
        elif kind in ("th_open", "td_open"):
            self.cells += 1
            return self.cells > TABLE_MAX_COLUMNS
        return False


def _build(tokens: "list[Token]", budget: RenderBudget) -> tuple[Child, ...]:
    """The nodes for a token stream; rows and cells past the table limits are left out."""
    builder = _TreeBuilder(budget)
    table = _TableLimits()
    skipping = 0  # nesting inside a left-out row or cell
    try:
        for token in tokens:
            if skipping:
                skipping += token.nesting
                continue
            if token.nesting == 1 and table.refuses(token.type):
                budget.shortened = True
                skipping = 1
                continue
            _block(builder, token, budget)
    except _OutOfNodes:
        pass  # the budget marked the message shortened; keep what was built
    return builder.finish()


def _is_more_label(child: Child) -> bool:
    """A paragraph that is exactly `**More from the docs**`, nothing else in it."""
    if not (isinstance(child, Node) and child.tag == "p" and len(child.children) == 1):
        return False
    strong = child.children[0]
    return (
        isinstance(strong, Node)
        and strong.tag == "strong"
        and strong.children == (MORE_FROM_THE_DOCS,)
    )


def _closed_quote(item: Child, budget: RenderBudget) -> Child:
    """A list item that is a line then a blockquote, as `li > details > (summary, quote)`:
    the line is the summary, the quote opens under it. Any other item is kept; so is
    this one when the message's node budget has no room for the two new nodes."""
    if not (isinstance(item, Node) and item.tag == "li" and len(item.children) >= 2):
        return item
    *line, quote = item.children
    if not (isinstance(quote, Node) and quote.tag == "blockquote"):
        return item
    if any(isinstance(child, Node) and child.tag in _BLOCK_TAGS for child in line):
        return item
    if not budget.take_nodes(2):
        return item
    summary = element("summary", None, tuple(line))
    return element("li", None, (element("details", {"class": MORE_ITEM_CLASS}, (summary, quote)),))


def collapse_more(children: tuple[Child, ...], budget: RenderBudget) -> tuple[Child, ...]:
    """The block's nodes with "More from the docs" and the list right after it as one
    closed `<details>` (summary: the label): the reader sees the lead and opens the rest.
    Each item that is a line followed by its quote becomes a closed `<details>` of its
    own (`_closed_quote`).

    Only that exact structure is recognised, and only the parser's own nodes are moved
    (the label text is ours, the list keeps its checked links), so nothing in an answer
    gets a way to make markup; any other text renders as before. The section swap costs
    no nodes (`p > strong` become `details > summary`); an item's, two from `budget`.
    """
    collapsed: list[Child] = []
    for child in children:
        if (
            isinstance(child, Node)
            and child.tag in ("ul", "ol")
            and collapsed
            and _is_more_label(collapsed[-1])
        ):
            items = tuple(_closed_quote(item, budget) for item in child.children)
            listing = element(child.tag, dict(child.attrs), items)
            summary = element("summary", None, (MORE_FROM_THE_DOCS,))
            collapsed[-1] = element("details", {"class": MORE_CLASS}, (summary, listing))
        else:
            collapsed.append(child)
    return tuple(collapsed)


def markdown_to_tree(source: str, budget: RenderBudget | None = None) -> tuple[Child, ...]:
    """The block-level nodes for a markdown text, within `budget`; never raises on any string.

    Without a budget the text gets a whole message's (render_limits.py). What
    does not fit is cut and `budget.shortened` set. Text nested too deeply to
    render, or an unexpected parser failure, is shown as one plain paragraph.
    """
    if not isinstance(source, str) or not source:
        return ()
    budget = RenderBudget() if budget is None else budget
    if too_deep(source[: budget.chars + 1]):  # shown as plain text: only its characters count
        plain = budget.take_plain(source)
        if not plain or not budget.take_nodes(2):
            return ()
        return (element("p", {"class": "ak-plain"}, (plain,)),)
    source = budget.take_source(source)
    if not source:
        return ()
    try:
        return collapse_more(_build(markdown_parser().parse(source), budget), budget)
    except Exception:  # rendering must never fail a message: fall back to plain text
        return (element("p", None, (source,)),) if budget.take_nodes(2) else ()
