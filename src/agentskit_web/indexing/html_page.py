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
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Final

from ..docs_text import split_attr_list
from .docs_folder import Page, Section
from .html_tree import Element, parse_html_tree, remove_all
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
PERMALINK_MAX_NODES: Final = 64
"""Most nodes (elements and texts) below a permalink: one with more is not a sign, and its
check stays bounded however deep a page nests links inside a heading."""
PERMALINK_MAX_CHARS: Final = 256
"""Most characters, whitespace included, of a permalink's text."""

NO_LANGUAGE: Final = frozenset({"default", "none", "text", "plain", "plaintext", "nohighlight"})
_LANGUAGE_CLASS: Final = re.compile(r"^(?:language|lang|highlight|sourceCode)-([\w+#.-]+)$")

SKIP_NOINDEX: Final = "noindex"
SKIP_REDIRECT: Final = "redirect"
SKIP_NOT_FOUND: Final = "404"
SKIP_SEARCH: Final = "search"
SKIP_EMPTY: Final = "no text"
SKIP_FRAGMENT: Final = "not a page"
SKIP_LISTING: Final = "listing"
LISTING_PAGE_CLASSES: Final = frozenset(
    {
        "blog-list-page",
        "blog-tags-list-page",
        "blog-tags-post-list-page",
        "blog-archive-page",
        "docs-tags-list-page",
        "docs-tags-doc-list-page",
    }
)
"""Docusaurus's page classes (on `<html>`) for the lists it generates of other pages (blog
index and archive, tag pages): their text is the listed pages' excerpts, indexed at the
pages themselves."""
SEARCH_RESULTS_IDS: Final = frozenset({"search-results", "mkdocs-search-results"})
"""The results box of Sphinx's and MkDocs' search pages."""


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


def _meta(elements: Sequence[Element], name: str) -> str | None:
    for element in elements:
        if element.tag == "meta" and element.attrs.get("name", "").lower() == name:
            return element.attrs.get("content", "")
    return None


def skip_reason(elements: Sequence[Element]) -> str | None:
    """Why a file is not an indexable page.

    A page opts out with robots `noindex`, is a redirect stub (meta refresh), a 404 page,
    a search page or a generated list of other pages (Docusaurus's blog and tag lists);
    an HTML file without `<html>`, `<head>`, `<body>` or `<title>` is a fragment or a
    template a generator copied (a theme override), not a page.
    """
    if not any(element.tag in ("html", "head", "body", "title") for element in elements):
        return SKIP_FRAGMENT
    robots = _meta(elements, "robots")
    if robots is not None and "noindex" in robots.lower():
        return SKIP_NOINDEX
    for element in elements:
        if element.tag == "meta" and element.attrs.get("http-equiv", "").lower() == "refresh":
            return SKIP_REDIRECT
        if element.tag == "html" and element.classes & LISTING_PAGE_CLASSES:
            return SKIP_LISTING
    # The first <title> and the first <h1> say it (reading every one could read a page of
    # nested titles once per level).
    for tag in ("title", "h1"):
        found = next((element for element in elements if element.tag == tag), None)
        if found is not None:
            words = " ".join(found.text().split()).lower()
            if words.startswith("404") or words.startswith("page not found"):
                return SKIP_NOT_FOUND
    return None


def page_ids(elements: Sequence[Element]) -> frozenset[str]:
    """Every fragment target on the page: element ids and `<a name>`."""
    ids: set[str] = set()
    for element in elements:
        if element.id:
            ids.add(element.id)
        if element.tag == "a" and element.attrs.get("name", "").strip():
            ids.add(element.attrs["name"].strip())
    return frozenset(ids)


def find_body(
    elements: Sequence[Element], body_selector: Selector | None, theme: Theme | None
) -> tuple[Element | None, bool]:
    """The element holding the page's own content, and whether it was named (not `<body>`)."""
    for selector in (MARKER, body_selector, theme.body if theme else None):
        if selector is not None:
            found = selector.first_in(elements)
            if found is not None:
                return found, True
    for selector in (FALLBACK_BODY, FALLBACK_ROLE_MAIN, FALLBACK_ARTICLE):
        found = selector.first_in(elements)
        if found is not None:
            return found, True
    for element in elements:
        if element.tag == "body":
            return element, False
    return (elements[0] if elements else None), False


