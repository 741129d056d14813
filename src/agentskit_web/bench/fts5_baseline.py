"""The bench's baseline: the FTS5 search that shipped before answering/ (kept unchanged).

`make bench` (sections `answers` and `static`) runs it next to the pure-Python
engine in the same run, so every figure of the new engine is printed beside
the one it replaces. Nothing outside bench/ imports it.

The original module doc follows.

Retrieval over a docs folder: Markdown/HTML pages chunked by heading into SQLite FTS5.

Why FTS5 + BM25: it is embedded in every CPython build (no server, no network,
no model), ranks well enough for documentation questions, and an index of a
docs folder builds in milliseconds at start-up.

Chunking rule: every heading starts a chunk, which keeps its page path, page
title, heading text and anchor, so a cited source links to the exact section.
A section longer than `CHUNK_MAX_CHARS` is split on paragraph boundaries into
several chunks that share its anchor.

URL and anchor rules (where a cited source points) live in docs_text.py, shared
with the site build so a citation lands on the heading the build published.
"""

import dataclasses
import functools
import math
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

import anyio.to_thread

from ..answering.chunk import Chunk, Passage
from .fts5_terms import (
    ALL_AIDS,
    PREFIX_MIN_CHARS,
    Alternative,
    QueryOptions,
    TermGroup,
    Vocabulary,
    match_expression,
    normalise_synonyms,
    term_groups,
)

QUERY_MAX_TERMS: Final = 32
"""Distinct search terms taken from one question (the rest are ignored)."""

RELATIVE_SCORE_FLOOR: Final = 0.5
"""Passages scoring under this fraction of the best one are dropped: they share a
common word with the question but are rarely about it, and only add noise."""

CANDIDATES_PER_RESULT: Final = 3
"""Rows fetched per passage asked for, so dropping repeats of a section still fills the list."""

NEAR_DUPLICATE_JACCARD: Final = 0.8
"""Two passages whose word sets overlap this much say the same thing: one answer keeps one."""

NOT_FOUND_COVERAGE: Final = 0.41
"""The best passages (COVERAGE_PASSAGES_PER_PART per part of the question) must hold at
least this share of the question's words, weighted by how rare each is in the docs
(IDF), or the question is declined as not answered. Calibrated on the tuning split of
fixtures/answers_eval.json (make bench, answers): every value above 0.390 and up to
0.426 declines and keeps the same questions there (the highest declined unanswerable
question covers 0.390, the lowest kept answerable one 0.426); 0.41 is the middle of
that gap."""

PAGE_TOP_WEIGHT: Final = 0.7
"""Score factor of a page's top section (the text under its h1)."""

MATCH_CACHE_MAX: Final = 4_096
"""FTS5 expressions (a question word and its alternatives) whose matching rows are kept."""

HEADING_MATCH_WEIGHT: Final = 1.5
"""Score factor of a section whose heading words all appear in the question (a section
with some of them gets a share of it): readers often name the section they need
("which metrics...", "rate limiting"). Calibrated on the tuning split."""

COVERAGE_PASSAGES_PER_PART: Final = 1
"""Coverage counts a word found in any of the best (this many x the question's parts,
`split_question`) passages. A question of one part must be answered by its best
section: counting a word found in the second or third best one let a question about
something the docs never cover ("can I show advertisements in the Ask box") pass on
words scattered over unrelated sections. A question of two parts ("how do I build the
site, and then embed the widget") may combine two sections, one per part. Chosen on
the tuning split: 1 declines one more unanswerable question there than the former
fixed depth of 3 and keeps every answerable one; the held-out split scores the same."""

PASSING_MIN_TERMS: Final = 2
"""A question of at least this many words (coverage terms) is declined when its best
passages (one per part) hold only one of them, and that one only in their text, not in
a heading or page title: a word used in passing, often in another sense ("costs" as a
verb for "how much does it cost"), is no answer even when it weighs enough to pass
NOT_FOUND_COVERAGE beside a common word. A one-word question is exempt: its word
found anywhere is all it asked for. Chosen on the tuning split: it declines one more
unanswerable question there and keeps every answerable one; the held-out split
scores the same."""

