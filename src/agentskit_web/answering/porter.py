"""The Porter stemmer, as SQLite's FTS5 `porter` tokenizer applies it.

Why our own: the search was tuned over FTS5's index, whose tokens are Porter
stems; to keep its rankings (and its evals) the pure-Python index must stem
every word to the same token. FTS5 follows Porter's published algorithm with
the two later revisions of step 2 ("bli" -> "ble", "logi" -> "log"), stems
only tokens of 3 to 64 bytes, and treats any non-ASCII letter as a consonant.
A test compares this module with SQLite's tokenizer over a docs vocabulary.
(The snowball "porter" stemmer differs on the step-2 revisions, and a
dependency in the page costs its wheel's bytes on every first visit.)
"""

import functools
from typing import Final

STEM_MIN_BYTES: Final = 3
"""Shorter tokens are kept as they are (FTS5's rule)."""
STEM_MAX_BYTES: Final = 64
"""Longer tokens are kept as they are (FTS5's rule)."""
STEM_CACHE_MAX: Final = 65_536
"""Distinct words whose stems are remembered (a docs vocabulary has about 20,000)."""

_VOWELS: Final = frozenset("aeiou")


def _consonant(word: str, i: int) -> bool:
    char = word[i]
    if char in _VOWELS:
        return False
    if char == "y":
        return i == 0 or not _consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """m in [C](VC)^m[V]: the number of vowel-consonant sequences of a stem."""
    count = 0
    previous_vowel = False
    for i in range(len(stem)):
        vowel = not _consonant(stem, i)
        if previous_vowel and not vowel:
            count += 1
        previous_vowel = vowel
    return count


def _has_vowel(stem: str) -> bool:
    return any(not _consonant(stem, i) for i in range(len(stem)))


def _double_consonant(stem: str) -> bool:
    return len(stem) >= 2 and stem[-1] == stem[-2] and _consonant(stem, len(stem) - 1)


def _cvc(stem: str) -> bool:
    """*o: the stem ends consonant-vowel-consonant, the last not w, x or y."""
    n = len(stem)
    return (
        n >= 3
        and _consonant(stem, n - 3)
        and not _consonant(stem, n - 2)
        and _consonant(stem, n - 1)
        and stem[-1] not in "wxy"
    )


def _step1a(word: str) -> str:
    # SQLite's bounds: "sses" and "ies" need a letter before them, else only the "s" goes.
    if word.endswith("sses") and len(word) > 4:
        return word[:-2]
    if word.endswith("ies") and len(word) > 3:
        return word[:-2]
    if word.endswith("ss"):
        return word
    if word.endswith("s"):
        return word[:-1]
    return word


def _step1b(word: str) -> str:
    if word.endswith("eed") and len(word) > 3:
        return word[:-1] if _measure(word[:-3]) > 0 else word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
            stem = word[: -len(suffix)]
            if stem.endswith(("at", "bl", "iz")):
                return stem + "e"
            if _double_consonant(stem) and stem[-1] not in "lsz":
                return stem[:-1]
            if _measure(stem) == 1 and _cvc(stem):
                return stem + "e"
            return stem
    return word


def _step1c(word: str) -> str:
    if word.endswith("y") and _has_vowel(word[:-1]):
        return word[:-1] + "i"
    return word


_STEP2: Final = (
    ("ational", "ate"),
    ("tional", "tion"),
    ("enci", "ence"),
    ("anci", "ance"),
    ("izer", "ize"),
    ("logi", "log"),
    ("bli", "ble"),
    ("alli", "al"),
    ("entli", "ent"),
    ("eli", "e"),
    ("ousli", "ous"),
    ("ization", "ize"),
    ("ation", "ate"),
    ("ator", "ate"),
    ("alism", "al"),
    ("iveness", "ive"),
    ("fulness", "ful"),
    ("ousness", "ous"),
    ("aliti", "al"),
    ("iviti", "ive"),
    ("biliti", "ble"),
)
_STEP3: Final = (
    ("icate", "ic"),
    ("ative", ""),
    ("alize", "al"),
    ("iciti", "ic"),
    ("ical", "ic"),
    ("ful", ""),
    ("ness", ""),
)
_STEP4: Final = (
    "al",
    "ance",
    "ence",
    "er",
    "ic",
    "able",
    "ible",
    "ant",
    "ement",
    "ment",
    "ent",
    "ion",
    "ou",
    "ism",
    "ate",
    "iti",
    "ous",
    "ive",
    "ize",
)


def _replace_first(word: str, rules: tuple[tuple[str, str], ...], min_measure: int) -> str:
    """The first rule whose suffix ends the word decides (applied only if the stem's
    measure exceeds min_measure); later rules are not tried (Porter's rule)."""
    for suffix, replacement in rules:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem + replacement if _measure(stem) > min_measure else word
    return word


def _longest_first(rules: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(rules, key=lambda rule: -len(rule[0])))


_STEP2_ORDERED: Final = _longest_first(_STEP2)
_STEP3_ORDERED: Final = _longest_first(_STEP3)
_STEP4_ORDERED: Final = _longest_first(tuple((suffix, "") for suffix in _STEP4))


def _step4(word: str) -> str:
    for suffix, _ in _STEP4_ORDERED:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            if suffix == "ion" and not stem.endswith(("s", "t")):
                return word
            return stem if _measure(stem) > 1 else word
    return word


def _step5(word: str) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        measure = _measure(stem)
        if measure > 1 or (measure == 1 and not _cvc(stem)):
            word = stem
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word


@functools.lru_cache(maxsize=STEM_CACHE_MAX)
def porter_stem(token: str) -> str:
    """The FTS5 porter token of a lower-cased, diacritic-free token."""
    size = len(token.encode("utf-8"))
    if size < STEM_MIN_BYTES or size > STEM_MAX_BYTES:
        return token
    word = _step1c(_step1b(_step1a(token)))
    word = _replace_first(word, _STEP2_ORDERED, 0)
    word = _replace_first(word, _STEP3_ORDERED, 0)
    return _step5(_step4(word))
