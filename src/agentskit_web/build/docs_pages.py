"""The demo docs site: docs/*.md rendered into the one page template (index.html).

Every published page is the template with three parts filled in (between
`<!-- site:nav -->`-style markers): the navigation, the page content and, on
the home page, a table of contents. `index.html` keeps its own content and
becomes `dist/index.html`; `docs/<name>.md` becomes `dist/docs/<name>.html`,
the path the Ask backend cites (`docs_text.page_path_for`).

Why the details matter:
- Heading ids use the backend's own rule (`docs_text.HeadingSlugger`, one per
  page, every heading in order, h1 included, over the same heading text), so
  a cited source `/docs/x.html#anchor` lands on its heading. A heading's
  attribute list (`## Title { #id }`) gives its id and is not shown
  (`docs_text.take_attr_list`, shared with the reader).
- Links between pages (`embedding.md#embed-the-widget-the-html-snippet`) become `.html` links;
  a link to a page that is not published, or to a heading that does not
  exist, fails the build instead of shipping a dead link.
- Every `./` path of the template (the loader, the knowledge artifact, links)
  is rewritten relative to the page's folder, so the site also works under a
  sub-path; the loader resolves everything else against its own URL.
- Markdown is rendered with raw HTML off (the docs are text, not markup) by
  markdown-it-py, the parser the backend indexes them with.
"""

import html
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Final

from markdown_it.token import Token

from ..docs_text import (
    DOCS_EXCLUDE,
    DOCS_MARKDOWN,
    HeadingSlugger,
    heading_text,
    page_path_for,
    take_attr_list,
)
from ..protocol.source_list import URL_SCHEME

NAV_ORDER: Final = (
    "getting-started",
    "embedding",
    "configuration",
    "protocol",
    "security",
    "offline",
    "troubleshooting",
    "testing",
)
"""Reading order of the demo's pages; any other page follows, alphabetically."""

MARKDOWN_SUFFIXES: Final = (".md", ".markdown")
_MARKERS: Final = ("nav", "content", "toc")
_TITLE: Final = re.compile(r"<title>(.*?)</title>", re.DOTALL)
_LOCAL_ATTRIBUTE: Final = re.compile(r'(\s(?:href|src|knowledge)=")\./([^"]*)"')


class SiteError(ValueError):
    """The docs or the template cannot make a consistent site; the message says where."""


# ---------------------------------------------------------------- markdown


@dataclass(frozen=True)
class Link:
    """An internal link found in a page, checked once every page is known."""

    source: str
    target: str  # docs-relative posix path of the target page
    fragment: str


@dataclass(frozen=True)
class RenderedDoc:
    """One Markdown page as HTML, with its heading ids and internal links."""

    title: str
    html: str
    anchors: tuple[str, ...]
    summary: str
    links: tuple[Link, ...] = ()


def _rewrite_link(href: str, page: PurePosixPath) -> tuple[str, Link | None]:
    """A relative `.md` link -> the `.html` page it is published as (plus what to check)."""
    if not href or URL_SCHEME.match(href) or href.startswith(("/", "//")):
        return href, None
    path, _, fragment = href.partition("#")
    if not path:
        return href, Link(str(page), str(page), fragment)
    if not path.lower().endswith(MARKDOWN_SUFFIXES):
        return href, None
    target = posixpath.normpath(posixpath.join(str(page.parent), path))
    html_path = str(PurePosixPath(path).with_suffix(".html"))
    rewritten = html_path + (f"#{fragment}" if fragment else "")
    return rewritten, Link(str(page), target, fragment)


def _first_sentence(tokens: Sequence[Token]) -> str:
    for index, token in enumerate(tokens):
        if token.type == "paragraph_open" and index + 1 < len(tokens):
            text = " ".join(tokens[index + 1].content.split())
            text = re.sub(r"[*_`]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", text)
            end = re.search(r"(?<=[.!?])\s", text)
            return text[: end.start()] if end else text
    return ""


