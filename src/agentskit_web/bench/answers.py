"""`make bench` section `answers`: how well the reference backend finds the section that answers.

Three eval sets, one per corpus, each in `fixtures/`:
- `answers_eval.json`: questions about this project's own docs (`docs/*.md`);
- `answers_eval_pydantic.json`, `answers_eval_starlette.json`: questions a
  user of that library asks, over its real documentation in the shared corpora
  folder (`--corpora`, default `../shared/corpora`), built with MkDocs +
  Material (bench/corpora.py) and scored on the URLs and anchors MkDocs
  publishes. Without that folder the section says so in one line and runs on
  our docs only.

Each question lists the sections that answer it (`needs: any`), the sections
an answer must combine (`needs: all`) or none at all (`needs: none`: the docs
do not answer it and the backend must decline, i.e. retrieve nothing, which
the Ask app turns into `422 ASK_NO_GROUNDED_SOURCES`). A section is the URL
path plus `#anchor`, compared exactly (a page's top section has no anchor).

For each retrieval under test, over the same SQLite index of the same corpus:
- recall@k: for an `any` question, 1 when one expected section is among the
  first k distinct sections retrieved; for an `all` question, the share of its
  sections found there (out of at most k, so recall@1 is 1 when the first
  section is one of them);
- MRR: the mean of 1/rank of the first expected section (0 when none is
  among the first `RANK_DEPTH`, or when the question was declined);
- first quote on target: the share of answerable questions whose extractive
  answer (`compose_extractive_answer` over the first `ANSWER_SOURCES`
  passages, as the Ask app passes them) quotes an expected section first;
- declined: the share of unanswerable questions for which nothing was
  retrieved, next to the share of answerable ones wrongly declined; a near
  miss (the closest sections shown, marked as not answering:
  `decline.CLOSEST_MIN_COVERAGE`) counts as declined in both, and in no
  recall, MRR or quote figure;
- closest: the share of answerable questions given a near miss whose first
  three closest sections hold an expected one (the reader was declined but
  shown where the answer is), and the share of unanswerable questions given a
  near miss rather than an outright decline;
- search time per question, p50 and p90 (the search alone, not the quote).

The shipped retrieval is `SearchIndex.find` (answering/, pure Python); its
peer is plain BM25 over the same index (`SearchIndex.search_plain_bm25`):
every word OR-ed, equal field weights, the index's own Porter stemming but no
stopwords, prefixes, query expansion, floor or threshold, in the same run.
(The FTS5 engine this replaced scored the same on every split; see
docs/design/answering.md.)
Every figure is printed for the tuning split, the held-out split (never looked
at while tuning) and both.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..answering.answer_shape import MORE_FROM_THE_DOCS
from ..answering.chunk import Found, Passage
from ..answering.extractive import (
    ExtractiveAnswer,
    NoQuotableText,
    extractive_answer,
    points_back,
)
from ..answering.ranking import SearchIndex
from ..server.retrieval import index_folder

PROJECT_ROOT: Final = Path(__file__).resolve().parents[3]
FIXTURES: Final = PROJECT_ROOT / "fixtures"
EVAL_FILE: Final = FIXTURES / "answers_eval.json"
EVAL_FILES: Final = {
    "ours": EVAL_FILE,
    "pydantic": FIXTURES / "answers_eval_pydantic.json",
    "starlette": FIXTURES / "answers_eval_starlette.json",
    "click": FIXTURES / "answers_eval_click.json",
}
"""Every eval set, by corpus: our docs first, then the real corpora."""
SITE_FILE: Final = Path("docs") / "site.json"
"""The demo's site config, whose synonyms the demo backend searches with."""
RANK_DEPTH: Final = 8
"""Sections retrieved per question: the most an answer may cite (SITE_MAX_SOURCES_RANGE)."""
ANSWER_SOURCES: Final = 4
"""Passages the extractive answer quotes from: the demo site's `maxSources` (docs/site.json)."""
RECALL_CUTOFFS: Final = (1, 3)
SPLITS: Final = ("tuning", "heldout")
RANKERS: Final = ("shipped", "plain BM25")

