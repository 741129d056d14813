"""The extractive answer: verbatim quotes of the retrieved passages, each attributed.

No model and no network: the sentences of each passage that share most words
with the question (whole sentences only, within bounds), its code when on
topic, each followed by its source number, then a note that these are quotes.
The backend's `ExtractiveGenerator` (server/generators.py) and the page's
static answers stream the same text (`split_deltas`).
"""

import functools
import itertools
import re
from collections.abc import Sequence
from typing import Final

from .chunk import Passage
from .query_terms import within_one_edit
from .sentences import sentences
from .text_terms import STOPWORDS, WORD, light_stem, terms_of

EXTRACTIVE_SHORT_SENTENCE_CHARS: Final = 140
"""A quote of one sentence shorter than this also quotes its neighbour."""
EXTRACTIVE_QUOTE_MAX_CHARS: Final = 600
"""Most characters quoted from one source (whole sentences only)."""
EXTRACTIVE_CODE_MAX_CHARS: Final = 800
"""A source's code (all its blocks) is quoted whole up to this size, else not at all."""
SENTENCE_CACHE_MAX: Final = 1_024
"""Passages whose sentence split is remembered (a docs site has a few hundred sections)."""
EXTRACTIVE_TYPO_MIN_CHARS: Final = 5
"""Question words this long match a passage word one letter away ("limt" ~ "limit")."""
EXTRACTIVE_MAX_SENTENCES: Final = 2
"""Most sentences quoted from one source (a short best sentence brings its neighbour)."""
DELTA_TARGET_CHARS: Final = 24
"""The extractive generator streams in word groups of about this many chars."""


class NoQuotableText(ValueError):
    """No passage had a sentence or code block to quote."""


def _pick(scores: Sequence[int], lengths: Sequence[int]) -> list[int]:
    """Indexes of the sentences to quote, in document order (see `quote_sentences`)."""
    ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    picked: list[int] = []
    size = 0
    for index in ranked:
        if len(picked) >= EXTRACTIVE_MAX_SENTENCES or (picked and scores[index] == 0):
            break
        if size + lengths[index] > EXTRACTIVE_QUOTE_MAX_CHARS:
            continue
        picked.append(index)
        size += lengths[index]
    if len(picked) == 1 and lengths[picked[0]] < EXTRACTIVE_SHORT_SENTENCE_CHARS:
        # A short sentence alone reads as a fragment: add its neighbour for context.
        best = picked[0]
        for neighbour in (best + 1, best - 1):
            if 0 <= neighbour < len(scores) and size + lengths[neighbour] <= (
                EXTRACTIVE_QUOTE_MAX_CHARS
            ):
                picked.append(neighbour)
                break
    return sorted(picked)


def quote_terms(text: str) -> set[str]:
    """`terms_of` plus each pair of adjacent words joined ("sub-folder" -> "subfolder"),
    so a question and the docs that write a compound differently still meet."""
    words = [w for w in WORD.findall(text.lower()) if len(w) > 1]
    terms = {light_stem(w) for w in words if w not in STOPWORDS}
    terms.update(light_stem(left + right) for left, right in itertools.pairwise(words))
    return terms


