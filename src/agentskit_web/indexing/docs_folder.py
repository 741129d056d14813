"""Reading a folder of Markdown (and plain HTML) pages into chunks, one per heading section.

Chunking rule: every heading starts a chunk, which keeps its page path, page
title, heading text and anchor, so a cited source links to the exact section.
A section longer than `CHUNK_MAX_CHARS` is split on paragraph boundaries into
several chunks that share its anchor.

URL and anchor rules (where a cited source points) live in docs_text.py, shared
with the site build so a citation lands on the heading the build published.
"""

import fnmatch
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from typing import Final, Literal

from markdown_it.token import Token

from ..answering.changelog import is_version_heading
from ..answering.chunk import Chunk
from ..answering.page_roles import role_marks
from ..docs_text import DOCS_MARKDOWN, HeadingSlugger, heading_text, take_attr_list
from .markdown_dialect import MkDocsSlugger, strip_html, to_commonmark

HeadingIds = Literal["github", "mkdocs"]
"""Which rule names a heading without an explicit id: `github` (docs_text.HeadingSlugger: our
demo build's, repeats get `-1`) or `mkdocs` (Python-Markdown's toc: repeats get `_1`)."""

CHUNK_MAX_CHARS: Final = 2_000
"""Longest chunk body; longer sections are split so BM25 length normalisation stays fair."""

DOC_SUFFIXES: Final = (".md", ".markdown", ".html", ".htm")


@dataclass(slots=True)
class Section:
    heading: str
    level: int
    anchor: str | None
    parts: list[str]
    code: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Page:
    title: str
    sections: list[Section]


def _inline_text(token: Token) -> str:
    """Plain text of an inline token: markup dropped, inline code kept in backticks."""
    pieces: list[str] = []
    for child in token.children or []:
        if child.type == "text":
            pieces.append(strip_html(child.content))
        elif child.type == "code_inline":
            pieces.append(f"`{child.content}`")
        elif child.type in ("softbreak", "hardbreak"):
            pieces.append(" ")
        elif child.type == "image":
            pieces.append(child.content)
    return "".join(pieces).strip()


def parse_markdown(text: str, fallback_title: str, heading_ids: HeadingIds = "github") -> Page:
    """Split a Markdown page into heading sections with their plain text.

    The MkDocs/Material dialect is read as text first (markdown_dialect.to_commonmark); a
    heading's `{ #id }` is its anchor, other headings get ids by the `heading_ids` rule.
    """
    tokens = DOCS_MARKDOWN.parse(to_commonmark(text))
    slugger: HeadingSlugger | MkDocsSlugger = (
        MkDocsSlugger() if heading_ids == "mkdocs" else HeadingSlugger()
    )
    sections = [Section(heading="", level=0, anchor=None, parts=[])]
    title = ""
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.type == "heading_open" and index + 1 < len(tokens):
            level = int(token.tag[1])
            explicit = take_attr_list(tokens[index + 1])
            raw_heading = heading_text(tokens[index + 1])
            heading = " ".join(strip_html(raw_heading).split())
            if explicit is not None:
                slugger.reserve(explicit)
                anchor = explicit
            else:
                # MkDocs slugs the heading's text as rendered (tags gone); our demo build
                # slugs the heading's source text, so the demo's rule keeps it.
                anchor = slugger.slug(heading if heading_ids == "mkdocs" else raw_heading)
            if level == 1 and not title:
                title = heading
                anchor_or_none: str | None = None
            else:
                anchor_or_none = anchor or None
            sections.append(Section(heading, level, anchor_or_none, []))
            index += 3
            continue
        if token.type == "inline":
            text = _inline_text(token)
            if text:  # a line of HTML tags only (`<div markdown>`) is no text
                sections[-1].parts.append(text)
        elif token.type in ("fence", "code_block"):
            sections[-1].code.append(token.content.rstrip("\n"))
        index += 1
    return Page(title=title or fallback_title, sections=sections)


