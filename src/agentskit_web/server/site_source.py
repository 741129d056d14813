"""Where the backend's passages come from, and its site settings when nobody wrote any.

Three sources, one result (a list of chunks and the site's name):

- a built site (`--site-dir`): the index file the MkDocs plugin or the Sphinx
  extension wrote into it (`agentskit-index.<hash>.json`, in the folder or in
  one of its immediate sub-folders such as the assets folder) when there is
  one for the same base path; otherwise the folder's HTML is indexed at
  start-up with `indexing.site.index_site`. Either way every chunk cites the
  URL and the anchor the generator published;
- an index file (`--index FILE`), read with the strict `parse_site_index`;
- a folder of Markdown/HTML sources (`--docs`), read by `indexing.docs_folder`.

A site config is optional: `derived_site_config` makes the smallest valid
`agentskit.chat.backend-site` document for a site from its name (one corpus,
no persistence, the reference limits), so an owner sees a first answer
before writing one.

`chunk_retriever` is the one seam between these chunks and the search
engine, so replacing the engine touches that function only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Final

from ..answering.chunk import Chunk
from ..answering.ranking import SearchIndex
from ..answering.site_index import INDEX_TOO_LARGE, SiteIndex, parse_site_index
from ..docs_text import page_path_for
from ..indexing.docs_folder import load_docs
from ..indexing.site import (
    SiteIndexError,
    find_site_index,
    index_site,
    normalize_base_path,
    read_site_index_bytes,
)
from ..protocol.identifiers import make_safe_id
from .retrieval import IndexRetriever, Retriever

DERIVED_CORPUS_ID: Final = "docs"
"""The one corpus of a site served without a config (the plugins' `corpus` hint may name it)."""
DERIVED_ASSISTANT_ID: Final = "guide"
"""The assistant of a site served without a config (the plugins' `persona` hint may name it)."""
DERIVED_LIMITS: Final = {
    "requestTimeoutMs": 60_000,
    "retrievalTimeoutMs": 2_000,
    "generationTimeoutMs": 45_000,
    "maxSources": 4,
}
"""The reference limits: those of this project's own docs/site.json."""
DERIVED_SITE_ID_FALLBACK: Final = "docs"
SITE_NAME_FALLBACK: Final = "Documentation"
"""The name of a site whose pages give none (no title anywhere)."""


class SiteSourceError(ValueError):
    """The folder or file cannot give the backend anything to answer from (one line)."""


@dataclass(frozen=True, slots=True)
class SiteSource:
    """What the backend answers from: the chunks, the site's name, where they came from."""

    chunks: list[Chunk]
    site_name: str
    pages: int
    origin: str
    """For the start-up line: `the index file X` or `the HTML of X, indexed at start-up`."""
    base_path: str = "/"
    index: SiteIndex | None = None


def index_files_in(site_dir: Path) -> list[Path]:
    """Index files in the site folder or one folder down (the assets folder), newest first."""
    found: list[Path] = []
    for folder in (site_dir, *sorted(p for p in site_dir.iterdir() if p.is_dir())):
        candidate = find_site_index(folder)
        if candidate is not None:
            found.append(candidate)
    return sorted(found, key=lambda path: path.stat().st_mtime, reverse=True)


def read_index_file(path: Path) -> SiteIndex:
    """A site index file, strictly decoded; SiteSourceError says what is wrong."""
    try:
        data = read_site_index_bytes(path)
    except OSError as error:
        raise SiteSourceError(f"Index file {path} cannot be read: {error.strerror}.") from error
    if data is None:
        raise SiteSourceError(f"Index file {path}: {INDEX_TOO_LARGE.message}")
    result = parse_site_index(data)
    if not result.ok or not isinstance(result.value, SiteIndex):
        reason = result.diagnostic.message if result.diagnostic else "it is invalid"
        raise SiteSourceError(f"Index file {path}: {reason}")
    if not result.value.chunks:
        raise SiteSourceError(f"Index file {path} has no chunk to answer from.")
    return result.value


def from_index(index: SiteIndex, origin: str) -> SiteSource:
    return SiteSource(
        chunks=index.chunk_list(),
        site_name=index.site_name or SITE_NAME_FALLBACK,
        pages=index.pages,
        origin=origin,
        base_path=index.base_path,
        index=index,
    )


def from_index_file(path: Path) -> SiteSource:
    return from_index(read_index_file(path), f"the index file {path}")


def from_site_dir(
    site_dir: Path, *, base_path: str | None = None, site_name: str | None = None
) -> SiteSource:
    """A built site: its own index file when one matches `base_path`, else its HTML indexed now.

    `base_path` None takes the index file's (or `/` when the HTML is indexed).
    """
    if not site_dir.is_dir():
        raise SiteSourceError(f"Site folder {site_dir} does not exist.")
    wanted = None if base_path is None else normalize_base_path(base_path)
    for path in index_files_in(site_dir):
        index = read_index_file(path)
        if wanted is None or index.base_path == wanted:
            return from_index(index, f"the index file {path}")
    try:
        index = index_site(site_dir, base_path=wanted or "/", site_name=site_name)
    except SiteIndexError as error:
        raise SiteSourceError(str(error)) from error
    return from_index(index, f"the HTML of {site_dir}, indexed at start-up")


def from_docs_folder(folder: Path, exclude: Sequence[str] = ()) -> SiteSource:
    """Markdown/HTML sources, cited with this project's own `/docs/<name>.html` rule."""
    if not folder.is_dir():
        raise SiteSourceError(f"Docs folder {folder} does not exist.")
    chunks = load_docs(folder, page_path_for, exclude)
    if not chunks:
        raise SiteSourceError(f"Docs folder {folder} has no Markdown or HTML page with text.")
    pages = {chunk.path for chunk in chunks}
    return SiteSource(
        chunks=chunks,
        site_name=_docs_site_name(chunks, folder),
        pages=len(pages),
        origin=f"the docs folder {folder}",
    )


def _docs_site_name(chunks: Iterable[Chunk], folder: Path) -> str:
    """The home page's title (`index.md`), else the folder's name."""
    home = page_path_for(PurePosixPath("index.md"))
    for chunk in chunks:
        if chunk.path == home and chunk.page_title.strip():
            return chunk.page_title.strip()
    return folder.resolve().name or SITE_NAME_FALLBACK


def derived_site_config(site_name: str) -> dict[str, Any]:
    """The smallest valid site config for a site known only by its name (see the module doc)."""
    slug = re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", site_name.lower())).strip("-")
    return {
        "protocol": "agentskit.chat.backend-site",
        "version": 1,
        "siteId": make_safe_id(slug, DERIVED_SITE_ID_FALLBACK),
        "assistant": {
            "id": DERIVED_ASSISTANT_ID,
            "name": f"{site_name} guide"[:256].strip() or SITE_NAME_FALLBACK,
            "suggestions": [],
        },
        "corpus": {"id": DERIVED_CORPUS_ID, "mode": "local"},
        "components": ["source-list"],
        "actions": [],
        "limits": dict(DERIVED_LIMITS),
        "persistence": {"mode": "disabled"},
    }


def chunk_retriever(
    chunks: Sequence[Chunk], *, synonyms: Iterable[Sequence[str]] = ()
) -> Retriever:
    """The search engine over `chunks`: the only place the backend builds one from chunks."""
    return IndexRetriever(SearchIndex.from_chunks(chunks, synonyms=synonyms))


__all__ = [
    "DERIVED_ASSISTANT_ID",
    "DERIVED_CORPUS_ID",
    "SiteSource",
    "SiteSourceError",
    "chunk_retriever",
    "derived_site_config",
    "from_docs_folder",
    "from_index_file",
    "from_site_dir",
    "read_index_file",
]