Split = Literal["tuning", "heldout"]
Needs = Literal["any", "all", "none"]
Ranker = Callable[[str, int], Sequence[Passage] | Found]


class EvalError(RuntimeError):
    """An eval set that cannot be scored honestly (an expected section does not exist...)."""


class EvalQuestion(BaseModel):
    """One question of the eval set and the sections that answer it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    split: Split
    kind: str
    question: Annotated[str, Field(min_length=1)]
    needs: Needs
    expected: list[str]


class ProjectDocs(BaseModel):
    """A Markdown folder of this project (`docs`), indexed as the demo backend does."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    docs: str
    exclude: list[str] = []


class MkDocsCorpus(BaseModel):
    """A corpus of the shared corpora folder, built with MkDocs + Material (bench/corpora.py).

    `config` names the corpus's own mkdocs.yml (relative to its folder), which the
    bench adapts outside the corpus; None means the corpus has none and the bench
    generates a minimal Material config.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    builder: Literal["mkdocs"]
    name: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")]
    config: str | None = None


class SphinxCorpus(BaseModel):
    """A corpus of the shared corpora folder built with Sphinx from its own `conf.py`
    (`conf` names the folder that holds it, relative to the corpus), as `dirhtml`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    builder: Literal["sphinx"]
    name: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")]
    conf: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")] = "docs"


BuiltCorpus = MkDocsCorpus | SphinxCorpus


