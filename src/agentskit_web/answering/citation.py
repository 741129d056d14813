"""The sources an answer cites, as the reader sees them: one list, one title per source.

Both ends that answer from the index, the backend's Ask app (server/ask_app.py) and the
page's static answers (chat/static_answers.py), send the same `cite` event for the same
passages; this module is the one place its sources are built, so the two cannot drift
(the static/backend agreement figure in `make bench` compares them).

A title is `Page › Section` (`Passage.title`). Two sources with the same title (two
"Usage" sections, a page's two "Storage" headings) would read as one source listed
twice, so each of them gets its quoted opening words: `Usage (“Install the package…”)`.
When even those agree, the source's number in the list tells them apart. The words are
quoted from the passage's first line that reads as a sentence: a section's text can open
with labels (MkDocs Material's tabs put every tab's label before the first tab's text, an
admonition its title), and "Summer Winter In summer…" names no part of the page a reader
would recognise.
"""

import re
from collections import Counter
from collections.abc import Sequence
from typing import Final

from ..protocol.limits import SOURCE_TITLE_MAX_CHARS
from .chunk import Passage

OPENING_MAX_WORDS: Final = 6
"""Most words of a source's text quoted after a title it shares with another source."""
OPENING_MAX_CHARS: Final = 48
"""Most characters of those words (the cut falls between words, then "…" is added)."""
ELLIPSIS: Final = "…"
SENTENCE_LINE_END: Final = re.compile(r"[.!?:][)\"'”’]*$")
"""How a line that reads as a sentence ends (a label, tab or admonition title, does not)."""


def opening_words(text: str) -> str:
    """The first words of `text` (at most OPENING_MAX_WORDS and OPENING_MAX_CHARS, whole
    words, "…" when cut); "" for text with no words."""
    words = text.split()
    kept: list[str] = []
    for word in words[:OPENING_MAX_WORDS]:
        if len(" ".join([*kept, word])) > OPENING_MAX_CHARS:
            break
        kept.append(word)
    if not kept and words:  # one very long word: cut inside it
        kept = [words[0][:OPENING_MAX_CHARS]]
    opening = " ".join(kept)
    return opening + ELLIPSIS if opening and opening != " ".join(words) else opening


def opening_line(text: str) -> str:
    """`text` from its first line that ends as a sentence does (SENTENCE_LINE_END), past
    the labels before it; all of `text` when no line does."""
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if SENTENCE_LINE_END.search(line.strip()):
            return "\n".join(lines[number:])
    return text


def _with_suffix(title: str, suffix: str) -> str:
    """`title` then `suffix`, the title cut so the whole fits the wire's bound."""
    room = SOURCE_TITLE_MAX_CHARS - len(suffix)
    return title[:room].rstrip() + suffix


def source_titles(passages: Sequence[Passage]) -> list[str]:
    """Each passage's title as the source list shows it, duplicates told apart (module
    docstring): a shared title gets the source's quoted opening words, and, where those
    are shared too (or there are none), its number in the list."""
    titles = [passage.title for passage in passages]
    shared = Counter(titles)
    quoted: list[str] = []
    for title, passage in zip(titles, passages, strict=True):
        opening = opening_words(opening_line(passage.text) or passage.code)
        if shared[title] > 1 and opening:
            title = _with_suffix(title, f" (“{_plain(opening)}”)")
        quoted.append(title)
    still = Counter(quoted)
    return [
        _with_suffix(title, f" ({number})") if still[title] > 1 else title
        for number, title in enumerate(quoted, start=1)
    ]


def _plain(text: str) -> str:
    """Quote marks inside the opening words become plain ones (the title adds its own)."""
    return re.sub(r"[“”]", '"', text)


def cited_sources(passages: Sequence[Passage]) -> list[dict[str, str]]:
    """The `cite` event's sources for `passages`, in order: `source-<n>` ids, titles
    (`source_titles`), paths and anchors where the passage has one."""
    sources: list[dict[str, str]] = []
    for number, (passage, title) in enumerate(
        zip(passages, source_titles(passages), strict=True), start=1
    ):
        source = {"id": f"source-{number}", "title": title, "path": passage.path}
        if passage.anchor:
            source["anchor"] = passage.anchor
        sources.append(source)
    return sources
