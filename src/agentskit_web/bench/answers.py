"""`make bench` section `answers`: how well the reference backend finds the section that answers.

The eval set is `fixtures/answers_eval.json`: questions a reader would ask
about the demo docs, each with the sections that answer it (`needs: any`),
the sections an answer must combine (`needs: all`) or none at all (`needs:
none`: the docs do not answer it and the backend must decline, i.e. retrieve
nothing, which the Ask app turns into `422 ASK_NO_GROUNDED_SOURCES`).

For each retrieval under test, over the same chunks of the same corpus:
- recall@k: for an `any` question, 1 when one expected section is among the
  first k distinct sections retrieved; for an `all` question, the share of its
  sections found there (out of at most k, so recall@1 is 1 when the first
  section is one of them);
- MRR: the mean of 1/rank of the first expected section (0 when none is
  among the first `RANK_DEPTH`, or when the question was declined);
- declined: the share of unanswerable questions for which nothing was
  retrieved, next to the share of answerable ones wrongly declined.

The shipped retrieval is `SearchIndex.search` (answering/, pure Python); its
peer is plain BM25 over the same index (`SearchIndex.search_plain_bm25`):
every word OR-ed, equal field weights, the index's own Porter stemming but no
stopwords, prefixes, query expansion, floor or threshold. Beside them, the
same two over the FTS5 search that shipped before (`fts5_baseline`, "main"),
measured in the same run. Every figure is printed for the
tuning split, the held-out split (never looked at while tuning) and both.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..answering.chunk import Chunk, Passage
from ..answering.ranking import SearchIndex
from ..server.retrieval import index_folder
from .fts5_baseline import DocsIndex

PROJECT_ROOT: Final = Path(__file__).resolve().parents[3]
EVAL_FILE: Final = PROJECT_ROOT / "fixtures" / "answers_eval.json"
SITE_FILE: Final = Path("docs") / "site.json"
"""The demo's site config, whose synonyms the demo backend searches with."""
RANK_DEPTH: Final = 8
"""Sections retrieved per question: the most an answer may cite (SITE_MAX_SOURCES_RANGE)."""
RECALL_CUTOFFS: Final = (1, 3)
SPLITS: Final = ("tuning", "heldout")

Split = Literal["tuning", "heldout"]
Needs = Literal["any", "all", "none"]
Ranker = Callable[[str, int], Sequence[Passage]]


class EvalQuestion(BaseModel):
    """One question of the eval set and the sections that answer it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    split: Split
    kind: str
    question: Annotated[str, Field(min_length=1)]
    needs: Needs
    expected: list[str]


class EvalCorpus(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    docs: str
    exclude: list[str] = []


class EvalSet(BaseModel):
    """The whole fixture file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str
    corpus: EvalCorpus
    questions: list[EvalQuestion]


def load_eval_set(path: Path = EVAL_FILE) -> EvalSet:
    """The eval set, validated (a malformed fixture fails loudly, never silently scores 0)."""
    return EvalSet.model_validate_json(path.read_text(encoding="utf-8"))


def section_key(passage: Passage) -> str:
    """`/docs/page.html#anchor` (no `#` for a page's top section), as the fixture writes it."""
    return passage.path + (f"#{passage.anchor}" if passage.anchor else "")


def ranked_sections(passages: Sequence[Passage]) -> list[str]:
    """Distinct sections in rank order (a long section's chunks count once)."""
    seen: dict[str, None] = {}
    for passage in passages:
        seen.setdefault(section_key(passage), None)
    return list(seen)


# ------------------------------------------------------------------ scoring


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one ranker did with one question."""

    question: EvalQuestion
    sections: list[str]
    seconds: float

    @property
    def declined(self) -> bool:
        return not self.sections

    def recall_at(self, k: int) -> float:
        expected = set(self.question.expected)
        found = len(expected & set(self.sections[:k]))
        if self.question.needs == "all":
            return found / min(len(expected), k)
        return 1.0 if found else 0.0

    def reciprocal_rank(self) -> float:
        for rank, section in enumerate(self.sections, start=1):
            if section in self.question.expected:
                return 1.0 / rank
        return 0.0


@dataclass(slots=True)
class Scores:
    """Aggregates over one split for one ranker."""

    answerable: int = 0
    unanswerable: int = 0
    recall: dict[int, float] = field(default_factory=dict)
    mrr: float = 0.0
    declined: float = 0.0
    wrongly_declined: float = 0.0
    mean_ms: float = 0.0


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def score(outcomes: Sequence[Outcome]) -> Scores:
    """recall@k, MRR, the declined shares and the mean time per question."""
    answerable = [o for o in outcomes if o.question.needs != "none"]
    unanswerable = [o for o in outcomes if o.question.needs == "none"]
    return Scores(
        answerable=len(answerable),
        unanswerable=len(unanswerable),
        recall={k: _mean([o.recall_at(k) for o in answerable]) for k in RECALL_CUTOFFS},
        mrr=_mean([o.reciprocal_rank() for o in answerable]),
        declined=_mean([1.0 if o.declined else 0.0 for o in unanswerable]),
        wrongly_declined=_mean([1.0 if o.declined else 0.0 for o in answerable]),
        mean_ms=_mean([o.seconds * 1000 for o in outcomes]),
    )


def run_ranker(ranker: Ranker, questions: Sequence[EvalQuestion]) -> list[Outcome]:
    """Ask every question once; every question counts (none is dropped or retried)."""
    outcomes = []
    for question in questions:
        started = time.perf_counter()
        passages = ranker(question.question, RANK_DEPTH)
        elapsed = time.perf_counter() - started
        outcomes.append(Outcome(question, ranked_sections(passages), elapsed))
    return outcomes


# ------------------------------------------------------------------ the run


@dataclass(frozen=True, slots=True)
class EvalResult:
    """Per ranker, per split (`tuning`, `heldout`, `all`), the scores; and the raw outcomes."""

    scores: dict[str, dict[str, Scores]]
    outcomes: dict[str, list[Outcome]]
    chunks: int


def site_synonyms(root: Path = PROJECT_ROOT) -> tuple[tuple[str, ...], ...]:
    """The demo site's synonyms (its site config), which the eval's index uses."""
    from ..server.ask_app import load_site_config

    return load_site_config(root / SITE_FILE).synonyms


def build_index(eval_set: EvalSet, root: Path = PROJECT_ROOT) -> SearchIndex:
    """The index the demo serves: the eval corpus, with the demo site's retrieval settings."""
    return index_folder(
        root / eval_set.corpus.docs, exclude=eval_set.corpus.exclude, synonyms=site_synonyms(root)
    )