def _is_cookie_banner(element: Element) -> bool:
    """An element named like a consent banner (COOKIE_WORDS in its id or class), unless it
    is the docs' own text about cookies: a heading ("Set Cookie", id `set-cookie`) or a
    section that a heading opens (Sphinx's `<section id="cookies"><h2>`), whose id is
    made from that heading's words."""
    if element.tag in HEADING_TAGS or _opens_with_heading(element):
        return False
    names = (element.attrs.get("id", "") + " " + element.attrs.get("class", "")).lower()
    return any(word in names for word in COOKIE_WORDS)


def _opens_with_heading(element: Element) -> bool:
    """Whether a `section` element (or `.section`) has a heading as its first child element."""
    if element.tag != "section" and "section" not in element.classes:
        return False
    first = next((child for child in element.children if isinstance(child, Element)), None)
    return first is not None and first.tag in HEADING_TAGS


def _short_text(element: Element) -> str | None:
    """The element's text, or None past PERMALINK_MAX_NODES nodes or PERMALINK_MAX_CHARS."""
    parts: list[str] = []
    size = 0
    stack: list[Element | str] = [element]
    for _visit in range(PERMALINK_MAX_NODES):
        if not stack:
            return "".join(parts)
        node = stack.pop()
        if isinstance(node, str):
            parts.append(node)
            size += len(node)
            if size > PERMALINK_MAX_CHARS:
                return None
        else:
            stack.extend(reversed(node.children))
    return None if stack else "".join(parts)


def _is_permalink(element: Element, in_heading: bool) -> bool:
    """A permalink sign inside a heading (`<a href="#id">¶</a>`)."""
    if not in_heading or element.tag != "a" or not element.attrs.get("href", "").startswith("#"):
        return False
    text = _short_text(element)
    return text is not None and " ".join(text.split()).lower() in PERMALINK_SIGNS


def strip_chrome(body: Element, theme: Theme | None, *, named: bool) -> None:
    """Remove everything inside `body` that is not the page's text (in place).

    One walk from the top, which knows whether it is inside a heading and never enters
    what it removes, then one removal pass: linear in the page.
    """
    doomed: list[Element] = []
    in_heading = any(element.tag in HEADING_TAGS for element in (body, *body.ancestors()))
    stack: list[tuple[Element, bool]] = [
        (child, in_heading) for child in reversed(body.children) if isinstance(child, Element)
    ]
    while stack:
        element, in_heading = stack.pop()
        if (
            ALWAYS_STRIP.matches(element)
            or (theme is not None and theme.strip is not None and theme.strip.matches(element))
            or (not named and OUTSIDE_STRIP.matches(element))
            or _is_cookie_banner(element)
            or _is_permalink(element, in_heading)
        ):
            doomed.append(element)
            continue
        below = in_heading or element.tag in HEADING_TAGS
        stack.extend(
            (child, below) for child in reversed(element.children) if isinstance(child, Element)
        )
    remove_all(doomed)


def code_language(pre: Element) -> str | None:
    """The language the HTML names for a `<pre>` (on it, its `<code>`, or a wrapper)."""
    candidates = [pre, *(c for c in pre.children if isinstance(c, Element) and c.tag == "code")]
    candidates.extend(islice(pre.ancestors(), 3))
    for element in candidates:
        for name in sorted(element.classes):
            match = _LANGUAGE_CLASS.match(name)
            if match and match.group(1).lower() not in NO_LANGUAGE:
                return match.group(1).lower()
    return None


def code_text(pre: Element) -> str:
    """A code block's text as laid out: a `<br>` is a line break (Prism writes one per line)."""
    parts: list[str] = []
    stack: list[Element | str] = [pre]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            parts.append(node)
        elif node.tag == "br":
            parts.append("\n")
        else:
            stack.extend(reversed(node.children))
    return "".join(parts).strip("\n")


def _is_api_signature(node: Element | str) -> bool:
    """A Sphinx API entry's signature line: `<dt class="sig sig-object" id="mod.Name">`."""
    return (
        isinstance(node, Element) and node.tag == "dt" and "sig" in node.classes and bool(node.id)
    )


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


def _text_outside_tables(cell: Element) -> str:
    """A table cell's own text: a table nested in it is read as its own rows, not again here
    (a row holding its nested tables' text made a 1 MB page a 93 MB index, issue 36)."""
    parts: list[str] = []
    stack: list[Element | str] = list(reversed(cell.children))
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            parts.append(node)
        elif node.tag != "table":
            stack.extend(reversed(node.children))
    return "".join(parts)


def _tables_with_code(body: Element) -> set[int]:
    """The ids of the tables holding a `<pre>` (walked as blocks, so their code stays code).

    Found from each `<pre>` upwards, stopping where an earlier one went: every element is
    visited once, however deep tables nest.
    """
    tables: set[int] = set()
    seen: set[int] = set()
    for pre in body.iter():
        if pre.tag != "pre":
            continue
        for element in pre.ancestors():
            if id(element) in seen:
                break
            seen.add(id(element))
            if element.tag == "table":
                tables.add(id(element))
    return tables


