"""An in-memory inverted index of chunks, with positions, searched by phrases.

Four indexed fields per chunk, in this order: page title, heading, text
(`body`) and code; the path and anchor are stored with the chunk but not
searched. Each field's index tokens (`text_terms.tokens`) are kept with their
positions, so a phrase ("sub folder") matches only where its tokens follow
each other in one field, and a prefix phrase ("embed*") matches every token
starting with its last token. Together with the row lengths this is what
FTS5's `bm25()` reads, and `ranking.bm25_scores` computes its formula.

Every read goes through `counts`, `postings`, `terms_from`, `length` and `chunk`, so
the static index (`static_index.PartialIndex`) can serve the same search from
the parts it has loaded and say which ones a question still needs.
"""

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from .chunk import Chunk
from .text_terms import tokens

FIELDS: Final = ("page_title", "heading", "body", "code")
"""The searched fields, in the order of every per-field tuple in this package."""
FIELD_COUNT: Final = len(FIELDS)

TITLE_FIELDS: Final = frozenset({0, 1})
"""The page title and heading fields (the in-passing test looks only there)."""

Entry = tuple[int, int, tuple[int, ...]]
"""One posting: (row, field, positions of the token in that field), rows ascending."""

Count = tuple[int, int, int]
"""One posting without its positions: (row, field, occurrences), rows ascending. A token
alone needs only these; a phrase of several tokens needs the positions (`Entry`), so the
static index keeps them in parts of their own, which most questions never fetch."""

Hits = dict[int, list[int]]
"""Row -> hits per field (FIELD_COUNT counts) of one phrase."""


@dataclass(frozen=True, slots=True)
class Phrase:
    """Index tokens that must follow each other in one field; with `prefix`, the last
    token matches any token it starts ("embed" finds "embedding")."""

    tokens: tuple[str, ...]
    prefix: bool = False

    @classmethod
    def of(cls, text: str, *, prefix: bool = False) -> "Phrase":
        """The phrase of a text as typed (tokenized and stemmed like the indexed text)."""
        return cls(tuple(tokens(text)), prefix)


def chunk_fields(chunk: Chunk) -> tuple[str, str, str, str]:
    """A chunk's searched fields, in FIELDS order."""
    return (chunk.page_title, chunk.heading, chunk.text, chunk.code)


class InvertedIndex:
    """Token -> postings with positions, the tokens sorted, each row's length and chunk."""

    def __init__(self) -> None:
        self._postings: dict[str, list[Entry]] = {}
        self._terms: list[str] | None = []
        self._lengths: list[int] = []
        self._chunks: list[Chunk] = []
        self.total_tokens = 0

    @classmethod
    def of(cls, chunks: Iterable[Chunk]) -> "InvertedIndex":
        index = cls()
        index.add(chunks)
        return index

    def add(self, chunks: Iterable[Chunk]) -> None:
        for chunk in chunks:
            row = len(self._chunks)
            self._chunks.append(chunk)
            length = 0
            for field, text in enumerate(chunk_fields(chunk)):
                positions: dict[str, list[int]] = {}
                found = tokens(text)
                for position, token in enumerate(found):
                    positions.setdefault(token, []).append(position)
                for token, at in positions.items():
                    self._postings.setdefault(token, []).append((row, field, tuple(at)))
                length += len(found)
            self._lengths.append(length)
            self.total_tokens += length
        self._terms = None

    # ---- the reads (PartialIndex overrides these)

    @property
    def size(self) -> int:
        """Rows (chunks) indexed."""
        return len(self._chunks)

    def postings(self, token: str) -> Sequence[Entry]:
        """A token's postings with positions (phrases of several tokens read these)."""
        return self._postings.get(token, ())

    def counts(self, token: str) -> Sequence[Count]:
        """A token's postings as occurrence counts (a one-token phrase reads only these)."""
        return [(row, field, len(at)) for row, field, at in self._postings.get(token, ())]

    def terms_from(self, prefix: str) -> list[str]:
        """The indexed tokens starting with `prefix`, sorted."""
        if self._terms is None:
            self._terms = sorted(self._postings)
        start = bisect.bisect_left(self._terms, prefix)
        found: list[str] = []
        for term in self._terms[start:]:
            if not term.startswith(prefix):
                break
            found.append(term)
        return found

    def length(self, row: int) -> int:
        """Tokens in a row, all fields together (BM25's document length)."""
        return self._lengths[row]

    def chunk(self, row: int) -> Chunk:
        return self._chunks[row]

    def checkpoint(self) -> None:
        """A hook: the search has read what one stage needs (the static index raises
        `PartsMissing` here when some of it was in parts not loaded yet)."""

    # ---- for the split

    def sorted_terms(self) -> list[str]:
        self.terms_from("")
        assert self._terms is not None
        return self._terms

    def lengths(self) -> list[int]:
        return list(self._lengths)

    def chunks(self) -> list[Chunk]:
        return list(self._chunks)

    # ---- matching

    def phrase_hits(self, phrase: Phrase) -> Hits:
        """The rows holding a phrase, with its hits per field."""
        if not phrase.tokens:
            return {}
        last = phrase.tokens[-1]
        last_terms = self.terms_from(last) if phrase.prefix else [last]
        hits: Hits = {}
        if len(phrase.tokens) == 1:
            for term in last_terms:
                for row, field, count in self.counts(term):
                    fields = hits.get(row)
                    if fields is None:
                        fields = hits[row] = [0] * FIELD_COUNT
                    fields[field] += count
            return hits
        return self._phrase_hits(phrase.tokens[:-1], last_terms)

    def _phrase_hits(self, head: Sequence[str], last_terms: Sequence[str]) -> Hits:
        """Hits of a phrase of several tokens: positions p, p+1, ... in one field."""
        steps: list[dict[tuple[int, int], set[int]]] = []
        for token in head:
            steps.append({(row, field): set(at) for row, field, at in self.postings(token)})
        last: dict[tuple[int, int], set[int]] = {}
        for term in last_terms:
            for row, field, at in self.postings(term):
                last.setdefault((row, field), set()).update(at)
        steps.append(last)
        shared = set(steps[0])
        for step in steps[1:]:
            shared &= step.keys()
        hits: Hits = {}
        for key in sorted(shared):
            starts = steps[0][key]
            count = sum(
                1
                for start in starts
                if all(start + offset in step[key] for offset, step in enumerate(steps) if offset)
            )
            if count:
                row, field = key
                hits.setdefault(row, [0] * FIELD_COUNT)[field] += count
        return hits
