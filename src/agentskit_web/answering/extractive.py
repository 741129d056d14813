"""The extractive answer: a short lead quoted from the best passage, then the rest, listed.

No model and no network: the answer opens with the sentences of the first
quotable passage that share words with the question (whole sentences, at most
three and about 400 characters) and, for a how-to question, its code; the other
passages follow under "More from the docs", one line each (title and first
sentence) with its quote nested under it; one source number per quote, then a
note that these are quotes (`extractive_answer`).
The backend's `ExtractiveGenerator` (server/generators.py) and the page's
static answers stream the same text (`split_deltas`).
"""

import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from .answer_shape import MORE_FROM_THE_DOCS, QUOTES_NOTE
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
LEAD_MAX_SENTENCES: Final = 3
"""Most sentences the answer opens with (issue 32: the sentences that answer, first)."""
LEAD_MAX_CHARS: Final = 400
"""Most characters of the sentences the answer opens with (whole sentences only)."""
PREVIEW_MAX_CHARS: Final = 160
"""A "More from the docs" line shows at most this much of its quote's first sentence."""
BACK_REFERENCES: Final = frozenset(
    {"this", "these", "that", "those", "it", "its", "they", "their", "such"}
)
"""A lead sentence opening with one of these words points back at the sentence before it
("This sets up everything it needs"): that sentence is quoted too, within the lead's
bounds, so the answer does not open on a reference to something the reader never saw."""
NOT_HOW_WORDS: Final = frozenset({"what", "why", "which", "who", "whom", "whose", "when", "where"})
"""A question opening with one of these asks for a fact, not a task: no code block."""
DELTA_TARGET_CHARS: Final = 24
"""The extractive generator streams in word groups of about this many chars."""


class NoQuotableText(ValueError):
    """No passage had a sentence or code block to quote."""


def _pick(
    scores: Sequence[int],
    lengths: Sequence[int],
    most: int = EXTRACTIVE_MAX_SENTENCES,
    room: int = EXTRACTIVE_QUOTE_MAX_CHARS,
) -> list[int]:
    """Indexes of the sentences to quote, in document order: the `most` sharing most
    words with the question within `room` characters (see `quote_sentences`)."""
    ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    picked: list[int] = []
    size = 0
    for index in ranked:
        if len(picked) >= most or (picked and scores[index] == 0):
            break
        if size + lengths[index] > room:
            continue
        picked.append(index)
        size += lengths[index]
    if len(picked) == 1 and lengths[picked[0]] < EXTRACTIVE_SHORT_SENTENCE_CHARS:
        # A short sentence alone reads as a fragment: add its neighbour for context.
        best = picked[0]
        for neighbour in (best + 1, best - 1):
            if 0 <= neighbour < len(scores) and size + lengths[neighbour] <= room:
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
    runs = _runs(found, picked)
    code = _code_quote(passage, question_terms, EXTRACTIVE_CODE_MAX_CHARS)
    if code is not None:
        runs.append([code])
    return runs


_MARKDOWN_PUNCTUATION: Final = re.compile(r"[\\`*_\[\]<>~&!|#]")
"""Characters Markdown may read as syntax anywhere in a line (links, images, autolinks,
code spans, emphasis, entities, tables, headings): each is backslash-escaped in a quote."""
_LINE_START_MARKER: Final = re.compile(r"^(?:[-+=]|(\d{1,9})[.)])")
"""A list item, setext underline or ordered item a quote's first sentence could start."""


_CODE_SPAN: Final = re.compile(r"`[^`\n]+`")
"""A code span as the site reader writes a page's `<code>` (indexing/html_page.py): kept as
is, so it shows as code; Markdown reads no link, image or HTML inside one."""


def markdown_text(text: str) -> str:
    """Text that Markdown renders as itself: a docs page's prose that shows Markdown syntax
    (`[ok](https://evil.example/phish)`) stays text in the answer, never a live link; the
    index's own code spans stay code."""
    escaped = ""
    start = 0
    for span in _CODE_SPAN.finditer(text):
        escaped += _escaped(text[start : span.start()]) + span.group()
        start = span.end()
    escaped += _escaped(text[start:])
    marker = _LINE_START_MARKER.match(escaped)
    if marker is None:
        return escaped
    if marker.group(1) is None:
        return "\\" + escaped
    end = marker.end() - 1
    return escaped[:end] + "\\" + escaped[end:]