class _Walker:
    """Turns a stripped body into sections (docs_folder's shape, so chunk_page applies)."""

    def __init__(self, ids: frozenset[str], tables_with_code: set[int]) -> None:
        self.ids = ids
        self.tables_with_code = tables_with_code
        self.sections = [Section(heading="", level=0, anchor=None, parts=[])]
        self.title = ""
        self.code_blocks: list[CodeBlock] = []
        self._buffer: list[str] = []
        self._api_sections: set[int] = set()

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
            code = code_text(node)
            if code.strip():
                block = CodeBlock(code, code_language(node))
                self.code_blocks.append(block)
                self.sections[-1].code.append(code)
        elif tag == "dl" and any(_is_api_signature(child) for child in node.children):
            self._api_entries(node)
        elif tag == "code":
            self._buffer.append(f"`{_clean(node.text())}`")
        elif tag == "table" and id(node) not in self.tables_with_code:
            self.flush()
            for row in node.iter():  # its rows and its nested tables' rows, in document order
                if row.tag == "tr":
                    cells = [
                        _clean(_text_outside_tables(cell))
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

    def _api_entries(self, entries: Element) -> None:
        """Sphinx's API entries (`dl.py > dt#module.Name`): each its own section at its id.

        The entry's title is its qualified name, its first paragraph its signature; the text
        after the list belongs to the section it was in, so that section resumes.
        """
        self.flush()
        outer = self.sections[-1]
        level = min(outer.level + 1, 6)
        for child in entries.children:
            if isinstance(child, Element) and _is_api_signature(child):
                self.flush()
                prename = [_clean(e.text()) for e in child.iter() if "sig-prename" in e.classes]
                name = [_clean(e.text()) for e in child.iter() if "sig-name" in e.classes]
                signature = _clean(child.text())
                title = "".join(prename + name) or signature
                if not prename and name and id(outer) in self._api_sections:
                    title = f"{outer.heading}.{title}"  # a method: `Widget.render`
                anchor = child.id if child.id in self.ids else outer.anchor
                section = Section(title, level, anchor, [signature])
                self._api_sections.add(id(section))
                self.sections.append(section)
            else:
                self.walk(child)
        self.flush()
        if self.sections[-1] is not outer:
            self.sections.append(Section(outer.heading, outer.level, outer.anchor, []))

    def _heading(self, heading: Element) -> None:
        # A build without attr_list shows `Title { #id }` as written: the braces are still
        # not part of the title a source is cited by.
        text = split_attr_list(_clean(heading.text()))[0]
        level = int(heading.tag[1])
        anchor = _heading_anchor(heading, self.ids)
        if anchor is None:
            # A heading without an id of its own (raw HTML in Markdown) is cited at its
            # parent section's anchor, the closest place on the page a link can open.
            parents = [s for s in self.sections[1:] if s.level < level]
            anchor = parents[-1].anchor if parents else None
        if level == 1 and not self.title:
            self.title = text
            anchor = None
        self.sections.append(Section(text, level, anchor, []))


def read_html_page(
    html: str, fallback_title: str, *, body_selector: Selector | None = None
) -> HtmlPage:
    """Read one built page: its sections, its theme's name, or why it is skipped."""
    root = parse_html_tree(html)
    # Listed once in document order: theme, skip rules, ids and body all scan the page.
    elements = list(root.iter())
    theme = detect_theme(elements)
    theme_name = theme.name if theme else None
    reason = skip_reason(elements)
    if reason is not None:
        return HtmlPage(Page(fallback_title, []), theme_name, skip=reason)
    ids = page_ids(elements)
    body, named = find_body(elements, body_selector, theme)
    if body is None:
        return HtmlPage(Page(fallback_title, []), theme_name, skip=SKIP_EMPTY)
    if any(element.id in SEARCH_RESULTS_IDS for element in body.iter()):
        # A search page's content is its results box (the mkdocs theme's search modal is on
        # every page, outside the main content: only a results box inside it counts).
        return HtmlPage(Page(fallback_title, []), theme_name, skip=SKIP_SEARCH)
    strip_chrome(body, theme, named=named)
    walker = _Walker(ids, _tables_with_code(body))
    walker.walk(body)
    walker.flush()
    title = walker.title
    if not title:
        title_element = next((e for e in elements if e.tag == "title"), None)
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
