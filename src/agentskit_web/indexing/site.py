"""A generator's output folder -> the site index (`answering.site_index.SiteIndex`).

The built HTML is the source of truth (docs/design/site-index.md): its file
paths are the published URLs, its ids the published anchors, and it holds the
code a generator included at build time. Every `.html`/`.htm` file under
SITE_DIR is a candidate page; generator-internal pages and pages that opt out
are skipped (see `internal_page` and html_page.skip_reason), the rest are read
by html_page.read_html_page and chunked by docs_folder.chunk_page.

URL rule (`published_path`): the file's path under SITE_DIR below the base
path; `index.html` names its folder (`a/index.html` -> `/a/`, the root
`index.html` -> `/`).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Final

from ..answering.chunk import Chunk
from ..answering.site_index import (
    SITE_INDEX_FILE_PREFIX,
    SITE_INDEX_MAX_BYTES,
    SITE_INDEX_MAX_CHUNKS,
    SiteIndex,
    is_site_path,
)
from .docs_folder import chunk_page
from .html_page import read_html_page
from .selector import SelectorError, parse_selector

ASSETS_FOLDER: Final = "agentskit"
"""The widget's assets folder in a built site (the plugins' default `assets_path`, tested equal):
where `agentskit-web index` writes the index by default, and never a page."""

PAGE_SUFFIXES: Final = (".html", ".htm")
INTERNAL_TOP_LEVEL: Final = frozenset(
    {"genindex", "search", "py-modindex", "np-modindex", "modindex", "404", "_modules",
     "_sources", "_static", "_images", "_downloads", "assets", ASSETS_FOLDER, "static"}
)  # fmt: skip
"""First path parts (file stem or folder) that a generator writes for itself, never a doc page:
Sphinx's index and search pages, highlighted sources and copied sources, 404 pages, and the
asset folders of MkDocs (`assets/`), Sphinx (`_static/`) and Docusaurus (`static/`)."""

PAGE_MAX_BYTES: Final = 8 * 1024 * 1024
"""Largest HTML file read as a page (a generated API page is well under 2 MB)."""

_INDEX_FILE: Final = re.compile(r"^agentskit-index\.[0-9a-f]+\.json$")

SKIP_OUTSIDE: Final = "outside the site"
"""A page file that is a link to a file outside SITE_DIR: its text is not the site's."""
SKIP_NAME_NOT_URL: Final = "file name not a URL path"
"""A page whose file name is not UTF-8, or holds a control character or a backslash, has
no URL path the index can write (SITE_PATH)."""


class SiteIndexError(ValueError):
    """The folder cannot be indexed (missing, not a folder, no HTML page with text)."""


@dataclass(slots=True)
class IndexReport:
    """What `index_site` read, for the command's summary and the bench."""

    pages: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    themes: Counter[str] = field(default_factory=Counter)


def normalize_base_path(base_path: str) -> str:
    """`docs`, `/docs`, `/docs/` -> `/docs/`; empty -> `/`."""
    parts = [part for part in base_path.strip().split("/") if part]
    return "/" + "".join(f"{part}/" for part in parts)


def published_path(relative: PurePosixPath, base_path: str = "/") -> str:
    """Where a built file is served: `a/index.html` -> `/a/`, `a/b.html` -> `/a/b.html`."""
    base = normalize_base_path(base_path)
    if relative.name in ("index.html", "index.htm"):
        folder = relative.parent
        return base if str(folder) == "." else f"{base}{folder.as_posix()}/"
    return f"{base}{relative.as_posix()}"


def internal_page(relative: PurePosixPath) -> bool:
    """A page the generator writes for itself (index, search, sources, 404, assets)."""
    first = relative.parts[0]
    stem = PurePosixPath(first).stem if len(relative.parts) == 1 else first
    return stem in INTERNAL_TOP_LEVEL or any(part.startswith(".") for part in relative.parts)


def site_pages(site_dir: Path) -> Iterator[tuple[Path, PurePosixPath]]:
    """Every candidate page file under site_dir, sorted (the index is deterministic)."""
    for file in sorted(site_dir.rglob("*")):
        if file.suffix.lower() in PAGE_SUFFIXES and file.is_file():
            yield file, PurePosixPath(file.relative_to(site_dir).as_posix())


def inside(file: Path, root: Path) -> bool:
    """Whether file, its links followed, is under root (root already resolved)."""
    return file.resolve().is_relative_to(root)


def url_path_name(relative: PurePosixPath) -> bool:
    """Whether a page file's path can be published: UTF-8 (undecodable bytes become
    surrogates, which no JSON text can hold) and a SITE_PATH once under `/`."""
    try:
        str(relative).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return is_site_path(published_path(relative))


def _fallback_title(relative: PurePosixPath) -> str:
    name = relative.parent.name if relative.stem == "index" else relative.stem
    return (name or "Home").replace("-", " ").replace("_", " ").capitalize()


