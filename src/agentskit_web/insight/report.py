"""`agentskit-web report LOG`: what readers asked, from a question log (server/question_log.py).

`summarize` turns the log's rows into the figures an owner acts on; `summary_lines` prints
them in a terminal, `report_html.render_report` draws them as one page. The unanswered and
near-miss questions are grouped by the words they share: the word that covers the most of
them, weighed by how rare it is across *every* logged question (a product name that every
reader types says nothing about a gap), names the first group (stopwords aside,
`installing` and `install` one word); those questions leave the pool, and so on while a
word is shared by two or more. What is left is listed alone. Groups are then shown largest
first, counted in askings: the gap most readers hit is at the top.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from ..answering.outcome import VERDICTS
from ..answering.text_terms import STOPWORDS, light_stem
from ..server.question_log import LoggedQuestion

TOP_PAGES: Final = 10
GROUP_EXAMPLES: Final = 3
MAX_GROUPS: Final = 20
MAX_DOWN_SHOWN: Final = 50
_WORD: Final = re.compile(r"[^\W\d_][\w'-]*", re.UNICODE)
STATIC_VERDICT: Final = "in the page"
"""What a row without a verdict is: feedback on an answer the page made (no backend search)."""


@dataclass(frozen=True, slots=True)
class QuestionGroup:
    """Unanswered questions that share a word: the word as readers wrote it, and them."""

    word: str
    questions: tuple[str, ...]
    """Every asking, in order (the same question asked twice is here twice)."""

    @property
    def count(self) -> int:
        return len(self.questions)

    @property
    def examples(self) -> list[str]:
        """The distinct questions, most asked first."""
        counts = Counter(self.questions)
        return sorted(counts, key=lambda q: -counts[q])


@dataclass(slots=True)
class Summary:
    """Everything the report shows, computed once."""

    rows: list[LoggedQuestion]
    days: list[dt.date] = field(default_factory=list)
    per_day: dict[dt.date, Counter[str]] = field(default_factory=dict)
    verdicts: Counter[str] = field(default_factory=Counter)
    pages: list[tuple[str, int]] = field(default_factory=list)
    groups: list[QuestionGroup] = field(default_factory=list)
    down: list[LoggedQuestion] = field(default_factory=list)
    up_votes: int = 0

    @property
    def asked(self) -> int:
        """Questions the backend searched (feedback-only rows are not questions it saw)."""
        return sum(self.verdicts[v] for v in VERDICTS)

    def share(self, verdict: str) -> float:
        return self.verdicts[verdict] / self.asked if self.asked else 0.0

    def answered_share(self, day: dt.date) -> float | None:
        counts = self.per_day.get(day, Counter())
        total = sum(counts[v] for v in VERDICTS)
        return counts["answered"] / total if total else None

    @property
    def unanswered_askings(self) -> list[str]:
        """Declined and near-miss questions, every asking (a word's count is how many)."""
        return [r.question for r in self.rows if r.verdict in ("declined", "near miss")]

    @property
    def unanswered(self) -> list[str]:
        """Declined and near-miss questions, each once, in the order first asked."""
        seen: dict[str, None] = {}
        for row in self.rows:
            if row.verdict in ("declined", "near miss"):
                seen.setdefault(row.question.strip(), None)
        return list(seen)


def _page_of(section: str) -> str:
    return section.partition("#")[0] or section


def summarize(rows: Sequence[LoggedQuestion]) -> Summary:
    summary = Summary(rows=list(rows))
    pages: Counter[str] = Counter()
    for row in rows:
        verdict = row.verdict or STATIC_VERDICT
        summary.per_day.setdefault(row.day, Counter())[verdict] += 1
        summary.verdicts[verdict] += 1
        if row.verdict == "answered":
            pages.update({_page_of(section) for section in row.cited})
        if row.feedback == "down":
            summary.down.append(row)
        elif row.feedback == "up":
            summary.up_votes += 1
    if rows:
        first, last = min(r.day for r in rows), max(r.day for r in rows)
        summary.days = [first + dt.timedelta(days=n) for n in range((last - first).days + 1)]
    summary.pages = pages.most_common(TOP_PAGES)
    summary.groups = group_by_shared_words(
        [r.question for r in rows if r.verdict in ("declined", "near miss")],
        [r.question for r in rows],
    )
    return summary


def _terms(question: str) -> dict[str, str]:
    """A question's words by stem (the first spelling kept), stopwords and 1-2 letters out."""
    terms: dict[str, str] = {}
    for word in _WORD.findall(question.lower()):
        if len(word) > 2 and word not in STOPWORDS:
            terms.setdefault(light_stem(word), word)
    return terms


def group_by_shared_words(
    questions: Iterable[str], background: Sequence[str] = ()
) -> list[QuestionGroup]:
    """Greedy grouping (see the module doc); every question lands in exactly one group.

    `background` is every question logged (the rarity of a word is measured there)."""
    pool: dict[int, tuple[str, dict[str, str]]] = {
        i: (q, _terms(q)) for i, q in enumerate(questions)
    }
    seen_in: Counter[str] = Counter()
    for text in background:
        seen_in.update(_terms(text).keys())
    total = max(len(background), 1)

    def weight(stem: str, members: list[int]) -> float:
        return len(members) * math.log(1 + total / max(seen_in[stem], len(members)))

    groups: list[QuestionGroup] = []
    while pool and len(groups) < MAX_GROUPS:
        holders: defaultdict[str, list[int]] = defaultdict(list)
        for index, (_question, terms) in pool.items():
            for stem in terms:
                holders[stem].append(index)
        if not holders:
            break
        shared = {stem: members for stem, members in holders.items() if len(members) >= 2}
        if not shared:
            break
        # Ties by the stem, so the report is the same every run.
        stem, members = min(shared.items(), key=lambda item: (-weight(*item), item[0]))
        spellings = Counter(pool[i][1][stem] for i in members)
        word = min(spellings, key=lambda w: (-spellings[w], w))
        groups.append(QuestionGroup(word, tuple(pool[i][0] for i in members)))
        for index in members:
            del pool[index]
    groups.sort(key=lambda group: -group.count)  # stable: equal counts keep their order
    groups.extend(QuestionGroup("", (question,)) for question, _ in pool.values())
    return groups


def summary_lines(summary: Summary) -> list[str]:
    """The terminal summary."""
    if not summary.rows:
        return ["no question in the log (for this period and corpus)"]
    first, last = summary.days[0], summary.days[-1]
    lines = [f"{summary.asked} questions, {first} to {last}"]
    parts = [f"{v} {summary.verdicts[v]} ({summary.share(v):.0%})" for v in VERDICTS]
    lines.append(", ".join(parts))
    lines.append(f"feedback: {summary.up_votes} up, {len(summary.down)} down")
    if summary.pages:
        lines.append("pages most cited:")
        lines.extend(f"  {count:5}  {page}" for page, count in summary.pages)
    grouped = [g for g in summary.groups if g.word]
    if summary.groups:
        lines.append("unanswered and near-miss questions, by shared word:")
    for group in grouped:
        examples = "; ".join(repr(q) for q in group.examples[:GROUP_EXAMPLES])
        lines.append(f"  {group.count:5}  {group.word}: {examples}")
    alone = [g.questions[0] for g in summary.groups if not g.word]
    if alone:
        lines.append(f"  {len(alone):5}  (no shared word): " + "; ".join(map(repr, alone[:3])))
    if summary.down:
        lines.append("thumbs down:")
    for row in summary.down[:MAX_DOWN_SHOWN]:
        comment = f" ({row.comment!r})" if row.comment else ""
        cited = ", ".join(row.cited[:3]) or "no source"
        lines.append(f"  {row.day} {row.question!r} -> {cited}{comment}")
    return lines
