"""A passage's text as whole sentences, so a quote never stops mid-sentence or mid-code."""

import re
from typing import Final

_ABBREVIATIONS: Final = frozenset(["e.g.", "i.e.", "etc.", "vs.", "cf.", "approx."])
"""A full stop after these does not end a sentence ("e.g. `design/*`")."""

_SENTENCE_END: Final = re.compile(r"[.!?][)\"'”’]*\s+")


def sentences(text: str) -> list[str]:
    """Split passage text into whole sentences (used by the extractive answer).

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
