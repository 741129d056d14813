"""A generated docs site of any size, for the scale figures of `make bench` (section static).

Pages are made of words drawn with a Zipf law from a vocabulary that mixes
real docs words (this project's docs, so frequent words look like docs' ones)
with made-up technical terms (so the vocabulary keeps growing with the site,
as a real one does). Every page has a title, sections with headings, prose
and sometimes code. The same seed gives the same site; the questions name a
section's heading words (answerable) or words no page uses (to decline).
"""

import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from ..answering.chunk import Chunk

SECTIONS_PER_PAGE: Final = (3, 9)
WORDS_PER_SECTION: Final = (40, 160)
MADE_UP_TERMS_PER_PAGE: Final = 12
"""New terms the vocabulary grows by with each page (a 2,000-page site: about 24,000)."""
CODE_SHARE: Final = 0.3
ZIPF_EXPONENT: Final = 1.05
_SYLLABLES: Final = ("ka", "ro", "ti", "sen", "lo", "mer", "va", "dex", "qu", "zor", "pi", "lan")


def _made_up(generator: random.Random) -> str:
    return "".join(generator.choice(_SYLLABLES) for _ in range(generator.randint(2, 4)))


def generated_chunks(pages: int, seed_words: Sequence[str], seed: int = 21) -> list[Chunk]:
    """`pages` pages of sections as chunks (paths `/gen/page-N/`, anchors per section)."""
    generator = random.Random(seed)
    vocabulary = list(dict.fromkeys(seed_words))
    chunks: list[Chunk] = []
    for page in range(pages):
        vocabulary.extend(_made_up(generator) for _ in range(MADE_UP_TERMS_PER_PAGE))
        weights = [1.0 / (rank + 1) ** ZIPF_EXPONENT for rank in range(len(vocabulary))]

        def words(count: int, weights: list[float] = weights) -> list[str]:
            return generator.choices(vocabulary, weights=weights, k=count)

        title = " ".join(words(3)).capitalize()
        path = f"/gen/page-{page}/"
        chunks.append(Chunk(path, None, title, title, " ".join(words(30)) + "."))
        for number in range(generator.randint(*SECTIONS_PER_PAGE)):
            heading = " ".join(words(generator.randint(2, 4))).capitalize()
            body = ". ".join(
                " ".join(words(generator.randint(8, 20))).capitalize()
                for _ in range(generator.randint(*WORDS_PER_SECTION) // 14)
            )
            code = ""
            if generator.random() < CODE_SHARE:
                code = "\n".join(f"{a}_{b} = {c}({d!r})" for a, b, c, d in [words(4)])
            chunks.append(Chunk(path, f"s{number}", title, heading, body + ".", code))
    return chunks


def generated_questions(chunks: Sequence[Chunk], count: int, seed: int = 26) -> list[str]:
    """Questions naming a section's heading (nine in ten) or words no page uses."""
    generator = random.Random(seed)
    sections = [chunk for chunk in chunks if chunk.anchor]
    questions: list[str] = []
    for number in range(count):
        if number % 10 == 9:
            questions.append(f"how do I {_made_up(generator)}x {_made_up(generator)}q?")
        else:
            heading = generator.choice(sections).heading.lower()
            questions.append(f"how do I {heading}?")
    return questions


def docs_words(folder: Path) -> list[str]:
    """The words of a docs folder's Markdown, most used first (the generator's seed words)."""
    counts: dict[str, int] = {}
    for file in sorted(folder.rglob("*.md")):
        for word in re.findall(r"[a-z]{3,}", file.read_text(encoding="utf-8").lower()):
            counts[word] = counts.get(word, 0) + 1
    return sorted(counts, key=lambda word: -counts[word])