COVERAGE_MIN_CHARS: Final = 3
"""Shorter words ("ui", "v2") and numbers say too little about the topic to count for or
against it."""

_STOPWORDS: Final = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "so",
        "than",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "to",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
        "yours",
        "we",
        "our",
        "us",
        "should",
        "would",
        "could",
        # Words that shape a question without naming its topic ("what happens when",
        # "is it possible to", "how much", "how big", "set up", "about"): counted, they
        # would make a question look partly unanswered because the docs never use them,
        # or rank a section up for a particle ("up") rather than for the topic.
        "happen",
        "happens",
        "happened",
        "possible",
        "much",
        "big",
        "myself",
        "yourself",
        "about",
        "up",
    ]
)

STOPWORDS: Final = _STOPWORDS
"""The common words no search or quote scoring counts (public for the generators)."""

_WORD = re.compile(r"\w+", re.UNICODE)


class RetrievalError(RuntimeError):
    """The index could not answer (corrupt database, I/O failure...)."""


class Retriever(Protocol):
    """The retrieval port of the Ask app: ranked passages for a question."""

    async def retrieve(self, question: str, limit: int) -> Sequence[Passage]: ...


# --------------------------------------------------------------------------- search


def build_match_query(question: str) -> str | None:
    """The plain FTS5 MATCH expression: the question's distinct non-stopword terms, OR-ed.

    Every term is a quoted FTS5 string, so no character of the question can
    become query syntax. Terms of `PREFIX_MIN_CHARS` or more are prefix
    queries: the Porter stemmer maps "embed" to "emb" but "embedding" to
    "embed", and a prefix query on the stemmed term finds both. None when
    nothing searchable is left.
    """
    terms: list[str] = []
    for word in _WORD.findall(question.lower()):
        if word in _STOPWORDS or word in terms or (len(word) < 2 and not word.isdigit()):
            continue
        terms.append(word)
        if len(terms) >= QUERY_MAX_TERMS:
            break
    if not terms:
        return None
    return " OR ".join(
        f'"{term}"*' if len(term) >= PREFIX_MIN_CHARS else f'"{term}"' for term in terms
    )


_WORDS_AND_HYPHENS: Final = re.compile(r"[\w-]+", re.UNICODE)
"""Runs of word characters and hyphens (one linear pass; a pattern such as
`\\w+(?:-\\w+)+` backtracks quadratically over a long word without a hyphen)."""


def hyphenated_compounds(question: str) -> list[str]:
    """The hyphenated compounds of a question, lower-cased, as written ("fine-tune")."""
    found: list[str] = []
    for run in _WORDS_AND_HYPHENS.findall(question.lower()):
        parts = [part for part in run.split("-") if part]
        if len(parts) > 1:
            found.append("-".join(parts))
    return found


def coverage_terms(question: str, groups: Sequence[TermGroup]) -> list[tuple[str, str]]:
    """The question's units of meaning for the not-found test, each with its FTS5 expression.

    A single-word group counts as itself (short words and numbers say too little
    about the topic: `COVERAGE_MIN_CHARS`); a pair group repeats its words and
    does not count. A hyphenated compound ("fine-tune") is one unit, found only
    where the docs use the compound (as a phrase, joined, or with its words'
    typos repaired): its parts alone ("tune" in "tuning") are not what was asked.
    """
    single = {group.word: group for group in groups if " " not in group.word}
    terms: list[tuple[str, str]] = []
    done: set[str] = set()
    for compound in hyphenated_compounds(question):
        parts = _WORD.findall(compound)
        if not all(part in single for part in parts) or compound in done:
            continue
        done.add(compound)
        done.update(parts)
        spelled = [_searched_form(single[part]) for part in parts]
        phrases = {" ".join(parts), " ".join(spelled)}
        expression = " OR ".join(f'"{phrase}"' for phrase in sorted(phrases))
        terms.append((compound, f'{expression} OR "{"".join(parts)}"'))
    for word, group in single.items():
        if word in done or len(word) < COVERAGE_MIN_CHARS or word.isdigit():
            continue
        terms.append((word, group.fts()))
    return terms