@functools.lru_cache(maxsize=SENTENCE_CACHE_MAX)
def sentence_terms(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """A passage's sentences with their `quote_terms`, remembered per passage text:
    the docs do not change while the backend runs, and the same sections answer
    many questions."""
    return tuple((sentence, frozenset(quote_terms(sentence))) for sentence in sentences(text))


@functools.lru_cache(maxsize=SENTENCE_CACHE_MAX)
def _passage_terms(text: str) -> frozenset[str]:
    return frozenset(terms_of(text))


def _near_terms(question_terms: set[str], passages_terms: set[str]) -> set[str]:
    """Question terms with their one-letter typos resolved against the passages' terms.

    Only terms no passage contains are typo candidates, and only passage terms
    of about the same length and the same first two letters are compared, so
    this costs little even for long passages.
    """
    unknown = [t for t in question_terms - passages_terms if len(t) >= EXTRACTIVE_TYPO_MIN_CHARS]
    if not unknown:
        return question_terms
    by_prefix: dict[str, list[str]] = {}
    for candidate in passages_terms:
        by_prefix.setdefault(candidate[:2], []).append(candidate)
    resolved = set(question_terms)
    for term in unknown:
        resolved.update(
            candidate
            for candidate in by_prefix.get(term[:2], ())
            if within_one_edit(term, candidate)
        )
    return resolved


def _code_quote(passage: Passage, question_terms: set[str], room: int) -> str | None:
    """The passage's code as one fenced block, when it is on topic and fits whole."""
    code = passage.code.strip("\n")
    if not code or "```" in code or len(code) > room:
        return None
    if passage.text.strip() and not terms_of(code) & question_terms:
        return None
    return f"```\n{code}\n```"


def quote_sentences(passage: Passage, question_terms: set[str]) -> list[list[str]]:
    """The sentences of a passage that answer, as runs of adjacent sentences.

    At most EXTRACTIVE_MAX_SENTENCES whole sentences and EXTRACTIVE_QUOTE_MAX_CHARS
    in all (a sentence that does not fit is skipped, never cut): the ones sharing
    most words with the question, or the passage's first sentence when none
    does. The passage's code is added as one last run when it is on topic and
    at most EXTRACTIVE_CODE_MAX_CHARS (a code block is never cut either).
    """
    split = sentence_terms(passage.text)
    found = [sentence for sentence, _ in split]
    scores = [len(terms & question_terms) for _, terms in split]
    picked = _pick(scores, [len(sentence) for sentence in found]) if found else []
    runs: list[list[str]] = []
    for index in picked:
        if runs and index - 1 in picked:
            runs[-1].append(found[index])
        else:
            runs.append([found[index]])
    code = _code_quote(passage, question_terms, EXTRACTIVE_CODE_MAX_CHARS)
    if code is not None:
        runs.append([code])
    return runs


_MARKDOWN_PUNCTUATION: Final = re.compile(r"[\\`*_\[\]<>~&!|#]")
"""Characters Markdown may read as syntax anywhere in a line (links, images, autolinks,
code spans, emphasis, entities, tables, headings): each is backslash-escaped in a quote."""
_LINE_START_MARKER: Final = re.compile(r"^(?:[-+=]|(\d{1,9})[.)])")
"""A list item, setext underline or ordered item a quote's first sentence could start."""


def markdown_text(text: str) -> str:
    """Text that Markdown renders as itself: a docs page's prose that shows Markdown syntax
    (`[ok](https://evil.example/phish)`) stays text in the answer, never a live link."""
    escaped = _MARKDOWN_PUNCTUATION.sub(lambda match: "\\" + match.group(), text)
    marker = _LINE_START_MARKER.match(escaped)
    if marker is None:
        return escaped
    if marker.group(1) is None:
        return "\\" + escaped
    end = marker.end() - 1
    return escaped[:end] + "\\" + escaped[end:]


def _quote_block(runs: Sequence[Sequence[str]], number: int) -> str:
    """A Markdown blockquote: each sentence and code block followed by its [n];
    `…` marks sentences left out between two quoted ones."""
    marker = f"[{number}]"
    prose = [run for run in runs if not run[0].startswith("```")]
    code = [run[0] for run in runs if run[0].startswith("```")]
    parts = []
    if prose:
        parts.append(
            " … ".join(" ".join(f"{markdown_text(s)} {marker}" for s in run) for run in prose)
        )
    parts.extend(f"{block}\n{marker}" for block in code)
    body = "\n\n".join(parts)
    return "\n".join(f"> {line}" if line else ">" for line in body.split("\n"))


def compose_extractive_answer(question: str, passages: Sequence[Passage]) -> str:
    """The whole extractive answer as Markdown: attributed verbatim quotes, then a note.

    Raises `NoQuotableText` when no passage has a sentence or code block to quote."""
    question_terms = _near_terms(
        quote_terms(question),
        set().union(*(_passage_terms(p.text) for p in passages)),
    )
    blocks: list[str] = []
    for number, passage in enumerate(passages, start=1):
        runs = quote_sentences(passage, question_terms)
        if runs:
            title = markdown_text(passage.title)
            blocks.append(f"{_quote_block(runs, number)}\n\n— *{title}* [{number}]")
    if not blocks:
        raise NoQuotableText("No passage had quotable text.")
    intro = "Here is what the documentation says:"
    outro = "_These are direct quotes from the sources listed below; no language model was used._"
    return "\n\n".join([intro, *blocks, outro])


def split_deltas(text: str, target: int = DELTA_TARGET_CHARS) -> list[str]:
    """Cut text into word-aligned pieces of about `target` chars (joined, they equal text)."""
    pieces: list[str] = []
    current = ""
    for token in re.findall(r"\S+\s*|\s+", text):
        current += token
        if len(current) >= target:
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return pieces
