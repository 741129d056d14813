"""A question of two parts ("how do I X, and what happens when Y?") searched part by part.

The whole question is searched, and each part too, so the answer to the
second part is not crowded out by the first; the lists are merged with each
passage at its best score relative to its own list's best (`merged`).
"""

import dataclasses
import re
from collections.abc import Sequence
from typing import Final

from .chunk import Passage

_CLAUSE_BREAK: Final = re.compile(
    r"\s*(?:[;?]|,?\s+and\s+then|,\s*and|\s+and(?=\s+(?:what|how|why|which|when|where|who|"
    r"whether|does|do|is|are|can|must|should)\b))\s+",
    re.IGNORECASE,
)
"""Where a question of two parts divides: "..., and ...", "... and then ...", "... and what
(how, why...) ...", or a second sentence."""

PART_STRENGTH: Final = 0.5
"""How much a part's own best match counts against the whole question's: a part's
passages rank by their score relative to that part's best, times (part best / whole
best) ** PART_STRENGTH, so a part made of common words ("how does the widget read
them") does not push its weak best match up as far as a specific part does.
Chosen on the tuning split: 0.25 to 0.75 score the same; 0 and 1 worse."""


def split_question(question: str) -> list[str]:
    """The parts of a question of two or more parts; [question] when it has one.

    White space is collapsed first, so each `\\s` of the pattern meets one
    character and the split stays linear in the question's length."""
    parts = [part.strip() for part in _CLAUSE_BREAK.split(" ".join(question.split()))]
    parts = [part for part in parts if part]
    return parts if len(parts) > 1 else [question]


def merged(lists: Sequence[Sequence[Passage]]) -> list[Passage]:
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
    ranked_all = sorted(best.values(), key=lambda pair: -pair[0])
    return [dataclasses.replace(p, score=relative * scale) for relative, p in ranked_all]