class EvalSet(BaseModel):
    """The whole fixture file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str
    corpus: ProjectDocs | MkDocsCorpus | SphinxCorpus
    questions: list[EvalQuestion]


def load_eval_set(path: Path = EVAL_FILE) -> EvalSet:
    """The eval set, validated (a malformed fixture fails loudly, never silently scores 0)."""
    return EvalSet.model_validate_json(path.read_text(encoding="utf-8"))


def section_key(passage: Passage) -> str:
    """`/docs/page.html#anchor` (no `#` for a page's top section), as the fixture writes it."""
    return passage.path + (f"#{passage.anchor}" if passage.anchor else "")


def page_of(section: str) -> str:
    """The page (URL path) of a section key."""
    return section.partition("#")[0]


def ranked_sections(passages: Sequence[Passage]) -> list[str]:
    """Distinct sections in rank order (a long section's chunks count once)."""
    seen: dict[str, None] = {}
    for passage in passages:
        seen.setdefault(section_key(passage), None)
    return list(seen)


def composed(question: str, passages: Sequence[Passage]) -> ExtractiveAnswer | None:
    """The extractive answer over these passages, composed exactly as the Ask app's
    extractive generator does (None: no passage, or nothing quotable)."""
    if not passages:
        return None
    try:
        return extractive_answer(question, passages)
    except NoQuotableText:
        return None


def first_quote_section(question: str, passages: Sequence[Passage]) -> str | None:
    """The section the extractive answer over these passages opens with (None: no answer)."""
    answer = composed(question, passages)
    return None if answer is None else section_key(passages[answer.lead])


MORE_MARKER: Final = MORE_FROM_THE_DOCS
"""Where an extractive answer's lead ends: what follows is the rest, listed."""
_MARKUP: Final = re.compile(r"^(?:> ?)+|^```.*$|\[\d+\]|<[^>\n]+>|[*_`]", re.MULTILINE)
"""Markdown a reader does not see as text: quote prefixes, fences, citation markers,
tags, emphasis and code ticks."""


def visible_chars(answer: str) -> int:
    """Characters of an answer's text a reader sees before "More from the docs"
    (markup removed, runs of white space counted once)."""
    shown = answer.split(MORE_MARKER, 1)[0]
    return len(" ".join(_MARKUP.sub("", shown).split()))


def opens_pointing_back(answer: str) -> bool:
    """Whether the answer's first quote opens with a word that points back at a sentence
    the reader was not shown ("This sets up ...": `extractive.BACK_REFERENCES`)."""
    first = _MARKUP.sub("", answer.split("\n", 1)[0]).replace("\\", "")
    return points_back(first.strip())


# ------------------------------------------------------------------ scoring


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one ranker did with one question."""

    question: EvalQuestion
    sections: list[str]
    seconds: float
    first_quote: str | None = None
    closest: tuple[str, ...] = ()
    """A near miss's closest sections (then `sections` is empty: nothing answered)."""
    answer_chars: int | None = None
    """The answer's visible characters before "More from the docs" (None: no answer)."""
    points_back: bool = False
    """Whether the answer opens on a back-reference (`opens_pointing_back`)."""

    @property
    def declined(self) -> bool:
        return not self.sections

    def recall_at(self, k: int) -> float:
        expected = set(self.question.expected)
        found = len(expected & set(self.sections[:k]))
        if self.question.needs == "all":
            return found / min(len(expected), k)
        return 1.0 if found else 0.0

    def first_right_rank(self) -> int | None:
        """The rank (from 1) of the first expected section, None when none is ranked."""
        for rank, section in enumerate(self.sections, start=1):
            if section in self.question.expected:
                return rank
        return None

    def reciprocal_rank(self) -> float:
        rank = self.first_right_rank()
        return 0.0 if rank is None else 1.0 / rank

    @property
    def closest_right(self) -> bool:
        """Whether a near miss showed an expected section among its first three."""
        return any(section in self.question.expected for section in self.closest[:3])

    def page_at(self, k: int) -> bool:
        """Whether a page of an expected section is among the first k sources' pages (what
        a reader who clicks a source link and scrolls finds)."""
        pages = {page_of(section) for section in self.question.expected}
        return any(page_of(section) in pages for section in self.sections[:k])

    @property
    def declined_outright(self) -> bool:
        """Nothing answered and no closest sections shown either: the plain decline."""
        return not self.sections and not self.closest

    @property
    def quote_on_target(self) -> bool:
        """Whether the answer's first quote comes from an expected section."""
        return self.first_quote is not None and self.first_quote in self.question.expected


@dataclass(slots=True)
class Scores:
    """Aggregates over one split for one ranker."""

    answerable: int = 0
    unanswerable: int = 0
    recall: dict[int, float] = field(default_factory=dict)
    mrr: float = 0.0
    first_quote: float = 0.0
    declined: float = 0.0
    wrongly_declined: float = 0.0
    closest_right: float = 0.0
    closest_unanswerable: float = 0.0
    page_at3: float = 0.0
    declined_outright: float = 0.0
    answer_p50: float = 0.0
    answer_p90: float = 0.0
    points_back: float = 0.0
    p50_ms: float = 0.0
    p90_ms: float = 0.0

    @property
    def balanced(self) -> float:
        """The decline's balanced accuracy, (unanswerable declined + answerable kept) / 2:
        the keep rule's decline measure (docs/design/answer-eval.md)."""
        return (self.declined + 1 - self.wrongly_declined) / 2


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def percentile(values: Sequence[float], share: float) -> float:
    """The `share` quantile of the values, interpolated between the closest two (every
    sample counts, none is dropped); NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    position = share * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def score(outcomes: Sequence[Outcome]) -> Scores:
    """recall@k, MRR, first quote on target, the declined shares and the time per question."""
    answerable = [o for o in outcomes if o.question.needs != "none"]
    unanswerable = [o for o in outcomes if o.question.needs == "none"]
    milliseconds = [o.seconds * 1000 for o in outcomes]
    lengths = [float(o.answer_chars) for o in answerable if o.answer_chars is not None]
    return Scores(
        answerable=len(answerable),
        unanswerable=len(unanswerable),
        recall={k: _mean([o.recall_at(k) for o in answerable]) for k in RECALL_CUTOFFS},
        mrr=_mean([o.reciprocal_rank() for o in answerable]),
        first_quote=_mean([1.0 if o.quote_on_target else 0.0 for o in answerable]),
        declined=_mean([1.0 if o.declined else 0.0 for o in unanswerable]),
        wrongly_declined=_mean([1.0 if o.declined else 0.0 for o in answerable]),
        closest_right=_mean([1.0 if o.closest_right else 0.0 for o in answerable]),
        closest_unanswerable=_mean([1.0 if o.closest else 0.0 for o in unanswerable]),
        page_at3=_mean([1.0 if o.page_at(3) else 0.0 for o in answerable]),
        declined_outright=_mean([1.0 if o.declined_outright else 0.0 for o in unanswerable]),
        answer_p50=percentile(lengths, 0.5),
        answer_p90=percentile(lengths, 0.9),
        points_back=_mean(
            [1.0 if o.points_back else 0.0 for o in answerable if o.answer_chars is not None]
        ),
        p50_ms=percentile(milliseconds, 0.5),
        p90_ms=percentile(milliseconds, 0.9),
    )


def run_ranker(ranker: Ranker, questions: Sequence[EvalQuestion]) -> list[Outcome]:
    """Ask every question once; every question counts (none is dropped or retried).

    Only the search is timed; the first quote is composed afterwards from the
    first ANSWER_SOURCES passages, as the Ask app hands them to the generator.
    """
    outcomes = []
    for question in questions:
        started = time.perf_counter()
        ranked = ranker(question.question, RANK_DEPTH)
        elapsed = time.perf_counter() - started
        found = ranked if isinstance(ranked, Found) else Found(tuple(ranked), grounded=True)
        passages = found.answered
        closest = () if found.grounded else tuple(ranked_sections(found.passages))
        shown = passages[:ANSWER_SOURCES]
        answer = composed(question.question, shown)
        quoted = None if answer is None else section_key(shown[answer.lead])
        chars = None if answer is None else visible_chars(answer.markdown)
        back = answer is not None and opens_pointing_back(answer.markdown)
        outcomes.append(
            Outcome(question, ranked_sections(passages), elapsed, quoted, closest, chars, back)
        )
    return outcomes


def split_scores(outcomes: Sequence[Outcome]) -> dict[str, Scores]:
    """Scores per split (`tuning`, `heldout`) and over `all` questions."""
    return {
        **{split: score([o for o in outcomes if o.question.split == split]) for split in SPLITS},
        "all": score(outcomes),
    }


# ------------------------------------------------------------------ the run


@dataclass(frozen=True, slots=True)
class EvalResult:
    """Per ranker, per split (`tuning`, `heldout`, `all`), the scores; and the raw outcomes."""

    scores: dict[str, dict[str, Scores]]
    outcomes: dict[str, list[Outcome]]
    chunks: int
    name: str = "ours"
    notes: tuple[str, ...] = ()


def site_synonyms(root: Path = PROJECT_ROOT) -> tuple[tuple[str, ...], ...]:
    """The demo site's synonyms (its site config), which the eval of our docs uses."""
    from ..server.ask_app import load_site_config

    return load_site_config(root / SITE_FILE).synonyms


def build_index(eval_set: EvalSet, root: Path = PROJECT_ROOT) -> SearchIndex:
    """The index the demo serves: the eval corpus, with the demo site's retrieval settings."""
    if not isinstance(eval_set.corpus, ProjectDocs):
        raise EvalError("build_index indexes a project docs folder; use corpus_index.")
    return index_folder(
        root / eval_set.corpus.docs, exclude=eval_set.corpus.exclude, synonyms=site_synonyms(root)
    )


def expected_sections(eval_set: EvalSet) -> set[str]:
    """Every section some question of the set expects."""
    return {section for question in eval_set.questions for section in question.expected}


def check_published(eval_set: EvalSet, published: set[str], where: str) -> None:
    """Raise EvalError naming every expected section the built site does not publish: a
    question whose answer cannot exist would silently count as a miss."""
    missing = sorted(expected_sections(eval_set) - published)
    if missing:
        raise EvalError(
            f"{len(missing)} expected section(s) are not published by the built site "
            f"{where}: {', '.join(missing)}"
        )


def corpus_index(eval_set: EvalSet, corpora: Path | None) -> tuple[SearchIndex, tuple[str, ...]]:
    """The index a corpus's questions are asked against, and notes for the table.

    Our docs are indexed as the demo serves them. A shared corpus is built with
    MkDocs (cached), every expected section is checked against the built site
    (EvalError names those it does not publish), and the built site is indexed
    by `index_built_site`, with no synonyms: a site owner starts with none.
    """
    if isinstance(eval_set.corpus, ProjectDocs):
        return build_index(eval_set), ()
    from .corpora import (
        build_corpus,
        build_sphinx_corpus,
        index_built_site,
        published_ids,
        published_sections,
    )

    corpus = eval_set.corpus
    if corpora is None:
        raise EvalError(f"Corpus {corpus.name!r} needs the corpora folder (--corpora).")
    started = time.perf_counter()
    if isinstance(corpus, SphinxCorpus):
        site = build_sphinx_corpus(corpora, corpus.name, corpus.conf)
        published = published_ids(site.site_dir)
    else:
        site = build_corpus(corpora, corpus.name, corpus.config)
        published = published_sections(site.site_dir)
    built = time.perf_counter() - started
    check_published(eval_set, set(published), str(site.site_dir))
    chunks = index_built_site(site.site_dir)
    index = SearchIndex.from_chunks(chunks)
    indexed = set(ranked_sections(index.all_passages()))
    unreachable = sorted(expected_sections(eval_set) - indexed)
    how = "cached site" if site.cached else f"built in {built:.1f} s"
    notes = [f"{eval_set.corpus.name}: {how} at {site.site_dir}"]
    if unreachable:
        notes.append(f"expected but holding no indexed text: {', '.join(unreachable)}")
    return index, tuple(notes)


def run_eval(
    eval_set: EvalSet | None = None, corpora: Path | None = None, name: str = "ours"
) -> EvalResult:
    """Score the shipped retrieval and the plain BM25 peer over the same index."""
    eval_set = eval_set or load_eval_set()
    index, notes = corpus_index(eval_set, corpora)
    rankers: dict[str, Ranker] = {
        RANKERS[0]: index.find,
        RANKERS[1]: index.search_plain_bm25,
    }
    outcomes = {n: run_ranker(r, eval_set.questions) for n, r in rankers.items()}
    scores = {n: split_scores(found) for n, found in outcomes.items()}
    return EvalResult(scores, outcomes, index.size, name, notes)


def split_indexes(
    split: Split, corpora: Path | None
) -> dict[str, tuple[SearchIndex, list[EvalQuestion]]]:
    """Each eval's index and its questions of one split: what a weight sweep or a retrieval
    experiment ranks (on the tuning split while choosing, held-out once at the end)."""
    indexes = {}
    for name, path in EVAL_FILES.items():
        eval_set = load_eval_set(path)
        index, _ = corpus_index(eval_set, corpora)
        indexes[name] = (index, [q for q in eval_set.questions if q.split == split])
    return indexes


def default_corpora(root: Path = PROJECT_ROOT) -> Path | None:
    """`../shared/corpora` from the project root when it exists, else None."""
    folder = root.parent / "shared" / "corpora"
    return folder if folder.is_dir() else None


def _figure(value: float, digits: int = 3) -> str:
    """A share or a time, `-` when the split has no question it applies to."""
    return "-" if math.isnan(value) else f"{value:.{digits}f}"


def format_eval(result: EvalResult) -> str:
    """One row per ranker and split, with the issue's goals under the table."""
    header = (
        f"{'answers: ' + result.name:<26}{'split':<9}{'n':>4}{'R@1':>7}{'R@3':>7}{'MRR':>7}"
        f"{'quote1':>8}{'u':>4}{'declined':>10}{'wrong-decl':>11}{'closest-ok':>11}"
        f"{'closest-u':>10}{'page@3':>8}{'outright':>9}{'chars50':>8}{'chars90':>8}{'back':>7}"
        f"{'p50 ms':>8}{'p90 ms':>8}"
    )
    rows = [header, "-" * len(header)]
    for name, by_split in result.scores.items():
        for split, s in by_split.items():
            rows.append(
                f"{name:<26}{split:<9}{s.answerable:>4}{_figure(s.recall[1]):>7}"
                f"{_figure(s.recall[3]):>7}{_figure(s.mrr):>7}{_figure(s.first_quote):>8}"
                f"{s.unanswerable:>4}{_figure(s.declined):>10}{_figure(s.wrongly_declined):>11}"
                f"{_figure(s.closest_right):>11}{_figure(s.closest_unanswerable):>10}"
                f"{_figure(s.page_at3):>8}{_figure(s.declined_outright):>9}"
                f"{_figure(s.answer_p50, 0):>8}{_figure(s.answer_p90, 0):>8}"
                f"{_figure(s.points_back):>7}"
                f"{_figure(s.p50_ms, 2):>8}{_figure(s.p90_ms, 2):>8}"
            )
    rows.append(
        f"{result.chunks} chunks; n answerable, u unanswerable questions; quote1: first quote "
        "of the extractive answer from an expected section; a near miss (closest sections "
        "shown) counts as declined; closest-ok: answerable near misses showing an expected "
        "section in their first 3; closest-u: unanswerable questions given a near miss; "
        "page@3: a page of an expected section among the first 3 sources; outright: "
        "unanswerable questions declined with no closest sections; chars50/chars90: the "
        "answer's visible characters before 'More from the docs', median and p90; back: "
        "answers opening on a back-reference ('This ...', 'It ...') to a sentence not shown; "
        "goals (issue 32, shipped, held-out): page@3 >= 0.9, R@3 >= 0.75, outright >= 0.9, "
        "wrong-decl <= 0.1, quote1 >= 0.8, chars50 <= 600, chars90 <= 1000, p50 ms <= 10"
    )
    rows.extend(result.notes)
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
    """`python -m agentskit_web.bench answers [--corpora PATH] [--corpus NAME]... [--misses
    SPLIT] [--json PATH]`."""
    parser = argparse.ArgumentParser(prog="agentskit-web bench answers")
    parser.add_argument(
        "--corpora",
        type=Path,
        default=default_corpora(),
        help="the shared corpora folder (default ../shared/corpora when it exists)",
    )
    parser.add_argument(
        "--corpus",
        action="append",
        choices=list(EVAL_FILES),
        help="only this corpus (repeatable; default every one)",
    )
    parser.add_argument(
        "--misses",
        choices=SPLITS,
        help="also list the shipped misses of a split (tuning only while tuning retrieval)",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the scores here")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    names = args.corpus or list(EVAL_FILES)
    if args.misses == "heldout":
        print(
            "answers: listing held-out questions; whoever tunes retrieval must not read them",
            file=sys.stderr,
        )
    corpora: Path | None = args.corpora
    if corpora is not None and not corpora.is_dir():
        corpora = None
    from .corpora import CorpusError

    results = []
    failed = False
    for name in names:
        eval_set = load_eval_set(EVAL_FILES[name])
        if isinstance(eval_set.corpus, BuiltCorpus) and corpora is None:
            where = args.corpora or PROJECT_ROOT.parent / "shared" / "corpora"
            print(f"answers: no corpora folder at {where}: {name} not measured (--corpora PATH)")
            continue
        try:
            result = run_eval(eval_set, corpora, name)
        except (EvalError, CorpusError) as error:
            print(f"answers: {name} not measured: {error}", file=sys.stderr)
            failed = True
            continue
        results.append(result)
        print(format_eval(result))
        if args.misses:
            print(format_misses(result, RANKERS[0], args.misses))
        print()
    if args.json:
        payload = {
            result.name: {
                ranker: {split: vars_of(s) for split, s in by_split.items()}
                for ranker, by_split in result.scores.items()
            }
            for result in results
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 1 if failed else 0


def vars_of(scores: Scores) -> dict[str, object]:
    """A JSON-ready copy of one split's scores (NaN, for an empty split, as null)."""

    def number(value: float) -> float | None:
        return None if math.isnan(value) else value

    return {
        "answerable": scores.answerable,
        "unanswerable": scores.unanswerable,
        "recallAt1": number(scores.recall[1]),
        "recallAt3": number(scores.recall[3]),
        "mrr": number(scores.mrr),
        "firstQuoteOnTarget": number(scores.first_quote),
        "declined": number(scores.declined),
        "wronglyDeclined": number(scores.wrongly_declined),
        "closestRight": number(scores.closest_right),
        "closestUnanswerable": number(scores.closest_unanswerable),
        "pageAt3": number(scores.page_at3),
        "declinedOutright": number(scores.declined_outright),
        "answerCharsP50": number(scores.answer_p50),
        "answerCharsP90": number(scores.answer_p90),
        "p50Ms": number(scores.p50_ms),
        "p90Ms": number(scores.p90_ms),
    }


if __name__ == "__main__":
    raise SystemExit(main())