def _escaped(text: str) -> str:
    return _MARKDOWN_PUNCTUATION.sub(lambda match: "\\" + match.group(), text)


def _runs(found: Sequence[str], picked: Sequence[int]) -> list[list[str]]:
    """The picked sentences (indexes in document order) as runs of adjacent ones."""
    runs: list[list[str]] = []
    for index in picked:
        if runs and index - 1 in picked:
            runs[-1].append(found[index])
        else:
            runs.append([found[index]])
    return runs


def _quote_block(runs: Sequence[Sequence[str]], number: int | None) -> str:
    """A Markdown blockquote of a passage's quoted runs, with one [n] after the prose
    (`…` marks sentences left out between two runs) and the code block, if any, after
    it: one citation marker per quote (none when `number` is None: the line above the
    quote carries it)."""
    prose = [run for run in runs if not run[0].startswith("```")]
    code = [run[0] for run in runs if run[0].startswith("```")]
    marker = "" if number is None else f" [{number}]"
    parts = (
        [" … ".join(" ".join(markdown_text(s) for s in run) for run in prose) + marker]
        if prose
        else []
    )
    parts.extend(code)
    if not prose and marker:
        parts.append(marker.strip())
    body = "\n\n".join(parts)
    return "\n".join(f"> {line}" if line else ">" for line in body.split("\n"))


def asks_how(question: str) -> bool:
    """Whether a question asks how to do something (a task, where code helps), not what,
    why, which, who, when or where: its first word is none of NOT_HOW_WORDS. Readers ask
    tasks in many shapes ("how do I", "can I", "show a progress bar"), questions about
    facts in a few."""
    words = WORD.findall(question.lower())
    return bool(words) and words[0] not in NOT_HOW_WORDS


@dataclass(frozen=True, slots=True)
class _Lead:
    """The lead's quoted runs, and whether its first sentence opens the section pointing
    back (`points_back`): then what it points at is the heading, which the answer shows."""

    runs: list[list[str]]
    heading_is_antecedent: bool


def _lead_runs(passage: Passage, question_terms: set[str], how: bool) -> _Lead:
    """What the answer opens with: the passage's sentences that hold the question's terms
    (at most LEAD_MAX_SENTENCES and LEAD_MAX_CHARS, whole sentences, in document order;
    its first sentence when none does; a short one alone brings its neighbour, and one
    that points back, the sentence before it: `_with_antecedents`), then,
    for a how-to question, its code when on topic and at most EXTRACTIVE_CODE_MAX_CHARS.
    A sentence that introduces code (ends with ":") is left out when no code follows."""
    code = _code_quote(passage, question_terms, EXTRACTIVE_CODE_MAX_CHARS) if how else None
    split = sentence_terms(passage.text)
    if code is None:
        # "change the code to this:" with no code after it reads as cut off.
        split = tuple(item for item in split if not item[0].endswith(":"))
    found = [sentence for sentence, _ in split]
    scores = [len(terms & question_terms) for _, terms in split]
    lengths = [len(sentence) for sentence in found]
    picked = _pick(scores, lengths, LEAD_MAX_SENTENCES, LEAD_MAX_CHARS) if found else []
    chosen = _with_antecedents(picked, found, lengths)
    runs = _runs(found, chosen)
    if code is not None:
        runs.append([code])
    return _Lead(runs, bool(chosen) and chosen[0] == 0 and points_back(found[0]))


def points_back(sentence: str) -> bool:
    """Whether a sentence opens with one of BACK_REFERENCES."""
    first = WORD.search(sentence)
    return first is not None and first.group().lower() in BACK_REFERENCES


def _with_antecedents(
    picked: Sequence[int], found: Sequence[str], lengths: Sequence[int]
) -> list[int]:
    """`picked` plus, for each run that opens with a sentence pointing back
    (BACK_REFERENCES), the sentence before it, while the lead stays within
    LEAD_MAX_SENTENCES and LEAD_MAX_CHARS."""
    chosen = set(picked)
    size = sum(lengths[index] for index in chosen)
    for index in sorted(picked):
        before = index - 1
        if before < 0 or before in chosen or not points_back(found[index]):
            continue
        if len(chosen) < LEAD_MAX_SENTENCES and size + lengths[before] <= LEAD_MAX_CHARS:
            chosen.add(before)
            size += lengths[before]
    return sorted(chosen)


