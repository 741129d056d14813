"""The Ask app's retrieval port and its default: the pure search of answering/, off the loop.

The search itself (tokens, BM25, declines...) lives in `agentskit_web.answering`
so the page's static answers run the same code (docs/design/answering.md). This
edge only builds an index from a docs folder and runs a query on a worker
thread, so a slow query never blocks the event loop.
"""

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import Protocol

import anyio.to_thread

from ..answering.chunk import Chunk, Found, Passage
from ..answering.query_terms import ALL_AIDS, QueryOptions
from ..answering.ranking import SearchIndex
from ..docs_text import page_path_for
from ..indexing.docs_folder import load_docs


class Retriever(Protocol):
    """The retrieval port of the Ask app: ranked passages for a question.

    A plain sequence answers the question (none: 422, not found); a `Found` says
    whether its passages answer it, so a near miss is shown as the closest sections."""

    async def retrieve(self, question: str, limit: int) -> Sequence[Passage] | Found: ...


def folder_chunks(
    docs_dir: str | Path,
    page_path: Callable[[PurePosixPath], str] = page_path_for,
    exclude: Sequence[str] = (),
) -> list[Chunk]:
    """A docs folder's chunks; raises ValueError with a clear message when there is nothing."""
    folder = Path(docs_dir)
    if not folder.is_dir():
        raise ValueError(f"Docs folder {folder} does not exist.")
    chunks = load_docs(folder, page_path, exclude)
    if not chunks:
        raise ValueError(f"Docs folder {folder} has no Markdown or HTML page with text.")
    return chunks


def index_folder(
    docs_dir: str | Path,
    page_path: Callable[[PurePosixPath], str] = page_path_for,
    exclude: Sequence[str] = (),
    synonyms: Iterable[Sequence[str]] = (),
    options: QueryOptions = ALL_AIDS,
) -> SearchIndex:
    """Index a docs folder (see `folder_chunks` for its errors)."""
    chunks = folder_chunks(docs_dir, page_path, exclude)
    return SearchIndex.from_chunks(chunks, synonyms=synonyms, options=options)


class IndexRetriever:
    """The default `Retriever`: a `SearchIndex` queried on a worker thread.

    The wait is abandonable, so the app's retrieval deadline can fire even if
    a query were slow; the thread then finishes on its own.
    """

    def __init__(self, index: SearchIndex) -> None:
        self.index = index

    async def retrieve(self, question: str, limit: int) -> Found:
        return await anyio.to_thread.run_sync(
            self.index.find, question, limit, abandon_on_cancel=True
        )
