"""The view tree and the render plan, materialised in the page's DOM.

This is the only code that turns content into DOM, and it uses nothing but
`document.createElement`, `document.createTextNode`, `setAttribute`,
`appendData` and node insertion. No HTML string is ever parsed into the page
(no markup-setting property or method is used), for any content.

Defence in depth: the view tree (chat/view_tree.py) already allows only
known tags and attributes and only safe URLs. Here every `href` and `src` is
parsed again by the browser's own `URL` parser against the page address:
- a link stays live only as an http(s) URL without credentials, written back
  in its normalised form, with `rel="noopener noreferrer"`, opened in the same tab or
  (the element's `links="new-tab"`) in a new one;
- an image loads only when it resolves to the page's own origin; a remote
  image becomes a link to it, anything else its alt text.

`MessageView` applies the render plan's operations to one message: the tail
of a streaming text segment is a few text nodes extended with `appendData`
(a new node every 4,096 chars, so no append copies the whole answer), and
finished blocks are built once and inserted before the tail.

The document and the URL constructor are passed in, so this module runs on
CPython against a stand-in DOM in the unit tests.
"""

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from ..chat.message import ChatMessage, message_parts
from ..chat.view.markdown_tree import IMAGE_LINK_CLASS
from ..chat.view.render_plan import BlocksReady, MessageRenderPlan, NodeReady, RenderOp, TailAppend
from ..chat.view.tree import Child, Node, walk
from ..chat.widget_config import image_path_allowed

TAIL_NODE_MAX_CHARS: Final = 4_096
LINK_TARGET: Final = "_blank"
LINK_REL: Final = "noopener noreferrer"
_URL_ATTRIBUTES: Final = frozenset({"href", "src"})
_HTTP_PROTOCOLS: Final = frozenset({"http:", "https:"})

UrlConstructor = Callable[[str, str], Any]
"""`(url, base) -> URL object` (the page's `URL.new`); raises on an invalid URL."""


class UrlPolicy:
    """Re-checks view-tree URLs with the browser's URL parser against the page address."""

    def __init__(
        self,
        make_url: UrlConstructor,
        page_href: str,
        image_prefix: str | None = None,
        *,
        new_tab: bool = False,
    ) -> None:
        self.new_tab = new_tab
        """Whether links open in a new tab (`target=_blank`, `rel=noopener noreferrer`)."""
        self._make_url = make_url
        self._base = page_href
        self.origin = self._origin(page_href)
        self.image_prefix = image_prefix

    def _parse(self, value: str) -> Any:
        try:
            return self._make_url(value, self._base)
        except Exception:  # the browser refuses it: not a URL
            return None

    def _origin(self, href: str) -> str | None:
        url = self._parse(href)
        return None if url is None else str(url.origin)

    def link(self, value: str) -> str | None:
        """The normalised absolute URL of a link that may be live, else None."""
        url = self._parse(value)
        if url is None or str(url.protocol) not in _HTTP_PROTOCOLS:
            return None
        if str(url.username) or str(url.password):
            return None
        return str(url.href)

    def image(self, value: str) -> str | None:
        """The normalised URL of an image that may load, else None (it is shown as a link).

        An image loads by itself, with the reader's cookies, so an answer must not choose
        what it fetches: only same-origin http(s) images whose normalised path lies under
        the site's `images` prefix load; with no prefix, none does.
        """
        if self.image_prefix is None:
            return None
        url = self._parse(value)
        href = self.link(value)
        if url is None or href is None or self._origin(href) != self.origin:
            return None
        if not image_path_allowed(str(url.pathname), self.image_prefix) or str(url.search):
            return None
        return href