def read_site(
    site_dir: Path, *, base_path: str = "/", body_selector: str | None = None
) -> tuple[list[Chunk], IndexReport]:
    """The chunks of every indexable page under site_dir, and what was read or skipped."""
    if not site_dir.is_dir():
        raise SiteIndexError(f"{site_dir} is not a folder")
    try:
        selector = parse_selector(body_selector) if body_selector else None
    except SelectorError as error:
        raise SiteIndexError(f"--selector: {error}") from None
    chunks: list[Chunk] = []
    report = IndexReport()
    root = site_dir.resolve()
    for file, relative in site_pages(site_dir):
        if internal_page(relative):
            report.skipped["generator page"] += 1
            continue
        if not url_path_name(relative):
            report.skipped[SKIP_NAME_NOT_URL] += 1
            continue
        if not inside(file, root):
            report.skipped[SKIP_OUTSIDE] += 1
            continue
        try:
            if file.stat().st_size > PAGE_MAX_BYTES:
                report.skipped["too large"] += 1
                continue
            html = file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            # One unreadable file (permissions, a dangling link) loses that page, not the site.
            report.skipped["unreadable"] += 1
            continue
        page = read_html_page(html, _fallback_title(relative), body_selector=selector)
        if page.skip is not None:
            report.skipped[page.skip] += 1
            continue
        report.pages += 1
        report.themes[page.theme or "html"] += 1
        chunks.extend(chunk_page(page.page, published_path(relative, base_path)))
    if not chunks:
        raise SiteIndexError(f"{site_dir} has no HTML page with text to index")
    if len(chunks) > SITE_INDEX_MAX_CHUNKS:
        raise SiteIndexError(
            f"{site_dir} makes {len(chunks)} chunks, more than an index holds"
            f" ({SITE_INDEX_MAX_CHUNKS})"
        )
    return chunks, report


def _site_name(chunks: list[Chunk], site_dir: Path, base_path: str) -> str:
    """The home page's title, else the folder's name."""
    home = normalize_base_path(base_path)
    for chunk in chunks:
        if chunk.path in (home, f"{home}index.html"):
            return chunk.page_title
    return site_dir.resolve().name


def index_site(
    site_dir: Path,
    *,
    base_path: str = "/",
    body_selector: str | None = None,
    site_name: str | None = None,
) -> SiteIndex:
    """The site index of a built site (raises SiteIndexError for an unusable folder)."""
    index, _report = index_site_with_report(
        site_dir, base_path=base_path, body_selector=body_selector, site_name=site_name
    )
    return index


def index_site_with_report(
    site_dir: Path,
    *,
    base_path: str = "/",
    body_selector: str | None = None,
    site_name: str | None = None,
) -> tuple[SiteIndex, IndexReport]:
    """`index_site`, plus what was read and skipped (for the command and the bench)."""
    chunks, report = read_site(site_dir, base_path=base_path, body_selector=body_selector)
    generator = report.themes.most_common(1)[0][0] if report.themes else "html"
    index = SiteIndex.of(
        chunks,
        site_name=site_name or _site_name(chunks, site_dir, base_path),
        base_path=normalize_base_path(base_path),
        generator=generator,
        pages=report.pages,
    )
    return index, report


def write_site_index(index: SiteIndex, out_dir: Path) -> Path:
    """Write `index.file_name()` into out_dir (created), remove older index files there.

    An index larger than its readers accept (SITE_INDEX_MAX_BYTES) is refused with a
    SiteIndexError before anything is written: a build must not publish a file that
    `serve-ask` and the page then refuse.
    """
    data = index.to_bytes()
    if len(data) > SITE_INDEX_MAX_BYTES:
        raise SiteIndexError(
            f"the index would be {len(data)} bytes, more than its readers accept"
            f" ({SITE_INDEX_MAX_BYTES}); index less of the site (--selector, data-agentskit-skip)"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    name = index.file_name()
    target = out_dir / name
    temporary = out_dir / f".{name}.tmp"
    temporary.write_bytes(data)
    temporary.replace(target)
    for old in out_dir.glob(f"{SITE_INDEX_FILE_PREFIX}*.json"):
        if old.name != name and _INDEX_FILE.match(old.name):
            old.unlink()
    return target


def remove_site_indexes(out_dir: Path) -> int:
    """Remove every site index file in out_dir (an earlier build's); how many were removed."""
    if not out_dir.is_dir():
        return 0
    old = [file for file in out_dir.iterdir() if _INDEX_FILE.match(file.name) and file.is_file()]
    for file in old:
        file.unlink()
    return len(old)


def find_site_index(folder: Path) -> Path | None:
    """The site index file in folder (or its newest, if a build left several), else None."""
    if not folder.is_dir():
        return None
    found = [file for file in folder.iterdir() if _INDEX_FILE.match(file.name) and file.is_file()]
    if not found:
        return None
    return max(found, key=lambda file: (file.stat().st_mtime, file.name))


def read_site_index_bytes(path: Path) -> bytes | None:
    """An index file's bytes, or None when it is larger than SITE_INDEX_MAX_BYTES.

    The open file's size is checked before a byte is read, and no more than the bound is
    read (a 3 GB file is refused, not loaded). Raises OSError for a file that cannot be
    read or is not a regular file (a FIFO is opened without waiting for a writer).
    """
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if status.st_size > SITE_INDEX_MAX_BYTES:
            return None
        data = file.read(SITE_INDEX_MAX_BYTES + 1)
    return None if len(data) > SITE_INDEX_MAX_BYTES else data