def render_markdown(text: str, page: PurePosixPath, fallback_title: str) -> RenderedDoc:
    """Markdown -> HTML with heading ids (the backend's anchor rule) and `.html` links."""
    tokens = DOCS_MARKDOWN.parse(text)
    slugger = HeadingSlugger()
    anchors: list[str] = []
    links: list[Link] = []
    title = ""
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and index + 1 < len(tokens):
            explicit = take_attr_list(tokens[index + 1])
            heading = heading_text(tokens[index + 1])
            if explicit is not None:
                slugger.reserve(explicit)
            anchor = explicit or slugger.slug(heading)
            if anchor:
                token.attrSet("id", anchor)
                anchors.append(anchor)
            if token.tag == "h1" and not title:
                title = heading
        for child in token.children or []:
            if child.type == "link_open":
                href, link = _rewrite_link(str(child.attrGet("href") or ""), page)
                child.attrSet("href", href)
                if link is not None:
                    links.append(link)
    body = DOCS_MARKDOWN.renderer.render(tokens, DOCS_MARKDOWN.options, {})
    return RenderedDoc(
        title or fallback_title, body, tuple(anchors), _first_sentence(tokens), tuple(links)
    )


# ---------------------------------------------------------------- pages


@dataclass(frozen=True)
class DocPage:
    """A published docs page: where it comes from, where it goes, what it says."""

    relative: PurePosixPath  # e.g. embedding.md (relative to the docs folder)
    url_path: str  # /docs/embedding.html
    rendered: RenderedDoc

    @property
    def output(self) -> PurePosixPath:
        """Path inside dist/ (the URL path without its leading slash)."""
        return PurePosixPath(self.url_path.lstrip("/"))


def _nav_key(relative: PurePosixPath) -> tuple[int, str]:
    stem = str(relative.with_suffix(""))
    rank = NAV_ORDER.index(stem) if stem in NAV_ORDER else len(NAV_ORDER)
    return rank, stem


def published_sources(docs_dir: Path, exclude: Iterable[str] = DOCS_EXCLUDE) -> list[Path]:
    """The Markdown files of `docs_dir` that become pages, in navigation order."""
    if not docs_dir.is_dir():
        return []
    patterns = tuple(exclude)
    found = []
    for file in docs_dir.rglob("*"):
        relative = file.relative_to(docs_dir).as_posix()
        if not file.is_file() or file.suffix.lower() not in MARKDOWN_SUFFIXES:
            continue
        if any(fnmatchcase(relative, pattern) for pattern in patterns):
            continue
        found.append(file)
    return sorted(found, key=lambda f: _nav_key(PurePosixPath(f.relative_to(docs_dir).as_posix())))


def load_pages(docs_dir: Path, exclude: Iterable[str] = DOCS_EXCLUDE) -> list[DocPage]:
    """Render every published page and check the links between them."""
    pages = []
    for file in published_sources(docs_dir, exclude):
        relative = PurePosixPath(file.relative_to(docs_dir).as_posix())
        fallback = relative.stem.replace("-", " ").replace("_", " ").capitalize()
        rendered = render_markdown(file.read_text(encoding="utf-8"), relative, fallback)
        pages.append(DocPage(relative, page_path_for(relative), rendered))
    check_links(pages)
    return pages


def check_links(pages: Sequence[DocPage]) -> None:
    """Every internal link must reach a published page and, if it names one, a heading."""
    anchors = {str(page.relative): set(page.rendered.anchors) for page in pages}
    broken: list[str] = []
    for page in pages:
        for link in page.rendered.links:
            if link.target not in anchors:
                broken.append(f"docs/{link.source}: links to {link.target}, which is not published")
            elif link.fragment and link.fragment not in anchors[link.target]:
                broken.append(f"docs/{link.source}: {link.target}#{link.fragment} is no heading")
    if broken:
        raise SiteError("links that would not land:\n  " + "\n  ".join(broken))


