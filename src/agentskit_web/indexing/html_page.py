"""One built HTML page -> its main content as heading sections (or why it is skipped).

The page is read as a reader sees it: only the element that holds the page's
own content (an explicit `data-agentskit-body` marker, the owner's selector,
the recognised theme's rule, then `<main>`, `[role=main]`, `<article>`,
`<body>`), minus what is never text (themes.ALWAYS_STRIP, the theme's own
chrome, cookie banners, permalink signs). Headings start sections; each
section's anchor is an id that exists on the page: the heading's own `id`,
an `<a id>`/`<a name>` inside it, or the id of the `<section>` it opens (as
Sphinx writes it). Code blocks stay code, with their language when the HTML
names it (`language-x`, `highlight-x`); tables and admonitions are text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from .docs_folder import Page, Section
from .html_tree import Element, parse_html_tree
from .selector import Selector
from .themes import (
    ALWAYS_STRIP,
    COOKIE_WORDS,
    FALLBACK_ARTICLE,
    FALLBACK_BODY,
    FALLBACK_ROLE_MAIN,
    MARKER,
    OUTSIDE_STRIP,
    Theme,
    detect_theme,
)

HEADING_TAGS: Final = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
BLOCK_TAGS: Final = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "dd", "details", "div",
        "dl", "dt", "fieldset", "figcaption", "figure", "footer", "header", "hr", "li", "main",
        "ol", "p", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr",
        "ul", "br", "label",
    }
)  # fmt: skip
"""Elements that end a paragraph of text (everything else is inline)."""

PERMALINK_SIGNS: Final = frozenset({"", "¶", "#", "§", "🔗", "\u200b", "link"})
"""Text of a permalink inside a heading (`<a href="#id">¶</a>`): never part of a title."""

NO_LANGUAGE: Final = frozenset({"default", "none", "text", "plain", "plaintext", "nohighlight"})
_LANGUAGE_CLASS: Final = re.compile(r"^(?:language|lang|highlight|sourceCode)-([\w+#.-]+)$")

SKIP_NOINDEX: Final = "noindex"
SKIP_REDIRECT: Final = "redirect"
SKIP_NOT_FOUND: Final = "404"
SKIP_SEARCH: Final = "search"
SKIP_EMPTY: Final = "no text"
SKIP_FRAGMENT: Final = "not a page"


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """One code block as code, with its language when the HTML names it."""

    text: str
    language: str | None


@dataclass(slots=True)
class HtmlPage:
    """What one page yields: its sections (as docs_folder.Page), or why it was skipped."""

    page: Page
    theme: str | None
    skip: str | None = None
    code_blocks: list[CodeBlock] = field(default_factory=list)
    ids: frozenset[str] = frozenset()


def _meta(root: Element, name: str) -> str | None:
    for element in root.iter():
        if element.tag == "meta" and element.attrs.get("name", "").lower() == name:
            return element.attrs.get("content", "")
    return None


def skip_reason(root: Element) -> str | None:
    """Why a file is not an indexable page.

    A page opts out with robots `noindex`, is a redirect stub (meta refresh), a 404 page
    or a search page; an HTML file without `<html>`, `<head>`, `<body>` or `<title>` is a
    fragment or a template a generator copied (a theme override), not a page.
    """
    if not any(element.tag in ("html", "head", "body", "title") for element in root.iter()):
        return SKIP_FRAGMENT
    robots = _meta(root, "robots")
    if robots is not None and "noindex" in robots.lower():
        return SKIP_NOINDEX
    for element in root.iter():
        if element.tag == "meta" and element.attrs.get("http-equiv", "").lower() == "refresh":
            return SKIP_REDIRECT
        if element.attrs.get("id") in ("search-results", "mkdocs-search-results"):
            return SKIP_SEARCH
    for element in root.iter():
        if element.tag in ("title", "h1"):
            words = " ".join(element.text().split()).lower()
            if words.startswith("404") or words.startswith("page not found"):
                return SKIP_NOT_FOUND
            if element.tag == "h1":
                break
    return None


def page_ids(root: Element) -> frozenset[str]:
    """Every fragment target on the page: element ids and `<a name>`."""
    ids: set[str] = set()
    for element in root.iter():
        if element.id:
            ids.add(element.id)
        if element.tag == "a" and element.attrs.get("name", "").strip():
            ids.add(element.attrs["name"].strip())
    return frozenset(ids)


def find_body(
    root: Element, body_selector: Selector | None, theme: Theme | None
) -> tuple[Element | None, bool]:
    """The element holding the page's own content, and whether it was named (not `<body>`)."""
    for selector in (MARKER, body_selector, theme.body if theme else None):
        if selector is not None:
            found = selector.first(root)
            if found is not None:
                return found, True
    for selector in (FALLBACK_BODY, FALLBACK_ROLE_MAIN, FALLBACK_ARTICLE):
        found = selector.first(root)
        if found is not None:
            return found, True
    for element in root.iter():
        if element.tag == "body":
            return element, False
    return root, False


def _is_cookie_banner(element: Element) -> bool:
    names = (element.attrs.get("id", "") + " " + element.attrs.get("class", "")).lower()
    return any(word in names for word in COOKIE_WORDS)