def _searched_form(group: TermGroup) -> str:
    """The word a group is found by: its own, else its first one-word alternative."""
    words = [a.words[0] for a in group.alternatives if len(a.words) == 1]
    return words[1] if len(words) > 1 else group.word


_CLAUSE_BREAK: Final = re.compile(
    r"\s*(?:[;?]|,?\s+and\s+then|,\s*and|\s+and(?=\s+(?:what|how|why|which|when|where|who|"
    r"whether|does|do|is|are|can|must|should)\b))\s+",
    re.IGNORECASE,
)
"""Where a question of two parts divides: "..., and ...", "... and then ...", "... and what
(how, why...) ...", or a second sentence."""


def split_question(question: str) -> list[str]:
    """The parts of a question of two or more parts; [question] when it has one.

    White space is collapsed first, so each `\\s` of the pattern meets one
    character and the split stays linear in the question's length."""
    parts = [part.strip() for part in _CLAUSE_BREAK.split(" ".join(question.split()))]
    parts = [part for part in parts if part]
    return parts if len(parts) > 1 else [question]


PART_STRENGTH: Final = 0.5
"""How much a part's own best match counts against the whole question's: a part's
passages rank by their score relative to that part's best, times (part best / whole
best) ** PART_STRENGTH, so a part made of common words ("how does the widget read
them") does not push its weak best match up as far as a specific part does.
Chosen on the tuning split: 0.25 to 0.75 score the same; 0 and 1 worse."""


def _merged(lists: Sequence[Sequence[Passage]]) -> list[Passage]:
    """Ranked lists of one question (first) and its parts as one list: each passage keeps
    its best score relative to its own list's best, weighed by that list's strength
    (`PART_STRENGTH`), scaled back to the whole question's scores."""
    scale = lists[0][0].score if lists and lists[0] and lists[0][0].score > 0 else 1.0
    best: dict[tuple[str, str | None, str], tuple[float, Passage]] = {}
    for ranked in lists:
        if not ranked or ranked[0].score <= 0:
            continue
        top = ranked[0].score
        strength = (top / scale) ** PART_STRENGTH
        for passage in ranked:
            key = (passage.path, passage.anchor, passage.text)
            relative = passage.score / top * strength
            if key not in best or relative > best[key][0]:
                best[key] = (relative, passage)
    merged = sorted(best.values(), key=lambda pair: -pair[0])
    return [dataclasses.replace(p, score=relative * scale) for relative, p in merged]


def _coverage(weights: Sequence[tuple[float, set[int]]], rowids: set[int]) -> float:
    """The IDF-weighted share of the question's words held by at least one of `rowids`."""
    total = sum(weight for weight, _ in weights)
    found = sum(weight for weight, hits in weights if hits & rowids)
    return found / total if total > 0 else 1.0


def word_set(passage: Passage) -> frozenset[str]:
    """The distinct lower-cased words of a passage's text and code."""
    return frozenset(_WORD.findall(f"{passage.text} {passage.code}".lower()))


def distinct_passages(
    passages: Iterable[Passage],
    limit: int,
    words_of: Callable[[Passage], frozenset[str]] = word_set,
) -> list[Passage]:
    """The first `limit` passages without a second chunk of a section already kept and
    without near-duplicates (word-set Jaccard >= NEAR_DUPLICATE_JACCARD) of a kept one."""
    kept: list[tuple[Passage, frozenset[str]]] = []
    sections: set[tuple[str, str | None]] = set()
    for passage in passages:
        if len(kept) >= limit:
            break
        section = (passage.path, passage.anchor)
        if section in sections:
            continue
        words = words_of(passage)
        if any(_near_duplicate(words, other) for _, other in kept):
            continue
        sections.add(section)
        kept.append((passage, words))
    return [passage for passage, _ in kept]


def _near_duplicate(left: frozenset[str], right: frozenset[str]) -> bool:
    """Jaccard >= NEAR_DUPLICATE_JACCARD; sets of very different sizes never are (cheap test)."""
    small, large = sorted((len(left), len(right)))
    if small < large * NEAR_DUPLICATE_JACCARD:
        return False
    shared = len(left & right)
    union = len(left) + len(right) - shared
    return not union or shared / union >= NEAR_DUPLICATE_JACCARD


