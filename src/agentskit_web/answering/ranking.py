"""The search: a question to its best distinct passages, or [] when it is declined.

`SearchIndex` is the one implementation the Ask backend (server/) and the
static in-page answers (`static_index.StaticSearch`) run. It ports the search
that FTS5 ran before (docs/design/answering.md): BM25 with FTS5's formula and
field weights over the expanded question (`query_terms`), then our own rules:

- a page's top section is weighed down (PAGE_TOP_WEIGHT) and a section whose
  heading words the question uses is weighed up (HEADING_MATCH_WEIGHT);
- a change-log section is weighed down unless the question asks about versions
  (CHANGELOG_WEIGHT, `changelog`);
- one passage per section, no near-duplicates (`distinct`), nothing far
  below the best (RELATIVE_SCORE_FLOOR);
- a question of two parts is searched part by part too (`question_split`);
- a question its best passages hold too little of is declined (`decline`), or,
  for a near miss, its closest passages come back marked as not answering it;
  the best passage's page-mates among the best rows count then
  (`decline.PAGE_COVERAGE`), so their text is read for such a question too.
"""

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from .changelog import asks_about_versions
from .chunk import Chunk, Found, Passage
from .decline import (
    COVERAGE_PASSAGES_PER_PART,
    PAGE_MATE_ROWS,
    Verdict,
    coverage_terms,
    name_phrases,
    named_words,
    verdict,
)
from .distinct import distinct_passages, word_set
from .inverted_index import FIELD_COUNT, Hits, InvertedIndex, Phrase
from .page_roles import asks_for_role
from .query_terms import (
    ALL_AIDS,
    Alternative,
    QueryOptions,
    TermGroup,
    Vocabulary,
    normalise_synonyms,
    query_phrases,
    question_words,
    term_groups,
)
from .question_split import merged, split_question
from .reference import is_reference_anchor, names_the_object
from .text_terms import STOPWORDS, WORD, light_stem, terms_of

QUERY_MAX_TERMS: Final = 32
"""Distinct search terms taken from one question (the rest are ignored)."""

RELATIVE_SCORE_FLOOR: Final = 0.5
"""Passages scoring under this fraction of the best one are dropped: they share a
common word with the question but are rarely about it, and only add noise."""

CANDIDATES_PER_RESULT: Final = 3
"""Rows ranked per passage asked for, so dropping repeats of a section still fills the list."""

CANDIDATES_MIN_ROWS: Final = 12
"""Rows ranked at least, however few passages are asked for: the heading and page-top
weights reorder these, so a section that BM25 puts ninth but whose heading the question
names must be among them for one or two passages as for four (the Ask app's and the
page's usual count, which ranks 12 rows either way)."""

PAGE_TOP_WEIGHT: Final = 0.7
"""Score factor of a page's top section (the text under its h1)."""

HEADING_MATCH_WEIGHT: Final = 1.5
"""Score factor of a section whose heading words all appear in the question (a section
with some of them gets a share of it): readers often name the section they need
("which metrics...", "rate limiting"). Calibrated on the tuning split."""

REFERENCE_WEIGHT: Final = 0.8
"""Score factor of an API reference entry the question does not name (`reference`): a
guide section and an entry that match alike rank guide first, and the entry stays
among the sources (issue 32). Chosen on the tuning halves (docs/design/answer-eval.md,
"Round seven")."""

META_WEIGHT: Final = 0.5
"""Score factor of a contributing, sponsor, third-party listing, code of conduct or licence
section (`page_roles`) the question does not ask for. Chosen on the tuning halves
(docs/design/answer-eval.md, "Round seven")."""

CHANGELOG_WEIGHT: Final = 0.5
"""Score factor of a change-log section (`Chunk.history`: the reader found a version number
in its heading or a heading above it) when the question does not ask about versions
(holds no version number and no word of the page's title). A release-notes entry names a
feature in one line, so it matches a short question as well as the section documenting
the feature, but a reader asking "how do I X" wants the documentation, not its history.

Swept from 1 down to 0 on the tuning halves of all three evals
(`experiments/changelog_rank/sweep.py`; docs/design/answer-eval.md, "Round five"). Only
Starlette has a change log (our docs and Pydantic have no version heading, so nothing of
theirs moves). Every factor up to 0.5 gives Starlette's best tuning figures (R@3 0.421 ->
0.474, MRR 0.373 -> 0.391; R@1 and the decline unchanged); 0.55 to 0.9 gain less. The
gentlest of the best is kept: a change-log entry still wins with twice the evidence, so a
question about history that names no version ("when was X added") can still reach it."""

MATCH_CACHE_MAX: Final = 4_096
"""Phrases whose matching rows are kept: readers ask with the same words again and again."""