def _is_permalink(element: Element) -> bool:
    if element.tag != "a" or not element.attrs.get("href", "").startswith("#"):
        return False
    if not any(heading.tag in HEADING_TAGS for heading in element.ancestors()):
        return False
    return " ".join(element.text().split()).lower() in PERMALINK_SIGNS


def strip_chrome(body: Element, theme: Theme | None, *, named: bool) -> None:
    """Remove everything inside `body` that is not the page's text (in place)."""
    doomed = [
        element
        for element in body.iter()
        if element is not body
        and (
            ALWAYS_STRIP.matches(element)
            or (theme is not None and theme.strip is not None and theme.strip.matches(element))
            or (not named and OUTSIDE_STRIP.matches(element))
            or _is_cookie_banner(element)
            or _is_permalink(element)
        )
    ]
    for element in doomed:
        element.remove()


def code_language(pre: Element) -> str | None:
    """The language the HTML names for a `<pre>` (on it, its `<code>`, or a wrapper)."""
    candidates = [pre, *(c for c in pre.children if isinstance(c, Element) and c.tag == "code")]
    candidates.extend(list(pre.ancestors())[:3])
    for element in candidates:
        for name in sorted(element.classes):
            match = _LANGUAGE_CLASS.match(name)
            if match and match.group(1).lower() not in NO_LANGUAGE:
                return match.group(1).lower()
    return None


def _heading_anchor(heading: Element, ids: frozenset[str]) -> str | None:
    candidates: list[str] = []
    if heading.id:
        candidates.append(heading.id)
    for element in heading.iter():
        if element.tag == "a":
            for name in ("id", "name"):
                value = element.attrs.get(name, "").strip()
                if value:
                    candidates.append(value)
    parent = heading.parent
    if parent is not None and (parent.tag == "section" or "section" in parent.classes):
        first = next(
            (c for c in parent.children if isinstance(c, Element) and c.tag in HEADING_TAGS),
            None,
        )
        if first is heading and parent.id:
            candidates.append(parent.id)
    return next((candidate for candidate in candidates if candidate in ids), None)


def _clean(text: str) -> str:
    return " ".join(text.split())


class _Walker:
    """Turns a stripped body into sections (docs_folder's shape, so chunk_page applies)."""

    def __init__(self, ids: frozenset[str]) -> None:
        self.ids = ids
        self.sections = [Section(heading="", level=0, anchor=None, parts=[])]
        self.title = ""
        self.code_blocks: list[CodeBlock] = []
        self._buffer: list[str] = []

    def flush(self) -> None:
        text = _clean("".join(self._buffer))
        if text:
            self.sections[-1].parts.append(text)
        self._buffer = []

    def walk(self, node: Element | str) -> None:
        if isinstance(node, str):
            self._buffer.append(node)
            return
        tag = node.tag
        if tag in HEADING_TAGS:
            self.flush()
            self._heading(node)
        elif tag == "pre":
            self.flush()
            code = node.text().strip("\n")
            if code.strip():
                block = CodeBlock(code, code_language(node))
                self.code_blocks.append(block)
                self.sections[-1].code.append(code)
        elif tag == "code":
            self._buffer.append(f"`{_clean(node.text())}`")
        elif tag == "table" and not any(e.tag == "pre" for e in node.iter()):
            self.flush()
            for row in node.iter():
                if row.tag == "tr":
                    cells = [
                        _clean(cell.text())
                        for cell in row.children
                        if isinstance(cell, Element) and cell.tag in ("td", "th")
                    ]
                    if any(cells):
                        self.sections[-1].parts.append(" | ".join(cells))
        elif tag in BLOCK_TAGS:
            self.flush()
            for child in node.children:
                self.walk(child)
            self.flush()
        else:
            for child in node.children:
                self.walk(child)

    def _heading(self, heading: Element) -> None:
        text = _clean(heading.text())
        level = int(heading.tag[1])
        anchor = _heading_anchor(heading, self.ids)
        if level == 1 and not self.title:
            self.title = text
            anchor = None
        self.sections.append(Section(text, level, anchor, []))


def read_html_page(
    html: str, fallback_title: str, *, body_selector: Selector | None = None
) -> HtmlPage:
    """Read one built page: its sections, its theme's name, or why it is skipped."""
    root = parse_html_tree(html)
    theme = detect_theme(root)
    theme_name = theme.name if theme else None
    reason = skip_reason(root)
    if reason is not None:
        return HtmlPage(Page(fallback_title, []), theme_name, skip=reason)
    ids = page_ids(root)
    body, named = find_body(root, body_selector, theme)
    if body is None:
        return HtmlPage(Page(fallback_title, []), theme_name, skip=SKIP_EMPTY)
    strip_chrome(body, theme, named=named)
    walker = _Walker(ids)
    walker.walk(body)
    walker.flush()
    title = walker.title
    if not title:
        title_element = next((e for e in root.iter() if e.tag == "title"), None)
        title = _clean(title_element.text()) if title_element is not None else ""
    page = Page(title or fallback_title, walker.sections)
    has_text = any(section.parts or section.code for section in page.sections)
    return HtmlPage(
        page,
        theme_name,
        skip=None if has_text else SKIP_EMPTY,
        code_blocks=walker.code_blocks,
        ids=ids,
    )
