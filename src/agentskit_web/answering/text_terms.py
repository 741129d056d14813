"""Words of a text: the index's tokens, the question's words, stopwords and light stems.

Two kinds of words, kept apart on purpose:

- *tokens* are what the inverted index stores and searches: runs of letters
  and digits (an underscore or a hyphen separates), lower-cased, diacritics
  removed, Porter-stemmed (`tokens`). This is FTS5's `porter unicode61
  remove_diacritics 2` tokenizer, which the search was tuned over.
- *words* are what a reader typed (`WORD`, `\\w+`, underscores kept): the
  question's groups, the vocabulary for typo repair and the quote scoring
  (`terms_of`, `light_stem`) work on them.
"""

import functools
import re
import unicodedata
from typing import Final

from .porter import porter_stem

WORD: Final = re.compile(r"\w+", re.UNICODE)
"""A reader's word (letters, digits and underscores)."""

_TOKEN: Final = re.compile(r"[^\W_]+", re.UNICODE)
"""An index token: letters and digits only (FTS5 unicode61 separates on `_`)."""

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
"""The common words no search or quote scoring counts."""

LIGHT_STEM_CACHE_MAX: Final = 8_192
"""Distinct words whose light stems are remembered (docs repeat the same words)."""


@functools.lru_cache(maxsize=LIGHT_STEM_CACHE_MAX)
def _folded(text: str) -> str:
    """Lower-cased, diacritics removed ("Ramírez" -> "ramirez")."""
    lowered = text.lower()
    if lowered.isascii():
        return lowered
    decomposed = unicodedata.normalize("NFD", lowered)
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def tokens(text: str) -> list[str]:
    """The index tokens of a text, in order (each position is one token)."""
    return [porter_stem(token) for token in _TOKEN.findall(_folded(text))]


@functools.lru_cache(maxsize=LIGHT_STEM_CACHE_MAX)
def light_stem(word: str) -> str:
    """A crude English stem for sentence scoring: `installing`/`installs` -> `install`."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def terms_of(text: str) -> set[str]:
    """Stemmed, lower-cased non-stopword terms of a text (for heading and sentence scoring)."""
    return {light_stem(w) for w in WORD.findall(text.lower()) if w not in _STOPWORDS and len(w) > 1}