FIELD_WEIGHTS: Final = (1.0, 4.0, 1.0, 0.25)
"""BM25 weight of each field (page title, heading, text, code). Headings say what a
section is about; code blocks often repeat words (JSON keys, flags) without being
about them, so they weigh least. The page title weighs as much as the text: every
section of a page carries it, so weighing it up lifts all of a page's sections when
the title shares a word with the question, not the section that answers.

Chosen by the sweep on the tuning halves of all three evals (ours, Pydantic, Starlette;
`python -m agentskit_web.bench.sweep`, docs/design/answer-eval.md, "Round three"): 324
settings of title, heading, code, k1 and b; a setting may ship only if no corpus's R@1,
R@3, MRR or decline balanced accuracy is lower than with the former (1.5, 4, 1, 0.25),
and among those the best mean MRR wins. Only this one passed (one more of our docs'
tuning questions first; the real corpora unchanged). The second round's (1, 2, 1, 0.5)
with k1 1.6 and b 0.6, better on Pydantic and Starlette, loses one of our docs' tuning
questions at R@3 and some of their decline balance, so it does not ship."""
PLAIN_FIELD_WEIGHTS: Final = (1.0,) * FIELD_COUNT
"""The eval's plain-BM25 peer: every field weighs the same."""

BM25_K1: Final = 1.2
BM25_B: Final = 0.75
"""FTS5's bm25() constants (and the textbook ones): every other k1 (1.6, 2) and b (0.3 to
0.6) of the sweep lowers some corpus's tuning half; see FIELD_WEIGHTS."""
PLAIN_BM25_K1: Final = 1.2
PLAIN_BM25_B: Final = 0.75
"""The eval's plain-BM25 peer keeps FTS5's (and the textbook) constants."""
BM25_MIN_IDF: Final = 1e-6
"""FTS5 floors a phrase's IDF here, so a word in most rows still counts a little."""


