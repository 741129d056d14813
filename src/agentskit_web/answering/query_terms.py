"""From a reader's question to query groups: compounds, synonyms and typo repair.

Readers do not use the docs' words. Each searchable word of a question becomes
one *group* of alternatives, any of which may match:

- the word itself (a prefix query when long enough, so "embed" finds
  "embedding");
- compounds: "subfolder" also searches the phrase "sub folder" when the docs
  only write "sub-folder"/"sub folders", and two adjacent words whose join is
  a docs word ("data base" -> "database") also search the joined word;
- typo repair: a word the docs never use is replaced by the docs word closest
  to it (one edit for short words, two for long ones), found through a
  trigram index of the docs' vocabulary, so "embeding" finds "embedding";
- roots: a word the docs never use, that typo repair does not fix either, is
  also searched without its derivational suffix ("builders" -> "build");
- synonyms: a site-configured list of equivalent terms ("llm" ~ "model"); a
  phrase that holds another of the group's words is left out (it would count
  twice);
- a hyphenated compound of the question ("fine-tune") is one unit for the
  not-found test (retrieval.coverage_terms).

`Vocabulary` is built once per index from the indexed text; a question is
turned into groups in well under a millisecond on a docs-sized vocabulary.
Each alternative is searched as a `Phrase` of index tokens (`inverted_index`):
a one-word alternative of `PREFIX_MIN_CHARS` or more as a prefix of its stem.

The vocabulary reads its words through `count`, `words_from` and
`words_between`, never its dict directly, so the static index
(`static_index.PartialVocabulary`) can see which of its parts a question needs.
"""

import bisect
import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from .inverted_index import Phrase
from .text_terms import WORD

LAST_CHAR: Final = "\U0010ffff"
"""Greater than any character: `word + LAST_CHAR` bounds the words starting with `word`."""

PREFIX_MIN_CHARS: Final = 4
"""Words at least this long are searched as prefixes (Porter stems "embed" and
"embedding" differently; a prefix query on the stemmed word finds both)."""

COMPOUND_PART_MIN_CHARS: Final = 3
"""The shortest part a compound is split into ("sub" + "folder")."""

TYPO_MIN_CHARS: Final = 4
"""Shorter unknown words are not repaired: too many docs words are one edit away."""

TYPO_CHANGE_MIN_CHARS: Final = 6
"""Below this length only a dropped letter is repaired ("limt" -> "limit"): a changed
letter in a short word is as likely another real word ("disk" is not "dist")."""

TYPO_LONG_WORD_CHARS: Final = 9
"""Words this long may be two edits away from the docs word; shorter ones one."""

TRIGRAMS_PER_EDIT: Final = 4
"""One edit (a swap of two letters included) changes at most this many padded trigrams,
so a word within `bound` edits shares at least len(word) - 4 * bound of them (the
q-gram lemma): a cheap pre-filter before the edit distance."""


def trigrams(word: str) -> set[str]:
    """The padded character trigrams of a word (`^em`, `emb`, ..., `ng$`)."""
    padded = f"^{word}$"
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


def edit_distance(left: str, right: str, bound: int) -> int:
    """Optimal-string-alignment distance (a swap counts as one edit), capped at bound + 1."""
    if abs(len(left) - len(right)) > bound:
        return bound + 1
    previous2: list[int] = []
    previous = list(range(len(right) + 1))
    for i, lc in enumerate(left, start=1):
        current = [i] + [0] * len(right)
        for j, rc in enumerate(right, start=1):
            cost = 0 if lc == rc else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and lc == right[j - 2] and left[i - 2] == rc:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > bound:
            return bound + 1
        previous2, previous = previous, current
    return previous[-1]


def is_subsequence(short: str, long: str) -> bool:
    """`short` is `long` with letters left out (the commonest typo: a dropped letter)."""
    letters = iter(long)
    return len(short) < len(long) and all(char in letters for char in short)


