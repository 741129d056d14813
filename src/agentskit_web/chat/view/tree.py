"""A neutral, inert view tree: what the widget shows, before any DOM exists.

Markdown (chat/markdown_tree.py) and components (chat/component_view.py) are
turned into this tree in pure Python, so everything a reader sees is decided
and tested on CPython. The browser layer only materialises it with
`createElement`/`createTextNode`/`setAttribute`, so it never parses markup.

Safety is structural, not a filter applied afterwards:
- tags come from `ALLOWED_TAGS` and attribute names from `ALLOWED_ATTRIBUTES`;
  no `on*` handler, no `style`, no `srcdoc` can ever be named;
- text is a plain `str` child, which becomes a text node: markup in it is
  just characters;
- `href` must be a safe link (`is_safe_link`) and `src` a same-origin
  relative image (`is_relative_image`); the browser layer re-normalises both
  with its own URL parser before using them.
Building a node that breaks a rule raises ValueError: only this package's
code builds nodes, so a violation is a programming error, never user input.
"""

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Union

from ...protocol.limits import PORTABLE_URL_MAX_CHARS
from ...protocol.source_list import URL_FORBIDDEN_CHARS, URL_SCHEME, is_portable_url
from ...protocol.text_metrics import js_length

ALLOWED_TAGS: Final = frozenset(
    {
        "a",
        "blockquote",
        "br",
        "button",
        "caption",
        "code",
        "dd",
        "del",
        "details",
        "div",
        "dl",
        "dt",
        "em",
        "fieldset",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "img",
        "input",
        "label",
        "legend",
        "li",
        "ol",
        "option",
        "p",
        "pre",
        "progress",
        "s",
        "section",
        "select",
        "span",
        "strong",
        "summary",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "tr",
        "ul",
    }
)
"""Every tag the widget may create for content. No script, style, iframe, svg, form, object."""

ALLOWED_ATTRIBUTES: Final = frozenset(
    {
        "alt",
        "aria-describedby",
        "aria-hidden",
        "aria-label",
        "aria-labelledby",
        "aria-live",
        "aria-valuemax",
        "aria-valuemin",
        "aria-valuenow",
        "checked",
        "class",
        "colspan",
        "data-action",
        "data-align",
        "data-choice",
        "data-event",
        "data-instance",
        "data-key",
        "data-lang",
        "data-source",
        "data-value",
        "disabled",
        "for",
        "href",
        "id",
        "max",
        "name",
        "placeholder",
        "required",
        "role",
        "scope",
        "src",
        "start",
        "title",
        "type",
        "value",
    }
)
"""Attribute names a node may carry: none of them runs code or loads anything but `src`."""


def _no_forbidden_url_chars(value: str) -> bool:
    """Controls, DEL, backslash, and (in a fragment or image path) a space are all refused."""
    return URL_FORBIDDEN_CHARS.search(value) is None and " " not in value


def is_safe_fragment(value: object) -> bool:
    """`#anchor` with no spaces, controls or backslashes (bounded like a PortableUrl)."""
    return (
        isinstance(value, str)
        and value.startswith("#")
        and js_length(value) <= PORTABLE_URL_MAX_CHARS
        and _no_forbidden_url_chars(value)
    )


def is_safe_link(value: object) -> bool:
    """A link target that may be live: http(s) without credentials, `/path`, or `#anchor`.

    `javascript:`/`data:`/`vbscript:` in any spelling, `//host`, `\\\\host`,
    `https:host`, controls anywhere: all refused (see `is_portable_url`).
    """
    return is_portable_url(value) or is_safe_fragment(value)


def is_relative_image(value: object) -> bool:
    """An image source that stays on the page's origin: `/x` or `x/y`, never `//`, no scheme.

    Path-relative sources resolve against the page URL, hence the same origin.
    """
    if not isinstance(value, str) or not value or js_length(value) > PORTABLE_URL_MAX_CHARS:
        return False
    if not _no_forbidden_url_chars(value) or value.startswith("//"):
        return False
    if value[0] == "/":
        return True
    if value[0] in "#?":
        return False
    # `a:b` before any `/` is a scheme (`data:`, `javascript:`, `https:`): refused.
    head = value.split("/", 1)[0]
    return URL_SCHEME.match(head) is None and ":" not in head


Child = Union["Node", str]


@dataclass(frozen=True, slots=True)
class Node:
    """One element: an allowed tag, allowed attributes (ordered pairs) and children.

    Construct with `element(...)`, which checks the rules; the dataclass
    itself only re-checks the tag so a stray direct construction still fails.
    """

    tag: str
    attrs: tuple[tuple[str, str], ...] = ()
    children: tuple[Child, ...] = ()

    def __post_init__(self) -> None:
        if self.tag not in ALLOWED_TAGS:
            raise ValueError(f"tag {self.tag!r} is not allowed")

    def attr(self, name: str) -> str | None:
        """The value of attribute `name`, or None."""
        for key, value in self.attrs:
            if key == name:
                return value
        return None


def _check_attribute(tag: str, name: str, value: str) -> None:
    if name not in ALLOWED_ATTRIBUTES:
        raise ValueError(f"attribute {name!r} is not allowed")
    if not isinstance(value, str):
        raise ValueError(f"attribute {name!r} must be text")
    if name == "href" and not (tag == "a" and is_safe_link(value)):
        raise ValueError("unsafe href")
    if name == "src" and not (tag == "img" and is_relative_image(value)):
        raise ValueError("unsafe src")


def element(
    tag: str,
    attrs: Mapping[str, str] | None = None,
    children: Sequence[Child] = (),
) -> Node:
    """Build a checked node; None-valued attributes must be filtered out by the caller."""
    pairs: list[tuple[str, str]] = []
    for name, value in (attrs or {}).items():
        _check_attribute(tag, name, value)
        pairs.append((name, value))
    kept = tuple(child for child in children if not (isinstance(child, str) and child == ""))
    for child in kept:
        if not isinstance(child, Node | str):
            raise ValueError("a child is a Node or text")
    return Node(tag, tuple(pairs), kept)


def walk(root: Child) -> Iterator[tuple[str, Child]]:
    """Depth-first events without recursion: ("open", node), ("text", str), ("close", node)."""
    stack: list[tuple[bool, Child]] = [(False, root)]
    while stack:
        closing, item = stack.pop()
        if isinstance(item, str):
            yield "text", item
            continue
        if closing:
            yield "close", item
            continue
        yield "open", item
        stack.append((True, item))
        stack.extend((False, child) for child in reversed(item.children))


_BLOCK_TAGS: Final = frozenset(
    {"p", "div", "li", "tr", "pre", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "section"}
)


def text_of(root: Child) -> str:
    """The visible text of a tree, block elements on their own lines (for copy and tests)."""
    pieces: list[str] = []
    for event, item in walk(root):
        if event == "text":
            assert isinstance(item, str)
            pieces.append(item)
        elif isinstance(item, Node) and (
            item.tag == "br" or (item.tag in _BLOCK_TAGS and event == "close")
        ):
            pieces.append("\n")
    return "".join(pieces)


def links_of(root: Child) -> list[str]:
    """Every `href` in the tree, in document order."""
    return [
        href
        for event, item in walk(root)
        if event == "open" and isinstance(item, Node) and (href := item.attr("href")) is not None
    ]


def images_of(root: Child) -> list[str]:
    """Every image `src` in the tree, in document order."""
    return [
        src
        for event, item in walk(root)
        if event == "open"
        and isinstance(item, Node)
        and item.tag == "img"
        and (src := item.attr("src")) is not None
    ]