def page_anchors(pages: Iterable[DocPage]) -> dict[str, frozenset[str]]:
    """Published path -> heading ids (what a FAQ citation may point at)."""
    return {page.url_path: frozenset(page.rendered.anchors) for page in pages}


# ---------------------------------------------------------------- template


def _relative(target: PurePosixPath, folder: PurePosixPath) -> str:
    return posixpath.relpath(str(target), str(folder) or ".")


@dataclass
class Template:
    """index.html split at its markers; `render` fills them for one page."""

    text: str
    site_name: str = field(init=False)

    def __post_init__(self) -> None:
        for name in _MARKERS:
            start, end = f"<!-- site:{name} -->", f"<!-- /site:{name} -->"
            if self.text.count(start) != 1 or self.text.count(end) != 1:
                raise SiteError(f"the page template needs exactly one {start} ... {end}")
        titles = _TITLE.findall(self.text)
        if len(titles) != 1:
            raise SiteError("the page template needs exactly one <title>")
        self.site_name = html.unescape(titles[0].strip())

    def render(
        self,
        output: PurePosixPath,
        *,
        nav: str,
        content: str | None = None,
        toc: str = "",
        title: str | None = None,
    ) -> str:
        """The page written at `output` (dist-relative); `content` None keeps the template's."""
        # Paths are adjusted in the template only: filled-in parts are already relative.
        text = _localize(self.text, len(output.parts) - 1)
        text = self._fill(text, "nav", nav)
        text = self._fill(text, "toc", toc)
        if content is not None:
            text = self._fill(text, "content", content)
        if title is not None:
            page_title = html.escape(f"{title} · {self.site_name}", quote=False)
            text = _TITLE.sub(lambda _m: f"<title>{page_title}</title>", text, count=1)
        return text

    @staticmethod
    def _fill(text: str, name: str, value: str) -> str:
        start, end = f"<!-- site:{name} -->", f"<!-- /site:{name} -->"
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        return f"{head}{start}{value}{end}{tail}"


def _localize(text: str, depth: int) -> str:
    """`./x` attribute paths, seen from a page `depth` folders below the site root."""
    if depth == 0:
        return text
    up = "../" * depth

    return _LOCAL_ATTRIBUTE.sub(lambda m: f'{m.group(1)}{up}{m.group(2)}"', text)


def nav_html(pages: Sequence[DocPage], current: PurePosixPath) -> str:
    """The page list, relative to `current` (a dist path), the current page marked."""
    folder = current.parent
    items = [("Home", PurePosixPath("index.html"))]
    items += [(page.rendered.title, page.output) for page in pages]
    lines = ["<ul>"]
    for label, target in items:
        marked = ' aria-current="page"' if target == current else ""
        href = html.escape(_relative(target, folder))
        lines.append(f'<li><a href="{href}"{marked}>{html.escape(label)}</a></li>')
    lines.append("</ul>")
    return "".join(lines)


def toc_html(pages: Sequence[DocPage]) -> str:
    """The home page's list of pages with their first sentence."""
    lines = ['<ul class="site-toc">']
    for page in pages:
        href = html.escape(str(page.output))
        summary = f" {html.escape(page.rendered.summary)}" if page.rendered.summary else ""
        title = html.escape(page.rendered.title)
        lines.append(f'<li><a href="{href}"><strong>{title}</strong></a>{summary}</li>')
    lines.append("</ul>")
    return "".join(lines)


def render_site(template: Template, pages: Sequence[DocPage]) -> dict[PurePosixPath, bytes]:
    """Every file of the docs site: dist-relative path -> bytes."""
    files: dict[PurePosixPath, bytes] = {}
    home = PurePosixPath("index.html")
    files[home] = template.render(home, nav=nav_html(pages, home), toc=toc_html(pages)).encode(
        "utf-8"
    )
    for page in pages:
        text = template.render(
            page.output,
            nav=nav_html(pages, page.output),
            content="\n" + page.rendered.html,
            title=page.rendered.title,
        )
        files[page.output] = text.encode("utf-8")
    return files