_SCHEMA: Final = """
DROP TABLE IF EXISTS chunks;
CREATE VIRTUAL TABLE chunks USING fts5(
    path UNINDEXED, anchor UNINDEXED, page_title, heading, body, code,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
"""

# bm25() weights, in column order: path, anchor, page_title, heading, body, code.
# Headings say what a section is about; code blocks often repeat words (JSON
# keys, flags) without being about them, so they weigh least.
_RANK: Final = "bm25(chunks, 0.0, 0.0, 1.5, 4.0, 1.0, 0.25)"
_PLAIN_RANK: Final = "bm25(chunks, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0)"
"""The eval's plain-BM25 peer: every text column weighs the same."""


class DocsIndex:
    """An FTS5 index of chunks in one SQLite database (`:memory:` or a file).

    One connection, guarded by a lock, serves every thread: queries take well
    under a millisecond on a docs corpus, and SQLite connections are not safe to
    share without one.
    """

    def __init__(
        self,
        database: str | Path = ":memory:",
        synonyms: Iterable[Sequence[str]] = (),
        options: QueryOptions = ALL_AIDS,
    ) -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(database), check_same_thread=False)
        self._db.executescript(_SCHEMA)
        self.size = 0
        self.vocabulary = Vocabulary()
        self.synonyms = normalise_synonyms(synonyms)
        self.options = options
        self._words: dict[tuple[str, str | None, str], frozenset[str]] = {}
        self._matches: dict[str, frozenset[int]] = {}

    def add(self, chunks: Iterable[Chunk]) -> None:
        rows = [(c.path, c.anchor or "", c.page_title, c.heading, c.text, c.code) for c in chunks]
        with self._lock, self._db:
            self._db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?)", rows)
        self.size += len(rows)
        self.vocabulary.add(" ".join(row[2:]) for row in rows)
        self._matches.clear()

    def groups(self, question: str) -> list[TermGroup]:
        """The question's term groups (compounds, repaired typos, synonyms) for this index."""
        return term_groups(
            question,
            self.vocabulary,
            self.synonyms,
            _STOPWORDS,
            QUERY_MAX_TERMS,
            self.options,
            self._finds,
        )

    def _finds(self, word: str) -> bool:
        """Whether the index matches the word as searched (stemmed, prefix when long)."""
        if word in self.vocabulary.counts:
            return True
        with self._lock:
            return bool(self._rows_matching(Alternative((word,)).fts()))

    def _rows_matching(self, expression: str) -> frozenset[int]:
        """The rowids matching one FTS5 expression (lock held), remembered until the next
        `add`: readers ask with the same words again and again. At most
        MATCH_CACHE_MAX expressions are kept; the oldest goes first."""
        found = self._matches.get(expression)
        if found is None:
            found = frozenset(
                rowid
                for (rowid,) in self._db.execute(
                    "SELECT rowid FROM chunks WHERE chunks MATCH ?", (expression,)
                )
            )
            if len(self._matches) >= MATCH_CACHE_MAX:
                self._matches.pop(next(iter(self._matches)))
            self._matches[expression] = found
        return found

    def search(self, question: str, limit: int) -> list[Passage]:
        """The best `limit` distinct passages for a question, best first; [] means not answered.

        BM25 (lower is better) over the expanded query picks candidates; each
        score is then weighed down for a page's top section
        (`PAGE_TOP_WEIGHT`). One passage per section is kept and none that
        nearly repeats a better one; passages far below the best are dropped;
        and nothing at all is returned when the best passage (one per part of
        the question: `COVERAGE_PASSAGES_PER_PART`) holds too little of the
        question (`NOT_FOUND_COVERAGE`). A question of two
        parts ("how do I X, and what happens when Y?") is also searched part by
        part, so the answer to the second part is not crowded out by the first.
        """
        if limit < 1:
            return []
        split = split_question(question)
        whole = self._ranked(question, limit, COVERAGE_PASSAGES_PER_PART * len(split))
        if not whole:
            return []
        parts = [part for part in split if part != question]
        if not parts:
            return self._kept(whole, limit)
        lists = [whole] + [self._ranked(part, limit, coverage_depth=None) for part in parts]
        return self._kept(_merged(lists), limit)

    def _kept(self, ranked: Iterable[Passage], limit: int) -> list[Passage]:
        """Distinct passages, best first, without those far below the best."""
        found = distinct_passages(ranked, limit, self._words_of)
        if found and found[0].score > 0:
            floor = found[0].score * RELATIVE_SCORE_FLOOR
            found = [passage for passage in found if passage.score >= floor]
        return found

    def _ranked(self, question: str, limit: int, coverage_depth: int | None) -> list[Passage]:
        """Candidate passages for a question, reweighed and sorted, best first ([] when the
        question has nothing searchable, or, with a `coverage_depth`, when its best that
        many passages hold too little of it)."""
        groups = self.groups(question)
        match = match_expression(groups)
        if match is None:
            return []
        sql = (
            f"SELECT rowid, path, anchor, page_title, heading, body, code, {_RANK} AS rank "
            "FROM chunks WHERE chunks MATCH ? ORDER BY rank LIMIT ?"
        )
        try:
            with self._lock:
                rows: list[Any] = self._db.execute(
                    sql, (match, limit * CANDIDATES_PER_RESULT)
                ).fetchall()
                top = [row[0] for row in rows[: coverage_depth or 0]]  # BM25's own best
                terms = coverage_terms(question, groups) if coverage_depth is not None else []
                weights = self._word_weights(terms, top)
                passing = coverage_depth is not None and self._in_passing(terms, weights, top)
        except sqlite3.Error as error:
            raise RetrievalError("Docs index query failed.") from error
        declined = coverage_depth is not None and (
            passing or _coverage(weights, set(top)) < NOT_FOUND_COVERAGE
        )
        if not rows or declined:
            return []
        asked = terms_of(question) | {
            light_stem(word)
            for group in groups
            if " " not in group.word
            for alternative in group.alternatives
            for word in alternative.words
        }
        return sorted((self._weighed(row, asked) for row in rows), key=lambda p: -p.score)

    @staticmethod
    def _weighed(row: Sequence[Any], asked: set[str]) -> Passage:
        """The passage of a result row: a page's top section weighed down, a section
        weighed up by the share of its heading's words the question uses."""
        _, path, anchor, page_title, heading, body, code, rank = row
        factor = 1.0 if anchor else PAGE_TOP_WEIGHT
        heading_terms = terms_of(heading) if anchor else set()
        if heading_terms:
            share = len(heading_terms & asked) / len(heading_terms)
            factor *= 1 + (HEADING_MATCH_WEIGHT - 1) * share
        return Passage(
            path, anchor or None, page_title, heading, body, code, score=-float(rank) * factor
        )

    def _in_passing(
        self,
        terms: Sequence[tuple[str, str]],
        weights: Sequence[tuple[float, set[int]]],
        rowids: Sequence[int],
    ) -> bool:
        """Whether the given chunks share only one of a question's several words, and that
        one only in their text, not in a heading or page title (lock held): a passing
        mention ("costs" in "a page view costs that script") of a question about
        something else ("how much does it cost"). See PASSING_MIN_TERMS."""
        if len(terms) < PASSING_MIN_TERMS:
            return False
        held = [
            expression for (_, expression), (_, hits) in zip(terms, weights, strict=True) if hits
        ]
        if len(held) != 1:
            return False
        titled = self._rows_matching(f"{{page_title heading}} : ({held[0]})")
        return not titled.intersection(rowids)

    def _words_of(self, passage: Passage) -> frozenset[str]:
        """`word_set`, remembered per chunk (at most one entry per indexed chunk)."""
        key = (passage.path, passage.anchor, passage.text)
        words = self._words.get(key)
        if words is None:
            words = self._words[key] = word_set(passage)
        return words

    def _word_weights(
        self, terms: Sequence[tuple[str, str]], rowids: Sequence[int]
    ) -> list[tuple[float, set[int]]]:
        """Per coverage term: its IDF weight and which of the given chunks hold it (lock held).

        A term the docs never use weighs as much as the rarest possible word, so
        a question about something the docs never mention is mostly not covered.
        """
        wanted = set(rowids)
        weights: list[tuple[float, set[int]]] = []
        for _, expression in terms:
            matching = self._rows_matching(expression)
            count = len(matching)
            weight = math.log((self.size - count + 0.5) / (count + 0.5) + 1.0)
            weights.append((weight, wanted.intersection(matching)))
        return weights

    def all_passages(self) -> list[Passage]:
        """Every indexed chunk, in insertion order (for checks over the whole corpus)."""
        with self._lock:
            rows: list[Any] = self._db.execute(
                "SELECT path, anchor, page_title, heading, body, code FROM chunks ORDER BY rowid"
            ).fetchall()
        return [
            Passage(path, anchor or None, page_title, heading, body, code)
            for path, anchor, page_title, heading, body, code in rows
        ]

    def search_plain_bm25(self, question: str, limit: int) -> list[Passage]:
        """The eval's peer: plain FTS5 BM25 over the same table, nothing of ours on top.

        Every word of the question OR-ed (no stopwords, no prefixes), default
        column weights over the text columns, no score floor.
        """
        words = list(dict.fromkeys(_WORD.findall(question.lower())))
        if not words or limit < 1:
            return []
        match = " OR ".join(f'"{word}"' for word in words)
        sql = (
            f"SELECT path, anchor, page_title, heading, body, code, {_PLAIN_RANK} AS rank "
            "FROM chunks WHERE chunks MATCH ? ORDER BY rank LIMIT ?"
        )
        with self._lock:
            rows: list[Any] = self._db.execute(sql, (match, limit)).fetchall()
        return [
            Passage(path, anchor or None, page_title, heading, body, code, score=-float(rank))
            for path, anchor, page_title, heading, body, code, rank in rows
        ]

    def close(self) -> None:
        with self._lock:
            self._db.close()


