"""TEMPORARY stand-in for the indexing-html branch's site reader (A1 in the shared contract).

Only the contract's signatures, so the plugins, `serve-ask --site-dir` and
`preview` can be wired and tested before A1's reader lands; the merge of
`indexing-html` replaces this file whole. It reads every HTML file with the
plain-HTML reader of docs_folder.py (no theme knowledge, our own anchors).
"""

from pathlib import Path, PurePosixPath

from ..answering.site_index import SITE_INDEX_FILE_PREFIX, SiteIndex
from .docs_folder import chunk_page, parse_html


class SiteIndexError(ValueError):
    """The folder cannot be indexed (one line)."""


def _url(relative: PurePosixPath, base_path: str) -> str:
    text = str(relative)
    if relative.name == "index.html":
        text = text[: -len("index.html")]
    return base_path + text


def index_site(
    site_dir: Path,
    *,
    base_path: str = "/",
    body_selector: str | None = None,
    site_name: str | None = None,
) -> SiteIndex:
    if not site_dir.is_dir():
        raise SiteIndexError(f"Site folder {site_dir} does not exist.")
    chunks = []
    pages = 0
    for file in sorted(site_dir.rglob("*.html")):
        relative = PurePosixPath(file.relative_to(site_dir).as_posix())
        page = parse_html(file.read_text(encoding="utf-8", errors="replace"), relative.stem)
        found = chunk_page(page, _url(relative, base_path))
        if found:
            pages += 1
            chunks.extend(found)
    if not chunks:
        raise SiteIndexError(f"Site folder {site_dir} has no HTML page with text.")
    return SiteIndex.of(
        chunks, site_name=site_name or "Docs", base_path=base_path, generator="html", pages=pages
    )


def write_site_index(index: SiteIndex, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    name = index.file_name()
    for old in out_dir.glob(f"{SITE_INDEX_FILE_PREFIX}*.json"):
        if old.name != name:
            old.unlink()
    target = out_dir / name
    target.write_bytes(index.to_bytes())
    return target


def find_site_index(folder: Path) -> Path | None:
    found = sorted(folder.glob(f"{SITE_INDEX_FILE_PREFIX}*.json"))
    return found[-1] if found else None
