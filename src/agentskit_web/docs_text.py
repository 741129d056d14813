"""How docs pages are named and sectioned, shared by the site build and the Ask backend.

Both sides must agree exactly: the build gives every heading an id and
publishes `docs/x.md` at a path, and the backend cites that path and id as a
source, so a cited link lands on its heading.

URL rule (`page_path_for`): `docs/<name>.md` and `docs/<name>.html` are cited
as `/docs/<name>.html` (sub-folders are kept: `docs/a/b.md` -> `/docs/a/b.html`).

Anchor rule (`slugify`, `HeadingSlugger`), the GitHub rule most docs sites use:
lower-case the heading's text; keep Unicode letters, digits, combining marks,
`-` and `_`; each space becomes `-`; drop every other character; a slug seen
before on the same page gets `-1`, `-2`, ... appended.

A heading's trailing attribute list (`## Title { #id .class }`, as MkDocs'
attr_list writes it) is not part of its title: `take_attr_list` removes it and
its `#id` is the heading's anchor, on the page and in the index.

Markdown is parsed by one markdown-it-py setup (`DOCS_MARKDOWN`: CommonMark,
tables, raw HTML off: the docs are text, not markup).
"""

import re
import unicodedata
from pathlib import PurePosixPath
from typing import Final

from markdown_it import MarkdownIt
from markdown_it.token import Token

DOCS_EXCLUDE: Final = ("design/*",)
"""Not published and not indexed: design notes for maintainers, not readers."""

DOCS_MARKDOWN: Final = MarkdownIt("commonmark", {"html": False}).enable("table")


def slugify(text: str) -> str:
    """The GitHub heading-anchor rule (see module docstring); may return ''."""
    out: list[str] = []
    for char in text.strip().lower():
        if char == " ":
            out.append("-")
        elif char in "-_" or unicodedata.category(char)[0] in "LNM":
            out.append(char)
    return "".join(out)


class HeadingSlugger:
    """Unique anchors for the headings of one page, in document order."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def reserve(self, slug: str) -> None:
        """Mark an explicit id (e.g. an HTML `id`) as used."""
        self._seen.add(slug)

    def slug(self, text: str) -> str:
        base = slugify(text)
        candidate, counter = base, 0
        while candidate in self._seen:
            counter += 1
            candidate = f"{base}-{counter}"
        self._seen.add(candidate)
        return candidate


def page_path_for(relative: str | PurePosixPath) -> str:
    """The site path a docs file is published at: `guide/x.md` -> `/docs/guide/x.html`."""
    posix = PurePosixPath(relative)
    return "/docs/" + str(posix.with_suffix(".html"))


def directory_page_path(relative: str | PurePosixPath) -> str:
    """Where MkDocs (`use_directory_urls`, its default) publishes a page: `a/b.md` -> `/a/b/`.

    `index.md` and `README.md` name their folder (`a/index.md` -> `/a/`), as in MkDocs.
    Pass it as the Ask backend's `page_path` so sources cite the pages MkDocs wrote.
    """
    posix = PurePosixPath(relative).with_suffix("")
    folder = posix.parent if posix.name in ("index", "README") else posix
    return "/" if str(folder) == "." else f"/{folder}/"


def html_page_path(relative: str | PurePosixPath) -> str:
    """Where Sphinx's html builder (and MkDocs without directory URLs) publishes a page:
    `a/b.md` -> `/a/b.html`, for the Ask backend's `page_path`."""
    return "/" + str(PurePosixPath(relative).with_suffix(".html"))


_ATTR_ITEM: Final = r"""(?:[#.][\w:-]+|[\w-]+=(?:"[^"]*"|'[^']*'|[^\s{}]+))"""
_ATTR_LIST: Final = re.compile(
    rf"[ \t]*\{{:?[ \t]*(?P<body>{_ATTR_ITEM}(?:[ \t]+{_ATTR_ITEM})*)[ \t]*\}}[ \t]*$"
)


def split_attr_list(heading: str) -> tuple[str, str | None]:
    """`Title { #id .class }` -> (`Title`, `id`); without an attribute list: (heading, None)."""
    match = _ATTR_LIST.search(heading)
    if match is None:
        return heading, None
    ids = re.findall(r"(?:^|\s)#([\w:-]+)", match.group("body"))
    return heading[: match.start()].rstrip(), (ids[-1] if ids else None)


def take_attr_list(inline: Token) -> str | None:
    """Remove a heading's trailing attribute list from its inline token; return its id."""
    children = inline.children or []
    if not children or children[-1].type != "text":
        return None
    last = children[-1]
    text, explicit = split_attr_list(last.content)
    if text == last.content:
        return None
    last.content = text
    inline.content = split_attr_list(inline.content)[0]
    return explicit


def heading_text(token: Token) -> str:
    """Heading text for slugs and titles: inline code without backticks, as GitHub does."""
    return "".join(
        c.content for c in token.children or [] if c.type in ("text", "code_inline", "image")
    ).strip()
