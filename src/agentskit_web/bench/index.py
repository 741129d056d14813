"""Section `index`: reading a built site into the site index, against the Markdown reader.

On each real corpus of ../shared/corpora/ built with MkDocs Material
(bench/corpora.py, as the answers eval builds them, cached under .cache/),
or, without the corpora, on our own built demo docs (dist/docs/, published at /docs/), it prints:

- time: pages per second of `indexing.site.index_site` over the built HTML,
  next to the baseline of the same run: the Markdown folder reader
  (`docs_folder.load_docs`) over the same pages' sources;
- size: the index file's bytes raw and gzip, next to the site's visible text
  (every page's text a browser would render: scripts, styles and templates
  left out) raw and gzip, and the indexed text alone;
- citations: every citable section (distinct page + anchor) checked against
  the built page itself, read independently of the indexer (a regex over the
  raw HTML collects `id="..."` and `<a name="...">`): how many point at a page
  that is not a built file or an anchor that is not on it, for the site index
  and for the Markdown reader's chunks. The site index must have none: the
  section exits 1 otherwise, so it is a check, not only a figure.
"""

from __future__ import annotations

import argparse
import fnmatch
import gzip
import html
import re
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final

from ..answering.chunk import Chunk
from ..docs_text import DOCS_EXCLUDE, directory_page_path, page_path_for
from ..indexing.docs_folder import HeadingIds, load_docs
from ..indexing.html_tree import Element, parse_html_tree
from ..indexing.site import index_site_with_report, internal_page, site_pages
from .corpora import DEFAULT_CORPORA, PROJECT_ROOT, build_corpus

GZIP_LEVEL: Final = 9
CORPUS_CONFIGS: Final = {"starlette": "mkdocs.yml", "pydantic": None}
"""The corpora and the mkdocs.yml each ships (None: bench/corpora.py's minimal Material one),
as the answers eval builds them."""
_TARGET = re.compile(r"""\s(?:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+))""")
_INVISIBLE: Final = frozenset({"script", "style", "template", "noscript", "head", "title"})
_MARKUP_SIGNS: Final = ("{", "<", "¶")


@dataclass(frozen=True, slots=True)
class Site:
    """One built site to measure and the Markdown sources it was built from."""

    name: str
    site_dir: Path
    base_path: str
    docs_dir: Path
    page_path: Callable[[PurePosixPath], str]
    exclude: tuple[str, ...] = ()
    heading_ids: HeadingIds = "mkdocs"


def _gzip(data: bytes) -> int:
    return len(gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0))


def _visible_text(root: Element) -> str:
    parts: list[str] = []
    stack: list[Element | str] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            parts.append(node)
        elif node.tag not in _INVISIBLE and "hidden" not in node.attrs:
            stack.extend(reversed(node.children))
    return " ".join(" ".join(parts).split())


def page_targets(site_dir: Path, base_path: str) -> dict[str, frozenset[str]]:
    """Published path -> the fragment targets on that page, read with a regex (not the indexer)."""
    targets: dict[str, frozenset[str]] = {}
    base = "/" + "".join(f"{part}/" for part in base_path.split("/") if part)
    for file, relative in site_pages(site_dir):
        found = set()
        for match in _TARGET.finditer(file.read_text(encoding="utf-8", errors="replace")):
            value = next(group for group in match.groups() if group is not None)
            found.add(html.unescape(value).strip())
        if relative.name == "index.html":
            folder = relative.parent.as_posix()
            path = base if folder == "." else f"{base}{folder}/"
        else:
            path = f"{base}{relative.as_posix()}"
        targets[path] = frozenset(found)
    return targets


@dataclass(frozen=True, slots=True)
class Citations:
    sections: int
    missing_page: int
    missing_anchor: int
    markup_titles: int

    @property
    def broken(self) -> int:
        return self.missing_page + self.missing_anchor


def check_citations(chunks: Iterable[Chunk], targets: dict[str, frozenset[str]]) -> Citations:
    """Count citable sections whose page is not built or whose anchor is not on the page."""
    sections = {(chunk.path, chunk.anchor) for chunk in chunks}
    missing_page = sum(1 for path, _ in sections if path not in targets)
    missing_anchor = sum(
        1
        for path, anchor in sections
        if path in targets and anchor is not None and anchor not in targets[path]
    )
    titles = {chunk.page_title for chunk in chunks} | {chunk.heading for chunk in chunks}
    markup = sum(1 for title in titles if any(sign in title for sign in _MARKUP_SIGNS))
    return Citations(len(sections), missing_page, missing_anchor, markup)


