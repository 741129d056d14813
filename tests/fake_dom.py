"""A tiny stand-in DOM for the browser layer's unit tests (CPython has no `js`).

Only the calls the widget's renderer makes exist. Setting `innerHTML`,
`outerHTML` or calling `insertAdjacentHTML`/`write` raises, so a test fails
if any code path tries to parse markup. `FakeUrl` imitates the WHATWG `URL`
fields the renderer reads, using `urllib.parse` (good enough for inputs the
view tree already vetted, plus a few hostile ones).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urljoin, urlsplit

FORBIDDEN = {"innerHTML", "outerHTML"}


class FakeNode:
    parent: FakeElement | None = None

    def remove(self) -> None:
        if self.parent is not None:
            self.parent.children.remove(self)
            self.parent = None


class FakeText(FakeNode):
    def __init__(self, data: str) -> None:
        self.data = data
        self.appends = 0

    def appendData(self, more: str) -> None:
        self.data += more
        self.appends += 1

    @property
    def textContent(self) -> str:
        return self.data


class FakeElement(FakeNode):
    offsetTop = 0  # layout stand-in: where the element starts in its offsetParent

    def __init__(self, tag: str, namespace: str | None = None) -> None:
        object.__setattr__(self, "tag", tag)
        object.__setattr__(self, "namespace", namespace)
        object.__setattr__(self, "attributes", {})
        object.__setattr__(self, "children", [])
        object.__setattr__(self, "properties", {})

    def __setattr__(self, name: str, value: Any) -> None:
        if name in FORBIDDEN:
            raise AssertionError(f"{name} must never be used")
        if name == "textContent":
            for child in list(self.children):
                child.parent = None
            self.children.clear()
            if value:
                self.appendChild(FakeText(str(value)))
            return
        object.__setattr__(self, name, value)

    def insertAdjacentHTML(self, *_args: Any) -> None:
        raise AssertionError("insertAdjacentHTML must never be used")

    def setAttribute(self, name: str, value: str) -> None:
        assert isinstance(value, str)
        self.attributes[name] = value

    def getAttribute(self, name: str) -> str | None:
        return self.attributes.get(name)

    def removeAttribute(self, name: str) -> None:
        self.attributes.pop(name, None)

    def appendChild(self, child: FakeNode) -> FakeNode:
        if isinstance(child, FakeFragment):
            for item in list(child.children):
                self.appendChild(item)
            child.children.clear()
            return child
        child.remove()
        child.parent = self
        self.children.append(child)
        return child

    def insertBefore(self, child: FakeNode, before: FakeNode | None) -> FakeNode:
        if before is None:
            return self.appendChild(child)
        items = list(child.children) if isinstance(child, FakeFragment) else [child]
        if isinstance(child, FakeFragment):
            for item in items:
                item.parent = None
            child.children.clear()
        for item in items:
            item.remove()
            item.parent = self
            self.children.insert(self.children.index(before), item)
        return child

    def replaceChildren(self, *items: FakeNode) -> None:
        for child in list(self.children):
            child.parent = None
        self.children.clear()
        for item in items:
            self.appendChild(item)

    @property
    def textContent(self) -> str:
        pieces: list[str] = []
        stack: list[FakeNode] = list(reversed(self.children))
        while stack:
            node = stack.pop()
            if isinstance(node, FakeText):
                pieces.append(node.data)
            elif isinstance(node, FakeElement):
                stack.extend(reversed(node.children))
        return "".join(pieces)

    def walk(self) -> list[FakeElement]:
        found: list[FakeElement] = []
        stack: list[FakeNode] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, FakeElement):
                found.append(node)
                stack.extend(reversed(node.children))
        return found

    def querySelectorAll(self, selector: str) -> list[FakeElement]:
        return [node for node in self.walk()[1:] if _matches(node, selector)]

    def querySelector(self, selector: str) -> FakeElement | None:
        found = self.querySelectorAll(selector)
        return found[0] if found else None


class FakeFragment(FakeElement):
    def __init__(self) -> None:
        super().__init__("#fragment")


_ATTRIBUTE = re.compile(r'^(?P<tag>[a-z0-9]*)(?:\[(?P<name>[a-z-]+)(?:="(?P<value>[^"]*)")?\])?$')
_CLASS = re.compile(r"^(?P<tag>[a-z0-9]*)\.(?P<cls>[a-z0-9-]+)$")


def _matches(node: FakeElement, selector: str) -> bool:
    """Tag, `.class`, `[attr]` and `[attr="value"]` selectors (enough for the renderer)."""
    if (found := _CLASS.match(selector)) is not None:
        tag_ok = not found["tag"] or node.tag == found["tag"]
        return tag_ok and found["cls"] in node.attributes.get("class", "").split()
    found = _ATTRIBUTE.match(selector)
    if found is None:
        raise ValueError(f"unsupported selector {selector!r}")
    if found["tag"] and node.tag != found["tag"]:
        return False
    if found["name"] is None:
        return True
    if found["name"] not in node.attributes:
        return False
    return found["value"] is None or node.attributes[found["name"]] == found["value"]


class FakeDocument:
    def __init__(self) -> None:
        self.created: list[str] = []

    def createElement(self, tag: str) -> FakeElement:
        self.created.append(tag)
        return FakeElement(tag)

    def createElementNS(self, namespace: str, tag: str) -> FakeElement:
        self.created.append(tag)
        return FakeElement(tag, namespace)

    def createTextNode(self, data: str) -> FakeText:
        return FakeText(data)

    def createDocumentFragment(self) -> FakeFragment:
        return FakeFragment()


class FakeUrl:
    """The WHATWG URL fields the renderer reads."""

    def __init__(self, value: str, base: str) -> None:
        if re.search(r"[\x00-\x1f]", value):
            value = re.sub(r"[\t\n\r]", "", value)
        joined = urljoin(base, value)
        parts = urlsplit(joined)
        if not parts.scheme:
            raise ValueError("Invalid URL")
        self.protocol = parts.scheme.lower() + ":"
        self.username = parts.username or ""
        self.password = parts.password or ""
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        self.origin = (
            f"{parts.scheme}://{host}{port}" if parts.scheme in ("http", "https") else "null"
        )
        self.href = joined
        self.pathname = parts.path or "/"
        self.search = f"?{parts.query}" if parts.query else ""


def make_url(value: str, base: str) -> FakeUrl:
    return FakeUrl(value, base)