def _preview(runs: Sequence[Sequence[str]]) -> str:
    """One line for "More from the docs": the quote's first sentence, cut at a word
    boundary to PREVIEW_MAX_CHARS (marked `…`), or "Code example" for a code-only quote."""
    prose = [sentence for run in runs for sentence in run if not sentence.startswith("```")]
    if not prose:
        return "Code example."
    line = " ".join(prose[0].split())
    if len(line) > PREVIEW_MAX_CHARS:
        line = line[:PREVIEW_MAX_CHARS].rsplit(" ", 1)[0] + " …"
    return markdown_text(line)


def _adds_to_preview(runs: Sequence[Sequence[str]]) -> bool:
    """Whether the quote shows more than its "More from the docs" line: a second
    sentence, code, or a first sentence the line had to cut (else no quote is nested,
    so an opened line never just repeats itself)."""
    quoted = [sentence for run in runs for sentence in run]
    return (
        len(quoted) > 1
        or quoted[0].startswith("```")
        or len(" ".join(quoted[0].split())) > PREVIEW_MAX_CHARS
    )


@dataclass(frozen=True, slots=True)
class ExtractiveAnswer:
    """The composed answer and which passage it opens with (`lead`, an index into the
    passages it was given): the eval scores the lead, the reader reads the Markdown."""

    markdown: str
    lead: int


def extractive_answer(question: str, passages: Sequence[Passage]) -> ExtractiveAnswer:
    """The extractive answer as Markdown, short first (issue 32):

    - the lead: from the first passage with quotable text, the sentences that hold the
      question's terms (at most three, about 400 characters) and, for a how-to
      question, that passage's code block, as one quote with one [n] (after the
      passage's title, above the quote, when its first sentence opens the section
      pointing back at the heading);
    - then, under "More from the docs", one line per other passage with quotable text:
      its title, its [n] and the first sentence of what it would quote, with that
      quote nested under the line (no second [n]); the view shows the list collapsed
      and each line closed over its quote;
    - a last line that says these are quotes, no model.

    The sources themselves are listed once, by the Ask app's sources frame, in passage
    order, which the [n] numbers follow. Raises `NoQuotableText` when no passage has a
    sentence or code block to quote."""
    question_terms = _near_terms(
        quote_terms(question),
        set().union(*(_passage_terms(p.text) for p in passages)),
    )
    how = asks_how(question)
    lead: int | None = None
    blocks: list[str] = []
    more: list[str] = []
    for number, passage in enumerate(passages, start=1):
        if lead is None:
            opening = _lead_runs(passage, question_terms, how)
            if opening.runs:
                lead = number - 1
                if opening.heading_is_antecedent:
                    # "These are any OPTIONS request …" means the heading's subject: the
                    # heading goes above the quote and carries its [n].
                    blocks.append(f"*{markdown_text(passage.title)}* [{number}]")
                    blocks.append(_quote_block(opening.runs, None))
                else:
                    blocks.append(_quote_block(opening.runs, number))
            continue
        runs = quote_sentences(passage, question_terms)
        if runs:
            title = markdown_text(passage.title)
            # The line, then its whole quote nested under it (indented: the same list
            # item), which the view shows only when the reader opens that line.
            line = f"- *{title}* [{number}]: {_preview(runs)}"
            if _adds_to_preview(runs):
                line += "\n  " + _quote_block(runs, None).replace("\n", "\n  ")
            more.append(line)
    if lead is None:
        raise NoQuotableText("No passage had quotable text.")
    if more:
        # The label line and the list as one Markdown block (a list may interrupt a
        # paragraph), so the view sees them together and collapses them (answer_shape).
        blocks.append(f"**{MORE_FROM_THE_DOCS}**\n" + "\n".join(more))
    blocks.append(QUOTES_NOTE)
    return ExtractiveAnswer("\n\n".join(blocks), lead)


def compose_extractive_answer(question: str, passages: Sequence[Passage]) -> str:
    """The whole extractive answer as Markdown (`extractive_answer`)."""
    return extractive_answer(question, passages).markdown


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