def _sites(corpora: Path) -> list[Site]:
    if all((corpora / name / "docs").is_dir() for name in CORPUS_CONFIGS):
        return [
            Site(
                name,
                build_corpus(corpora, name, config).site_dir,
                "/",
                corpora / name / "docs",
                directory_page_path,
                ("theme/*", "overrides/*", "extra/*"),
            )
            for name, config in CORPUS_CONFIGS.items()
        ]
    print(f"  the corpora are not at {corpora}: measuring our own built demo docs (dist/docs/)")
    dist_docs = PROJECT_ROOT / "dist" / "docs"
    if not dist_docs.is_dir():
        raise SystemExit("dist/docs/ is missing: run `make site` (or `agentskit-web build`) first")
    docs = PROJECT_ROOT / "docs"
    return [Site("demo", dist_docs, "/docs/", docs, page_path_for, DOCS_EXCLUDE, "github")]


def _median_seconds(runs: int, work: Callable[[], object]) -> tuple[float, list[float]]:
    samples: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), samples


def measure(site: Site, runs: int) -> bool:
    """Print one site's figures; True when every citation of the site index resolves."""
    index, report = index_site_with_report(site.site_dir, base_path=site.base_path)
    seconds, samples = _median_seconds(
        runs, lambda: index_site_with_report(site.site_dir, base_path=site.base_path)
    )
    markdown_files = sum(
        1
        for file in site.docs_dir.rglob("*")
        if file.suffix in (".md", ".markdown")
        and not any(
            fnmatch.fnmatchcase(file.relative_to(site.docs_dir).as_posix(), pattern)
            for pattern in site.exclude
        )
    )
    md_seconds, md_samples = _median_seconds(
        runs, lambda: load_docs(site.docs_dir, site.page_path, site.exclude, site.heading_ids)
    )
    markdown_chunks = load_docs(site.docs_dir, site.page_path, site.exclude, site.heading_ids)

    visible = "\n".join(
        _visible_text(parse_html_tree(file.read_text(encoding="utf-8", errors="replace")))
        for file, relative in site_pages(site.site_dir)
        if not internal_page(relative)
    ).encode("utf-8")
    indexed = "\n".join(
        f"{chunk.heading}\n{chunk.text}\n{chunk.code}" for chunk in index.chunk_list()
    ).encode("utf-8")
    data = index.to_bytes()

    targets = page_targets(site.site_dir, site.base_path)
    ours = check_citations(index.chunk_list(), targets)
    theirs = check_citations(markdown_chunks, targets)
    other_ids: HeadingIds = "github" if site.heading_ids == "mkdocs" else "mkdocs"
    other = check_citations(
        load_docs(site.docs_dir, site.page_path, site.exclude, other_ids), targets
    )

    skipped = ", ".join(f"{n} {why}" for why, n in sorted(report.skipped.items())) or "none"
    print(f"\n  {site.name}: {site.site_dir}")
    print(
        f"    pages   {index.pages} indexed ({index.generator}), skipped: {skipped}; "
        f"{len(index.chunks)} chunks (Markdown reader: {len(markdown_chunks)})"
    )
    print(
        f"    time    site index {index.pages / seconds:8.1f} pages/s  ({seconds:.3f} s median"
        f" of {runs}: {', '.join(f'{s:.3f}' for s in samples)})"
    )
    print(
        f"            baseline   {markdown_files / md_seconds:8.1f} pages/s  (Markdown reader over"
        f" the {markdown_files} sources, {md_seconds:.3f} s median:"
        f" {', '.join(f'{s:.3f}' for s in md_samples)})"
    )
    print(
        f"    size    index file {len(data):>10,} B raw {_gzip(data):>10,} B gzip"
        f"   ({len(data) / len(visible):.2f}x / {_gzip(data) / _gzip(visible):.2f}x the visible"
        " text)"
    )
    print(f"            visible    {len(visible):>10,} B raw {_gzip(visible):>10,} B gzip")
    print(f"            indexed    {len(indexed):>10,} B raw {_gzip(indexed):>10,} B gzip  (text)")
    for label, figures in (
        ("site index", ours),
        (f"Markdown reader, {site.heading_ids} ids", theirs),
        (f"Markdown reader, {other_ids} ids", other),
    ):
        print(
            f"    cites   {label:30} {figures.sections:5} sections: {figures.missing_anchor}"
            f" anchor not on the page, {figures.missing_page} page not built,"
            f" {figures.markup_titles} titles with markup"
        )
    good = ours.broken == 0 and ours.markup_titles == 0
    print(f"    check   {'ok' if good else 'FAILED'}: every site-index citation resolves")
    return good


def index_command(args: argparse.Namespace) -> int:
    corpora = getattr(args, "corpora", None) or DEFAULT_CORPORA
    print("index: built HTML -> site index (indexing/site.py), vs the Markdown reader")
    ok = True
    for site in _sites(Path(corpora)):
        ok = measure(site, max(1, args.runs)) and ok
    return 0 if ok else 1