def bm25_scores(
    phrases: Sequence[Phrase],
    hits_of: Callable[[Phrase], Hits],
    length: Callable[[int], int],
    size: int,
    average_length: float,
    weights: Sequence[float],
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> dict[int, float]:
    """Row -> BM25 score (higher is better) of the rows matching any phrase: FTS5's
    `bm25()` formula negated (with its constants when `k1` and `b` are 1.2 and 0.75),
    each phrase (repeats included) a query term."""
    scores: dict[int, float] = {}
    norms: dict[int, float] = {}
    average = average_length or 1.0
    title, heading, body, code = weights
    for phrase in phrases:
        hits = hits_of(phrase)
        idf = math.log((size - len(hits) + 0.5) / (len(hits) + 0.5))
        idf = idf if idf > 0 else BM25_MIN_IDF
        for row, fields in hits.items():
            frequency = title * fields[0] + heading * fields[1] + body * fields[2]
            frequency += code * fields[3]
            norm = norms.get(row)
            if norm is None:
                norm = norms[row] = k1 * (1 - b + b * length(row) / average)
            gain = idf * frequency * (k1 + 1) / (frequency + norm)
            scores[row] = scores.get(row, 0.0) + gain
    return scores


def best_rows(scores: dict[int, float], count: int) -> list[int]:
    """The `count` best rows, ties in index order."""
    return sorted(scores, key=lambda row: (-scores[row], row))[:count]


class SearchIndex:
    """The search over one site's chunks (see the module doc)."""

    def __init__(
        self,
        index: InvertedIndex,
        vocabulary: Vocabulary,
        synonyms: dict[str, tuple[tuple[str, ...], ...]],
        options: QueryOptions = ALL_AIDS,
    ) -> None:
        self.index = index
        self.vocabulary = vocabulary
        self.synonyms = synonyms
        self.options = options
        self._hits: dict[Phrase, Hits] = {}
        self._words: dict[tuple[str, str | None, str], frozenset[str]] = {}

    @classmethod
    def from_chunks(
        cls,
        chunks: Iterable[Chunk],
        *,
        synonyms: Iterable[Sequence[str]] = (),
        options: QueryOptions = ALL_AIDS,
    ) -> "SearchIndex":
        chunk_list = list(chunks)
        vocabulary = Vocabulary(f"{c.page_title} {c.heading} {c.text} {c.code}" for c in chunk_list)
        return cls(InvertedIndex.of(chunk_list), vocabulary, normalise_synonyms(synonyms), options)

    @property
    def size(self) -> int:
        return self.index.size

    def add(self, chunks: Iterable[Chunk]) -> None:
        """Index more chunks (what was remembered per phrase is forgotten)."""
        chunk_list = list(chunks)
        self.index.add(chunk_list)
        self.vocabulary.add(f"{c.page_title} {c.heading} {c.text} {c.code}" for c in chunk_list)
        self.forget()

    def forget(self) -> None:
        """Drop what is remembered per phrase and passage (the data changed)."""
        self._hits.clear()
        self._words.clear()

    # ---- the question

    def groups(self, question: str) -> list[TermGroup]:
        """The question's term groups (compounds, repaired typos, synonyms) for this index."""
        for word in question_words(question, STOPWORDS, QUERY_MAX_TERMS):
            # Read first what any question needs (its words, as words and as tokens), so
            # the static index fetches it before deciding which words are unknown.
            self.vocabulary.knows(word)
            self._finds(word)
        if self.size:
            self.index.length(0)  # ranking reads row lengths: the static index fetches them now
        self.index.checkpoint()
        found = term_groups(
            question,
            self.vocabulary,
            self.synonyms,
            STOPWORDS,
            QUERY_MAX_TERMS,
            self.options,
            self._finds,
        )
        self.index.checkpoint()
        return found

    def _finds(self, word: str) -> bool:
        """Whether the index matches the word as searched (stemmed, prefix when long)."""
        if self.vocabulary.count(word):
            return True
        return bool(self.hits(Alternative((word,)).phrase()))

    def hits(self, phrase: Phrase) -> Hits:
        """The rows matching a phrase, with hits per field, remembered (at most
        MATCH_CACHE_MAX phrases; the oldest goes first)."""
        found = self._hits.get(phrase)
        if found is None:
            found = self.index.phrase_hits(phrase)
            if len(self._hits) >= MATCH_CACHE_MAX:
                self._hits.pop(next(iter(self._hits)))
            self._hits[phrase] = found
        return found

    # ---- the search

    def search(self, question: str, limit: int) -> list[Passage]:
        """The best `limit` distinct passages for a question, best first; [] means not
        answered: declined, or a near miss (whose closest passages `find` gives)."""
        return self.find(question, limit).answered

    def find(self, question: str, limit: int) -> Found:
        """The best `limit` distinct passages for a question, best first, and whether they
        answer it.

        BM25 over the expanded question picks candidates; each score is then
        weighed down for a page's top section (`PAGE_TOP_WEIGHT`) and up for a
        heading the question names. One passage per section is kept and none that
        nearly repeats a better one; passages far below the best are dropped.
        When the best passage (one per part of the question) holds too little of
        the question (`decline`), nothing is returned, or, for a near miss, the
        passages come back not grounded. A question of two parts is also searched
        part by part (`question_split`).
        """
        if limit < 1:
            return Found()
        split = split_question(question)
        whole, judged = self._ranked(question, limit, COVERAGE_PASSAGES_PER_PART * len(split))
        if not whole:
            return Found()
        parts = [part for part in split if part != question]
        if parts:
            lists = [whole] + [self._ranked(part, limit, coverage_depth=None)[0] for part in parts]
            whole = list(merged(lists))
        return Found(tuple(self._kept(whole, limit)), grounded=judged == "answered")

    def _kept(self, ranked: Iterable[Passage], limit: int) -> list[Passage]:
        """Distinct passages, best first, without those far below the best."""
        found = distinct_passages(ranked, limit, self._words_of)
        if found and found[0].score > 0:
            floor = found[0].score * RELATIVE_SCORE_FLOOR
            found = [passage for passage in found if passage.score >= floor]
        return found

    def _ranked(
        self, question: str, limit: int, coverage_depth: int | None
    ) -> tuple[list[Passage], Verdict]:
        """Candidate passages for a question, reweighed and sorted, best first, with the
        decline test's verdict over its best `coverage_depth` rows ("answered" without a
        depth); no passages when the question has nothing searchable or is declined."""
        groups = self.groups(question)
        phrases = query_phrases(groups)
        if not phrases:
            return [], "declined"
        terms = coverage_terms(question, groups) if coverage_depth is not None else []
        names = named_words(question) if terms else frozenset()
        for _, term_phrases in terms:
            for phrase in term_phrases:
                self.hits(phrase)
        for phrase in name_phrases(terms, names):
            self.hits(phrase)
        scores = self._scores(phrases, FIELD_WEIGHTS, BM25_K1, BM25_B)
        self.index.checkpoint()
        rows = best_rows(scores, max(limit * CANDIDATES_PER_RESULT, CANDIDATES_MIN_ROWS))
        top = rows[: coverage_depth or 0]  # BM25's own best
        judged: Verdict = "answered"
        if rows and coverage_depth is not None:
            judged = verdict(
                terms, top, self.hits, self.size, names, lambda: self._page_mates(rows, top)
            )
        if not rows or judged == "declined":
            return [], "declined"
        asked = terms_of(question) | {
            light_stem(word)
            for group in groups
            if " " not in group.word
            for alternative in group.alternatives
            for word in alternative.words
        }
        chunks = [self.index.chunk(row) for row in rows]
        self.index.checkpoint()
        history = _changelog_sections(question, chunks, asked)
        weighed = [
            _weighed(
                chunk,
                scores[row],
                asked,
                (CHANGELOG_WEIGHT if old else 1.0)
                * _reference_factor(question, chunk)
                * _role_factor(question, chunk),
            )
            for row, chunk, old in zip(rows, chunks, history, strict=True)
        ]
        return sorted(weighed, key=lambda p: -p.score), judged

    def _page_mates(self, rows: Sequence[int], top: Sequence[int]) -> list[int]:
        """The rows among the best PAGE_MATE_ROWS of `rows` (best first) on the page of a
        row of `top`, `top` itself left out (`decline.PAGE_COVERAGE`)."""
        pages = {self.index.chunk(row).path for row in top}
        return [
            row
            for row in rows[:PAGE_MATE_ROWS]
            if row not in top and self.index.chunk(row).path in pages
        ]

    def _scores(
        self,
        phrases: Sequence[Phrase],
        weights: Sequence[float],
        k1: float = BM25_K1,
        b: float = BM25_B,
    ) -> dict[int, float]:
        size = self.size
        average = self.index.total_tokens / size if size else 0.0
        return bm25_scores(phrases, self.hits, self.index.length, size, average, weights, k1, b)

    def _words_of(self, passage: Passage) -> frozenset[str]:
        """`word_set`, remembered per chunk (at most one entry per indexed chunk)."""
        key = (passage.path, passage.anchor, passage.text)
        words = self._words.get(key)
        if words is None:
            words = self._words[key] = word_set(passage)
        return words

    def all_chunks(self) -> list[Chunk]:
        """Every indexed chunk, in index order, as indexed (with its change-log mark)."""
        return [self.index.chunk(row) for row in range(self.size)]

    def all_passages(self) -> list[Passage]:
        """Every indexed chunk, in index order (for checks over the whole corpus)."""
        return [_passage(chunk, 0.0) for chunk in self.all_chunks()]

    def search_plain_bm25(self, question: str, limit: int) -> list[Passage]:
        """The eval's peer: plain BM25 over the same index, nothing of ours on top.

        Every word of the question OR-ed (no stopwords, no prefixes), the same
        weight for every field, no score floor.
        """
        words = list(dict.fromkeys(WORD.findall(question.lower())))
        if not words or limit < 1:
            return []
        scores = self._scores(
            [Phrase.of(word) for word in words], PLAIN_FIELD_WEIGHTS, PLAIN_BM25_K1, PLAIN_BM25_B
        )
        rows = best_rows(scores, limit)
        chunks = [self.index.chunk(row) for row in rows]
        self.index.checkpoint()
        return [_passage(chunk, scores[row]) for row, chunk in zip(rows, chunks, strict=True)]


def _passage(chunk: Chunk, score: float) -> Passage:
    return Passage(
        chunk.path,
        chunk.anchor or None,
        chunk.page_title,
        chunk.heading,
        chunk.text,
        chunk.code,
        score=score,
    )


def _changelog_sections(question: str, chunks: Sequence[Chunk], asked: set[str]) -> list[bool]:
    """For each candidate, whether it is a change-log section (`Chunk.history`, which the
    reader sets: its heading or one above it is a version number) that the question does
    not ask about (`changelog.asks_about_versions`)."""
    return [
        chunk.history and not asks_about_versions(question, terms_of(chunk.page_title), asked)
        for chunk in chunks
    ]


def _reference_factor(question: str, chunk: Chunk) -> float:
    """REFERENCE_WEIGHT for an API reference entry the question does not name
    (`reference`), else 1."""
    if is_reference_anchor(chunk.anchor) and not names_the_object(question, chunk.anchor or ""):
        return REFERENCE_WEIGHT
    return 1.0


def _role_factor(question: str, chunk: Chunk) -> float:
    """META_WEIGHT for a section about the project rather than its use (`Chunk.role`,
    marked by the reader: `page_roles`) that the question does not ask for, else 1."""
    if chunk.role is not None and not asks_for_role(question, chunk.role):
        return META_WEIGHT
    return 1.0


def _weighed(chunk: Chunk, score: float, asked: set[str], factor: float = 1.0) -> Passage:
    """The passage of a candidate: a page's top section weighed down, a section
    weighed up by the share of its heading's words the question uses, and by `factor`."""
    factor *= 1.0 if chunk.anchor else PAGE_TOP_WEIGHT
    heading_terms = terms_of(chunk.heading) if chunk.anchor else set()
    if heading_terms:
        share = len(heading_terms & asked) / len(heading_terms)
        factor *= 1 + (HEADING_MATCH_WEIGHT - 1) * share
    return _passage(chunk, score * factor)
