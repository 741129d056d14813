"""`report --suggest-synonyms`: readers' words the docs never use, and docs words to pair
them with, as the site config's `search.synonyms` groups (docs/configuration.md#search).

A reader's word counts when it is in a declined or near-miss question and the search
cannot bridge it by itself: not a docs word, nor the prefix of one, nor one with the same
Porter stem ("charging" for "charged"), and no typo repair (answering/query_terms.py
`Vocabulary`). Its candidates are the docs words closest in
spelling (difflib's ratio, at least `CLOSEST_MIN_RATIO`): "colour" finds "color",
"logon" finds "login". Spelling cannot find a true synonym ("waterproof" for
"water-resistant"), so a word with no candidate is still listed, for the owner to pair by
hand. The groups printed are a draft: the owner keeps the ones that are right.
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from ..answering.chunk import Chunk
from ..answering.porter import porter_stem
from ..answering.query_terms import Vocabulary
from ..answering.text_terms import STOPWORDS, WORD
from ..protocol.limits import SITE_MAX_SYNONYM_GROUPS, SITE_SYNONYM_TERM_MAX_CHARS

CLOSEST_MIN_RATIO: Final = 0.75
CANDIDATES: Final = 3
WORD_MIN_CHARS: Final = 3


@dataclass(frozen=True, slots=True)
class UnknownWord:
    word: str
    asked: int
    closest: tuple[str, ...]


def unknown_words(questions: Iterable[str], chunks: Iterable[Chunk]) -> list[UnknownWord]:
    """Readers' words the search cannot match, most asked first, with their closest words."""
    vocabulary = Vocabulary(f"{c.page_title} {c.heading} {c.text} {c.code}" for c in chunks)
    asked: Counter[str] = Counter()
    for question in questions:
        for word in set(WORD.findall(question.lower())):
            fits = WORD_MIN_CHARS <= len(word) <= SITE_SYNONYM_TERM_MAX_CHARS
            if fits and word not in STOPWORDS and not word.isdigit():
                asked[word] += 1
    docs_words = [w for w in vocabulary.sorted_words() if len(w) >= WORD_MIN_CHARS]
    docs_stems = {porter_stem(w) for w in docs_words}
    found: list[UnknownWord] = []
    for word, count in sorted(asked.items(), key=lambda item: (-item[1], item[0])):
        if vocabulary.knows(word) or porter_stem(word) in docs_stems:
            continue
        if vocabulary.repair(word) is not None:
            continue
        closest = difflib.get_close_matches(word, docs_words, CANDIDATES, CLOSEST_MIN_RATIO)
        found.append(UnknownWord(word, count, tuple(closest)))
    return found


def synonyms_json(words: Iterable[UnknownWord]) -> str:
    """The `search` member of a site config: one group per word that has a candidate."""
    groups = [[w.word, w.closest[0]] for w in words if w.closest][:SITE_MAX_SYNONYM_GROUPS]
    rows = ",\n".join("      " + json.dumps(group, ensure_ascii=False) for group in groups)
    return '{\n  "search": {\n    "synonyms": [\n' + rows + "\n    ]\n  }\n}"


def unknown_lines(words: list[UnknownWord]) -> list[str]:
    if not words:
        return ["every word readers used in unanswered questions is one the search matches"]
    lines = ["readers' words the docs never use (asked; closest docs words):"]
    for word in words:
        closest = ", ".join(word.closest) or "none close in spelling: pair it by hand"
        lines.append(f"  {word.asked:5}  {word.word}: {closest}")
    return lines