def within_one_edit(left: str, right: str) -> bool:
    """`edit_distance(left, right, 1) <= 1` in one linear pass (the common typo case)."""
    if left == right:
        return True
    if abs(len(left) - len(right)) > 1:
        return False
    if len(left) == len(right):
        diffs = [i for i, (a, b) in enumerate(zip(left, right, strict=True)) if a != b]
        if len(diffs) == 1:
            return True
        first, second = [*diffs, -1, -1][:2]
        return (
            len(diffs) == 2
            and second == first + 1
            and left[first] == right[second]
            and left[second] == right[first]
        )
    short, long = sorted((left, right), key=len)
    index = next(
        (i for i, (a, b) in enumerate(zip(short, long, strict=False)) if a != b), len(short)
    )
    return short[index:] == long[index + 1 :]


@dataclass(frozen=True, slots=True)
class Alternative:
    """One way a question word may appear in the docs: a word, or a phrase of words."""

    words: tuple[str, ...]

    def phrase(self) -> Phrase:
        """How the index searches it: one word of PREFIX_MIN_CHARS or more as a prefix."""
        if len(self.words) == 1:
            word = self.words[0]
            return Phrase.of(word, prefix=len(word) >= PREFIX_MIN_CHARS)
        return Phrase.of(" ".join(self.words))


@dataclass(frozen=True, slots=True)
class TermGroup:
    """The alternatives of one question word; the group matches when any of them does."""

    word: str
    alternatives: tuple[Alternative, ...]

    def phrases(self) -> tuple[Phrase, ...]:
        """The group's phrases; a passage matches the group when it holds any of them."""
        return tuple(alternative.phrase() for alternative in self.alternatives)


def normalise_synonyms(groups: Iterable[Sequence[str]]) -> dict[str, tuple[tuple[str, ...], ...]]:
    """term -> the other terms of its groups, each as a tuple of words (lower-cased)."""
    table: dict[str, list[tuple[str, ...]]] = {}
    for group in groups:
        terms = [tuple(WORD.findall(term.lower())) for term in group]
        terms = [t for t in dict.fromkeys(terms) if t]
        for term in terms:
            others = table.setdefault(" ".join(term), [])
            others.extend(t for t in terms if t != term and t not in others)
    return {key: tuple(value) for key, value in table.items()}