def build_baseline_index(index: SearchIndex, synonyms: Sequence[Sequence[str]] = ()) -> DocsIndex:
    """The same chunks in the FTS5 search that shipped before answering/ (the baseline)."""
    baseline = DocsIndex(synonyms=synonyms)
    baseline.add(
        Chunk(p.path, p.anchor, p.page_title, p.heading, p.text, p.code)
        for p in index.all_passages()
    )
    return baseline


def run_eval(eval_set: EvalSet | None = None) -> EvalResult:
    """Score the shipped retrieval and the plain BM25 peer over the same index."""
    eval_set = eval_set or load_eval_set()
    index = build_index(eval_set)
    baseline = build_baseline_index(index, site_synonyms())
    try:
        rankers: dict[str, Ranker] = {
            "shipped": index.search,
            "plain BM25": index.search_plain_bm25,
            "main (FTS5)": baseline.search,
            "plain FTS5 BM25": baseline.search_plain_bm25,
        }
        outcomes = {name: run_ranker(r, eval_set.questions) for name, r in rankers.items()}
    finally:
        baseline.close()
    scores = {
        name: {
            **{split: score([o for o in found if o.question.split == split]) for split in SPLITS},
            "all": score(found),
        }
        for name, found in outcomes.items()
    }
    return EvalResult(scores, outcomes, index.size)


def _figure(value: float) -> str:
    return f"{value:.3f}"


def format_eval(result: EvalResult) -> str:
    """One row per ranker and split, with the issue's goals in the header."""
    header = (
        f"{'answers (retrieval eval)':<28}{'split':<9}{'n':>4}{'R@1':>7}{'R@3':>7}{'MRR':>7}"
        f"{'u':>4}{'declined':>10}{'wrong-decl':>11}{'ms/q':>7}"
    )
    rows = [header, "-" * len(header)]
    for name, by_split in result.scores.items():
        for split, s in by_split.items():
            rows.append(
                f"{name:<28}{split:<9}{s.answerable:>4}{_figure(s.recall[1]):>7}"
                f"{_figure(s.recall[3]):>7}{_figure(s.mrr):>7}{s.unanswerable:>4}"
                f"{_figure(s.declined):>10}{_figure(s.wrongly_declined):>11}{s.mean_ms:>7.2f}"
            )
    rows.append(
        f"{result.chunks} chunks; n answerable, u unanswerable questions; goals (shipped): "
        "R@1 >= 0.75, R@3 >= 0.9, declined >= 0.9"
    )
    return "\n".join(rows)


def format_misses(result: EvalResult, ranker: str, split: str) -> str:
    """The questions of one split the ranker got wrong at 3 (for tuning: never the held-out)."""
    lines = []
    for outcome in result.outcomes[ranker]:
        question = outcome.question
        if question.split != split:
            continue
        wrong = not outcome.declined if question.needs == "none" else outcome.recall_at(3) < 1.0
        if wrong:
            lines.append(
                f"{question.id:<16} {question.question}\n    expected {question.expected}\n"
                f"    got      {outcome.sections[:3]}"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m agentskit_web.bench answers [--misses SPLIT] [--json PATH]`."""
    parser = argparse.ArgumentParser(prog="agentskit-web bench answers")
    parser.add_argument("--misses", choices=SPLITS, help="also list the shipped misses of a split")
    parser.add_argument("--json", type=Path, default=None, help="also write the scores here")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    result = run_eval()
    print(format_eval(result))
    if args.misses:
        print(format_misses(result, "shipped", args.misses))
    if args.json:
        payload = {
            name: {split: vars_of(s) for split, s in by_split.items()}
            for name, by_split in result.scores.items()
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


def vars_of(scores: Scores) -> dict[str, object]:
    """A JSON-ready copy of one split's scores."""
    return {
        "answerable": scores.answerable,
        "unanswerable": scores.unanswerable,
        "recallAt1": scores.recall[1],
        "recallAt3": scores.recall[3],
        "mrr": scores.mrr,
        "declined": scores.declined,
        "wronglyDeclined": scores.wrongly_declined,
        "meanMs": scores.mean_ms,
    }


if __name__ == "__main__":
    raise SystemExit(main())