class DomBuilder:
    """Builds DOM nodes from view-tree nodes, iteratively (deep trees cannot overflow)."""

    def __init__(self, document: Any, policy: UrlPolicy) -> None:
        self.document = document
        self.policy = policy
        self.calls = 0  # DOM calls made, for the render-work benchmark and tests

    def text(self, value: str) -> Any:
        self.calls += 1
        return self.document.createTextNode(value)

    def _element(self, tag: str, attrs: Iterable[tuple[str, str]]) -> Any:
        element = self.document.createElement(tag)
        self.calls += 1
        for name, value in attrs:
            element.setAttribute(name, value)
            self.calls += 1
        return element

    def _open(self, node: Node) -> tuple[Any, bool]:
        """The DOM element for `node` (maybe a safer substitute); keep its children?"""
        plain = [(name, value) for name, value in node.attrs if name not in _URL_ATTRIBUTES]
        if node.attr("class") == IMAGE_LINK_CLASS:
            image = self._allowed_image(node)
            if image is not None:
                return image, False
        if node.tag == "a":
            href = self.policy.link(node.attr("href") or "")
            if href is None:
                return self._element("span", plain), True
            link = self._element("a", [*plain, ("href", href)])
            self._target(link)
            return link, True
        if node.tag == "img":
            return self._image(node, plain), False
        return self._element(node.tag, plain), True

    def _target(self, link: Any) -> None:
        """`rel="noopener noreferrer"` always (no Referer to another site, same tab or not);
        a new tab only when the site asked for it (`UrlPolicy.new_tab`)."""
        link.setAttribute("rel", LINK_REL)
        self.calls += 1
        if self.policy.new_tab:
            link.setAttribute("target", LINK_TARGET)
            self.calls += 1

    def _allowed_image(self, node: Node) -> Any:
        """An answer's image as <img>, when the site's `images` prefix allows its source."""
        source = node.attr("href") or node.attr("data-source") or ""
        local = self.policy.image(source)
        if local is None:
            return None
        label = next((child for child in node.children if isinstance(child, str)), "")
        alt = "" if label == source else label  # the text was the source only for want of alt
        attrs = [("src", local), ("alt", alt)]
        title = node.attr("title")
        return self._element("img", [*attrs, ("title", title)] if title else attrs)

    def _image(self, node: Node, plain: list[tuple[str, str]]) -> Any:
        src = node.attr("src") or ""
        alt = node.attr("alt") or ""
        local = self.policy.image(src)
        if local is not None:
            return self._element("img", [*plain, ("src", local)])
        label = alt or src
        remote = self.policy.link(src)
        holder = self._element("a" if remote else "span", [("class", "ak-image-link")])
        if remote is not None:
            holder.setAttribute("href", remote)
            self.calls += 1
            self._target(holder)
        holder.appendChild(self.text(label or "[image]"))
        self.calls += 1
        return holder

    def build(self, root: Child) -> Any:
        """One DOM node (element or text) for a view-tree child."""
        if isinstance(root, str):
            return self.text(root)
        stack: list[tuple[Any, bool]] = []
        built: Any = None
        for event, item in walk(root):
            if event == "open":
                assert isinstance(item, Node)
                element, keep = self._open(item)
                if stack and stack[-1][1]:
                    stack[-1][0].appendChild(element)
                    self.calls += 1
                stack.append((element, keep))
            elif event == "close":
                built, _keep = stack.pop()
            elif stack and stack[-1][1]:
                assert isinstance(item, str)
                stack[-1][0].appendChild(self.text(item))
                self.calls += 1
        return built

    def fragment(self, children: Iterable[Child]) -> Any:
        """A DocumentFragment holding the built children (one insertion into the page)."""
        holder = self.document.createDocumentFragment()
        self.calls += 1
        for child in children:
            holder.appendChild(self.build(child))
            self.calls += 1
        return holder


class _Segment:
    """A run of merged text: finished blocks, then the plain-text tail."""

    def __init__(self, builder: DomBuilder, parent: Any) -> None:
        self.builder = builder
        self.element = builder._element("div", [("class", "ak-segment")])
        self.tail = builder._element("div", [("class", "ak-tail")])
        self.element.appendChild(self.tail)
        parent.appendChild(self.element)
        self._last: Any = None
        self._last_length = 0

    def append_tail(self, text: str) -> None:
        if self._last is not None and self._last_length + len(text) <= TAIL_NODE_MAX_CHARS:
            self._last.appendData(text)
            self._last_length += len(text)
            self.builder.calls += 1
            return
        self._last = self.builder.text(text)
        self._last_length = len(text)
        self.tail.appendChild(self._last)
        self.builder.calls += 1

    def blocks_ready(self, nodes: tuple[Child, ...], tail: str) -> None:
        if nodes:
            self.element.insertBefore(self.builder.fragment(nodes), self.tail)
            self.builder.calls += 1
        self.tail.replaceChildren()
        self._last = None
        self._last_length = 0
        if tail:
            self.append_tail(tail)


class MessageBody:
    """The content area of one assistant message, fed with render operations."""

    def __init__(self, builder: DomBuilder, element: Any, manifest: Any = None) -> None:
        self.builder = builder
        self.element = element
        self.plan = MessageRenderPlan(manifest)
        self._segments: dict[int, _Segment] = {}
        self.frames: dict[str, Mapping[str, Any]] = {}

    def append_parts(self, parts: Iterable[Mapping[str, Any]]) -> None:
        """Render newly decoded parts (only what is new)."""
        parts = list(parts)
        for part in parts:
            if part.get("kind") == "component":
                frame = part.get("frame")
                if isinstance(frame, Mapping) and isinstance(frame.get("instanceId"), str):
                    self.frames[frame["instanceId"]] = frame
        self.apply(self.plan.append(parts))

    def finish(self) -> None:
        """The message stopped growing: the last tail becomes rendered markdown."""
        self.apply(self.plan.finish())

    def apply(self, ops: Iterable[RenderOp]) -> None:
        for op in ops:
            if isinstance(op, TailAppend):
                self._segment(op.segment).append_tail(op.text)
            elif isinstance(op, BlocksReady):
                self._segment(op.segment).blocks_ready(op.nodes, op.tail)
            elif isinstance(op, NodeReady):
                self.element.appendChild(self.builder.build(op.node))
                self.builder.calls += 1

    def _segment(self, number: int) -> _Segment:
        segment = self._segments.get(number)
        if segment is None:
            segment = _Segment(self.builder, self.element)
            self._segments[number] = segment
        return segment


def render_message_body(
    builder: DomBuilder, element: Any, message: ChatMessage, manifest: Any = None
) -> MessageBody:
    """A settled message (loaded, or restored from another tab), rendered in one go."""
    body = MessageBody(builder, element, manifest)
    body.append_parts(message_parts(message))
    body.finish()
    return body