class _HtmlSections(HTMLParser):
    """Collects heading sections from an HTML page (script/style/nav ignored)."""

    _SKIP: Final = frozenset({"script", "style", "nav", "template", "noscript", "svg"})
    _BLOCK: Final = frozenset({"p", "li", "td", "th", "dd", "dt", "blockquote", "div"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.slugger = HeadingSlugger()
        self.sections = [Section(heading="", level=0, anchor=None, parts=[])]
        self.title = ""
        self.doc_title = ""
        self._skip_depth = 0
        self._in_title = False
        self._heading: tuple[int, str | None] | None = None
        self._heading_text: list[str] = []
        self._buffer: list[str] = []
        self._pre_depth = 0
        self._code: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self._skip_depth += 1
        elif tag == "title":
            self._in_title = True
        elif re.fullmatch(r"h[1-6]", tag):
            self._flush()
            ids = [value for name, value in attrs if name == "id" and value]
            self._heading = (int(tag[1]), ids[0] if ids else None)
            self._heading_text = []
        elif tag == "pre":
            self._flush()
            self._pre_depth += 1
        elif tag in self._BLOCK or tag == "br":
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre" and self._pre_depth:
            self._pre_depth -= 1
            if not self._pre_depth:
                code = "".join(self._code).strip("\n")
                if code.strip():
                    self.sections[-1].code.append(code)
                self._code = []
        elif tag in self._SKIP:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif tag == "title":
            self._in_title = False
        elif re.fullmatch(r"h[1-6]", tag) and self._heading is not None:
            self._close_heading()
        elif tag in self._BLOCK:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.doc_title += data
        elif self._skip_depth:
            return
        elif self._heading is not None:
            self._heading_text.append(data)
        elif self._pre_depth:
            self._code.append(data)
        else:
            self._buffer.append(data)

    def _close_heading(self) -> None:
        assert self._heading is not None
        level, explicit = self._heading
        heading = " ".join("".join(self._heading_text).split())
        if explicit is not None:
            self.slugger.reserve(explicit)
            anchor: str | None = explicit
        else:
            anchor = self.slugger.slug(heading) or None
        if level == 1 and not self.title:
            self.title = heading
            anchor = explicit
        self.sections.append(Section(heading, level, anchor, []))
        self._heading = None

    def _flush(self) -> None:
        text = " ".join("".join(self._buffer).split())
        if text:
            self.sections[-1].parts.append(text)
        self._buffer = []

    def close(self) -> None:
        super().close()
        self._flush()


def parse_html(text: str, fallback_title: str) -> Page:
    """Split an HTML page into heading sections with their plain text."""
    parser = _HtmlSections()
    parser.feed(text)
    parser.close()
    title = parser.title or " ".join(parser.doc_title.split()) or fallback_title
    return Page(title=title, sections=parser.sections)


# --------------------------------------------------------------------------- index


def _split_long(parts: list[str]) -> Iterable[str]:
    """Join paragraphs into bodies of at most CHUNK_MAX_CHARS (a giant paragraph is cut)."""
    current: list[str] = []
    size = 0
    for part in parts:
        for start in range(0, max(len(part), 1), CHUNK_MAX_CHARS):
            piece = part[start : start + CHUNK_MAX_CHARS]
            if current and size + len(piece) + 1 > CHUNK_MAX_CHARS:
                yield "\n".join(current)
                current, size = [], 0
            current.append(piece)
            size += len(piece) + 1
    if current:
        yield "\n".join(current)


def history_marks(sections: Sequence[Section]) -> list[bool]:
    """For each section, whether it is part of a change log: its own heading or a heading
    enclosing it is a version number (`changelog.is_version_heading`).

    Keep a Changelog files and Sphinx's CHANGES put a version's text in sub-sections
    ("Added", "Bugs fixed") whose headings say nothing of a version; only here, where
    every heading above a section is known, can they be told from the docs."""
    enclosing: list[tuple[int, bool]] = []  # (level, marked) of the open headings
    marks: list[bool] = []
    for section in sections:
        while enclosing and enclosing[-1][0] >= section.level:
            enclosing.pop()
        mark = (bool(enclosing) and enclosing[-1][1]) or is_version_heading(section.heading)
        enclosing.append((section.level, mark))
        marks.append(mark)
    return marks


def chunk_page(page: Page, path: str) -> list[Chunk]:
    """The chunks of one parsed page; empty sections are skipped."""
    chunks: list[Chunk] = []
    roles = role_marks(
        path, page.title, [(s.level, s.heading or page.title) for s in page.sections]
    )
    marks = zip(page.sections, history_marks(page.sections), roles, strict=True)
    for section, history, role in marks:
        parts = [part for part in section.parts if part.strip()]
        code = "\n".join(block for block in section.code if block.strip())[:CHUNK_MAX_CHARS]
        if not parts and not code:
            continue
        heading = section.heading or page.title
        bodies = list(_split_long(parts)) or [""]
        for number, body in enumerate(bodies):
            # The section's code travels with its first chunk only.
            chunks.append(
                Chunk(
                    path,
                    section.anchor,
                    page.title,
                    heading,
                    body,
                    code if number == 0 else "",
                    history,
                    role,
                )
            )
    return chunks


def load_docs(
    docs_dir: Path,
    page_path: Callable[[PurePosixPath], str],
    exclude: Sequence[str] = (),
    heading_ids: HeadingIds = "github",
) -> list[Chunk]:
    """Parse every Markdown/HTML file under `docs_dir` (sorted, so the index is deterministic).

    `exclude` holds glob patterns matched against the path relative to
    `docs_dir` (e.g. `design/*` leaves design notes out of the corpus).
    """
    chunks: list[Chunk] = []
    for file in sorted(docs_dir.rglob("*")):
        if not file.is_file() or file.suffix.lower() not in DOC_SUFFIXES:
            continue
        relative = PurePosixPath(file.relative_to(docs_dir).as_posix())
        if any(fnmatch.fnmatchcase(str(relative), pattern) for pattern in exclude):
            continue
        text = file.read_text(encoding="utf-8")
        fallback = relative.stem.replace("-", " ").replace("_", " ").capitalize()
        if file.suffix.lower() in (".md", ".markdown"):
            page = parse_markdown(text, fallback, heading_ids)
        else:
            page = parse_html(text, fallback)
        chunks.extend(chunk_page(page, page_path(relative)))
    return chunks