class Vocabulary:
    """The words of the indexed text, with document counts and a trigram index."""

    def __init__(self, texts: Iterable[str] = ()) -> None:
        self.counts: Counter[str] = Counter()
        self._by_trigram: dict[str, set[str]] = {}
        self._unindexed: list[str] = []
        """Words added since the trigram index was last built: only a typo repair reads
        that index, so it is built on the first repair, not on every add (adding a static
        index's word part in the page would otherwise cost ~10 ms of trigrams per part)."""
        self._sorted: list[str] | None = None
        self.add(texts)

    def add(self, texts: Iterable[str]) -> None:
        """Count each text's distinct words (a text is one chunk)."""
        counts: Counter[str] = Counter()
        for text in texts:
            counts.update(set(WORD.findall(text.lower())))
        self.add_counts(counts.items())

    def add_counts(self, counted: Iterable[tuple[str, int]]) -> None:
        """Add words with their chunk counts (the static index's vocabulary parts)."""
        items = list(counted)
        pairs = dict(items)
        if len(pairs) == len(items) and self.counts.keys().isdisjoint(pairs):
            dict.update(self.counts, pairs)  # a new part's words: one C-level update
            self._unindexed.extend(pairs)
            self._sorted = None
            return
        for word, count in items:
            if word not in self.counts:
                self._unindexed.append(word)
            self.counts[word] += count
        self._sorted = None

    def _trigram_index(self) -> dict[str, set[str]]:
        """Trigram -> words, brought up to date with the words added so far."""
        for word in self._unindexed:
            for gram in trigrams(word):
                self._by_trigram.setdefault(gram, set()).add(word)
        self._unindexed.clear()
        return self._by_trigram

    def sorted_words(self) -> list[str]:
        """Every word, sorted (the static index splits the vocabulary on this order)."""
        if self._sorted is None:
            self._sorted = sorted(self.counts)
        return self._sorted

    def need(self, low: str, high: str) -> None:
        """A hook: the words in [low, high] are about to be read (the static index
        records which of its parts hold them; the whole vocabulary has them all)."""

    def count(self, word: str) -> int:
        """In how many chunks the word appears (0: a word the docs never use)."""
        self.need(word, word)
        return self.counts.get(word, 0)

    def knows(self, word: str) -> bool:
        """A docs word, or (long enough) the prefix of one: "embed" is known via "embedding"."""
        if self.count(word):
            return True
        if len(word) < PREFIX_MIN_CHARS:
            return False
        self.need(word, word + LAST_CHAR)
        words = self.sorted_words()
        at = bisect.bisect_left(words, word)
        return at < len(words) and words[at].startswith(word)

    def split_compound(
        self, word: str, known: Callable[[str], bool] | None = None
    ) -> tuple[str, str] | None:
        """Two docs words that make up `word` ("subfolder" -> "sub", "folder"), the most used."""
        known = known or self.knows
        best: tuple[int, tuple[str, str]] | None = None
        for cut in range(COMPOUND_PART_MIN_CHARS, len(word) - COMPOUND_PART_MIN_CHARS + 1):
            head, tail = word[:cut], word[cut:]
            if self.count(head) and known(tail):
                weight = min(self.count(head), self.count(tail) or 1)
                if best is None or weight > best[0]:
                    best = (weight, (head, tail))
        return best[1] if best else None

    def repair(self, word: str) -> str | None:
        """The docs word closest to an unknown word (ties: the most used), or None."""
        if len(word) < TYPO_MIN_CHARS or word.isdigit():
            return None
        bound = 2 if len(word) >= TYPO_LONG_WORD_CHARS else 1
        self.need(word[0], word[0] + LAST_CHAR)  # a repair keeps the first letter
        shared: Counter[str] = Counter()
        by_trigram = self._trigram_index()
        for gram in trigrams(word):
            shared.update(by_trigram.get(gram, ()))
        needed = max(1, len(word) - TRIGRAMS_PER_EDIT * bound)
        best: tuple[int, int, int, str] | None = None
        for candidate, count in shared.items():
            if count < needed or len(candidate) < TYPO_MIN_CHARS or candidate[0] != word[0]:
                continue  # a typo seldom hits the first letter; "lone" is not "alone"
            dropped = is_subsequence(word, candidate)
            if not dropped and len(word) < TYPO_CHANGE_MIN_CHARS:
                continue
            distance = edit_distance(word, candidate, bound)
            if distance > bound:
                continue
            key = (distance, 0 if dropped else 1, -self.counts[candidate], candidate)
            if best is None or key < best:
                best = key
        return best[3] if best else None


ROOT_SUFFIXES: Final = ("ability", "ation", "ments", "ment", "able", "ers", "est", "er")
"""Derivational endings stripped from a word the docs never use ("builders" -> "build",
"largest" -> "larg"): FTS5's Porter stemmer removes only inflections ("builders" ->
"builder"), so a reader's derived form of a docs word would otherwise find nothing."""

ROOT_MIN_CHARS: Final = 4
"""The shortest root searched (as a prefix): shorter ones match too many unrelated words."""


def derived_root(word: str, known: Callable[[str], bool]) -> str | None:
    """The root of an unknown derived word that the docs use, as a prefix; else None."""
    for suffix in ROOT_SUFFIXES:
        root = word[: -len(suffix)]
        if word.endswith(suffix) and len(root) >= ROOT_MIN_CHARS and known(root):
            return root
    return None


def question_words(question: str, stopwords: frozenset[str], max_terms: int) -> list[str]:
    """The distinct searchable words of a question, in order (at most max_terms)."""
    words: list[str] = []
    for word in WORD.findall(question.lower()):
        if word in stopwords or word in words or (len(word) < 2 and not word.isdigit()):
            continue
        words.append(word)
        if len(words) >= max_terms:
            break
    return words