class SqliteRetriever:
    """The default `Retriever`: a `DocsIndex` queried on a worker thread.

    The wait is abandonable, so the app's retrieval deadline can fire even if
    a query were slow; the thread then finishes on its own.
    """

    def __init__(self, index: DocsIndex) -> None:
        self.index = index

    async def retrieve(self, question: str, limit: int) -> Sequence[Passage]:
        return await anyio.to_thread.run_sync(
            self.index.search, question, limit, abandon_on_cancel=True
        )


_ABBREVIATIONS: Final = frozenset(["e.g.", "i.e.", "etc.", "vs.", "cf.", "approx."])
"""A full stop after these does not end a sentence ("e.g. `design/*`")."""

_SENTENCE_END: Final = re.compile(r"[.!?][)\"'”’]*\s+")


def sentences(text: str) -> list[str]:
    """Split passage text into whole sentences (used by the extractive generator).

    Every line (a paragraph, list item or table cell) is split after `.`, `!`
    or `?` followed by white space, except inside inline code (an odd number
    of backticks before the stop) and after a common abbreviation, so a quote
    built from these pieces never stops mid-sentence or mid-code span.
    """
    found: list[str] = []
    for line in text.split("\n"):
        start = 0
        for end in _SENTENCE_END.finditer(line):
            candidate = line[start : end.end()]
            last_word = candidate.split()[-1].lower() if candidate.split() else ""
            if candidate.count("`") % 2 or last_word in _ABBREVIATIONS:
                continue
            found.append(candidate.strip())
            start = end.end()
        found.append(line[start:].strip())
    return [sentence for sentence in found if sentence]


STEM_CACHE_MAX: Final = 8_192
"""Distinct words whose stems are remembered (docs repeat the same words in every answer)."""


@functools.lru_cache(maxsize=STEM_CACHE_MAX)
def light_stem(word: str) -> str:
    """A crude English stem for sentence scoring: `installing`/`installs` -> `install`."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def terms_of(text: str) -> set[str]:
    """Stemmed, lower-cased non-stopword terms of a text (for sentence scoring)."""
    return {
        light_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOPWORDS and len(w) > 1
    }
