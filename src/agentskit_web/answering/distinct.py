"""One answer quotes a section once and never two passages that say the same thing."""

from collections.abc import Callable, Iterable
from typing import Final

from .chunk import Passage
from .text_terms import WORD

NEAR_DUPLICATE_JACCARD: Final = 0.8
"""Two passages whose word sets overlap this much say the same thing: one answer keeps one."""


def word_set(passage: Passage) -> frozenset[str]:
    """The distinct lower-cased words of a passage's text and code."""
    return frozenset(WORD.findall(f"{passage.text} {passage.code}".lower()))


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