@dataclass(frozen=True, slots=True)
class QueryOptions:
    """Which of the matching aids are on (the eval switches them one by one)."""

    compounds: bool = True
    typos: bool = True
    synonyms: bool = True
    roots: bool = True


ALL_AIDS: Final = QueryOptions()
"""The shipped setting: every matching aid on."""


def term_groups(
    question: str,
    vocabulary: Vocabulary,
    synonyms: dict[str, tuple[tuple[str, ...], ...]],
    stopwords: frozenset[str],
    max_terms: int,
    options: QueryOptions = ALL_AIDS,
    known: Callable[[str], bool] | None = None,
) -> list[TermGroup]:
    """One group of alternatives per searchable word of the question (see module doc).

    `known(word)` says whether the index finds the word as it would be searched
    (the index passes its own check, which sees stemming; default: the
    vocabulary's plain-word check).
    """
    known = known or vocabulary.knows
    words = question_words(question, stopwords, max_terms)
    all_words = WORD.findall(question.lower())
    groups: list[TermGroup] = []
    for word in words:
        alternatives = [Alternative((word,))]
        found = known(word)
        if options.compounds and not found:
            parts = vocabulary.split_compound(word, known)
            if parts is not None:
                alternatives.append(Alternative(parts))
                found = True
        if options.typos and not found:
            repaired = vocabulary.repair(word)
            if repaired is not None:
                alternatives.append(Alternative((repaired,)))
                found = True
        if options.roots and not found:
            root = derived_root(word, known)
            if root is not None:
                alternatives.append(Alternative((root,)))
        if options.synonyms and not known(word):
            # Only for words the docs do not use: expanding a docs word would let a
            # rare synonym outweigh the word the reader and the docs share.
            alternatives.extend(Alternative(other) for other in synonyms.get(word, ()))
        groups.append(TermGroup(word, _without_subsumed(alternatives)))
    groups.extend(_joined_and_phrase_groups(all_words, vocabulary, synonyms, stopwords, options))
    return groups


def _without_subsumed(alternatives: Sequence[Alternative]) -> tuple[Alternative, ...]:
    """The alternatives without repeats and without a phrase that holds a one-word
    alternative ("language model" next to "model"): every passage with the phrase
    also has the word, so BM25 would count that passage's match twice."""
    unique = tuple(dict.fromkeys(alternatives))
    words = {a.words[0] for a in unique if len(a.words) == 1}
    return tuple(a for a in unique if len(a.words) == 1 or not words.intersection(a.words))


def _joined_and_phrase_groups(
    words: Sequence[str],
    vocabulary: Vocabulary,
    synonyms: dict[str, tuple[tuple[str, ...], ...]],
    stopwords: frozenset[str],
    options: QueryOptions,
) -> list[TermGroup]:
    """Groups for adjacent word pairs: a docs word they join into, or a two-word synonym."""
    groups: list[TermGroup] = []
    for left, right in itertools.pairwise(words):
        if left in stopwords or right in stopwords:
            continue  # "my site" is not the docs' "mysite"
        pair = f"{left} {right}"
        alternatives: list[Alternative] = []
        joined = left + right
        if options.compounds and vocabulary.count(joined):
            alternatives.append(Alternative((joined,)))
        if options.synonyms and pair in synonyms:
            alternatives.append(Alternative((left, right)))
            alternatives.extend(Alternative(other) for other in synonyms[pair])
        if alternatives:
            groups.append(TermGroup(pair, tuple(dict.fromkeys(alternatives))))
    return groups


def query_phrases(groups: Sequence[TermGroup]) -> list[Phrase]:
    """Every group's phrases, OR-ed, in order (a phrase in two groups counts twice, as
    it did in the FTS5 expression this replaces); [] when there is nothing to search."""
    return [phrase for group in groups for phrase in group.phrases()]
