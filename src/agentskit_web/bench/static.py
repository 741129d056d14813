"""`make bench` section `static` (CPython part): the split index a static site publishes.

For each corpus (our docs, the real corpora in ../shared/corpora/ when present,
and a generated site of 2,000 pages for scale):

- bytes a reader's page fetches (brotli and gzip, as a static host serves
  them): for a first question (manifest + its parts; every question asked
  first in a fresh page) and for each later question of one page that asks
  them all in turn (only the parts not fetched before);
- the whole index on disk next to the site's visible text (both brotli);
- agreement of the static search with the server's (same top-3 sources, same
  verdict: answered, near miss or declined), question by question;
- search time per question: the pure-Python engine next to the FTS5 search
  it replaced, in the same run.

The real corpora are built with MkDocs + Material and read as published
(bench/corpora.py, the build the `answers` section caches in .cache/corpora),
and asked their eval files' questions; our docs are read as the demo backend
reads them. The browser part (bench/static_browser.py) times the same kind of
index in Chromium on the Starlette site: question -> first answer painted with the
runtime warm beside serve-ask on loopback, and the bytes the browser fetched.
"""

from __future__ import annotations

import argparse
import gzip
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import brotli

from ..answering.chunk import Chunk, Found, Passage
from ..answering.ranking import SearchIndex
from ..answering.site_index import SiteIndex
from ..answering.static_index import StaticIndexFiles, StaticSearch, split_index
from .answers import (
    EVAL_FILES,
    PROJECT_ROOT,
    ProjectDocs,
    corpus_index,
    default_corpora,
    load_eval_set,
    section_key,
    site_synonyms,
)
from .generated_site import docs_words, generated_chunks, generated_questions

GENERATED_PAGES: Final = 2_000
CORPUS_QUESTIONS: Final = 100
"""Questions asked of a corpus without an eval file (made from its headings)."""
FIRST_QUESTIONS: Final = 40
"""Questions each asked as a fresh page's first (every part fetched anew: the slow part)."""
LIMIT: Final = 4
"""Passages asked per question: the demo site's maxSources."""

FIRST_GOAL_KB: Final = 150
LATER_GOAL_KB: Final = 50
GROWTH_GOAL: Final = 2.0
DISK_GOAL_SHARE: Final = 0.40
AGREEMENT_GOAL: Final = 0.98
SEARCH_P50_GOAL_MS: Final = 10.0
BROWSER_RUNS: Final = 3
"""Runs of the browser part (each boots the widget twice and asks its questions)."""


@dataclass(frozen=True, slots=True)
class Corpus:
    name: str
    chunks: list[Chunk]
    questions: list[str]
    synonyms: tuple[tuple[str, ...], ...]
    source: str


@dataclass(frozen=True, slots=True)
class Figures:
    corpus: Corpus
    files: int
    first_br: list[int]
    first_gz: list[int]
    later_br: list[int]
    later_gz: list[int]
    disk_br: int
    text_br: int
    visible_br: int
    agreement: float
    declines_agree: float
    new_ms: list[float]
    plain_ms: list[float]
    split_s: float


def _sizes(files: StaticIndexFiles) -> tuple[dict[str, int], dict[str, int]]:
    everything = files.all_files()
    br = {name: len(brotli.compress(data, quality=11)) for name, data in everything.items()}
    gz = {
        name: len(gzip.compress(data, compresslevel=9, mtime=0))
        for name, data in everything.items()
    }
    return br, gz


def _fetch_all(search: StaticSearch, files: StaticIndexFiles, question: str) -> list[str]:
    """Every part the question needs, added; the names fetched in order."""
    fetched: list[str] = []
    while names := search.parts_for(question, LIMIT):
        for name in names:
            diagnostic = search.add_part(name, files.parts[name])
            if diagnostic is not None:
                raise RuntimeError(f"{name}: {diagnostic.code}")
        fetched.extend(names)
    return fetched


def _top3(passages: Sequence[Passage]) -> list[str]:
    return [section_key(passage) for passage in passages[:3]]


def _verdict(found: Found) -> str:
    """Answered, a near miss (closest sections shown) or declined."""
    return "answered" if found.grounded else "closest" if found.passages else "declined"


def _timed(search: object, questions: Sequence[str]) -> list[float]:
    times: list[float] = []
    for question in questions:
        started = time.perf_counter()
        search(question, LIMIT)  # type: ignore[operator]
        times.append((time.perf_counter() - started) * 1000)
    return times


def measure(corpus: Corpus) -> Figures:
    site = SiteIndex.of(
        corpus.chunks, site_name=corpus.name, base_path="/", generator="html", pages=0
    )
    started = time.perf_counter()
    files = split_index(site, synonyms=corpus.synonyms)
    split_s = time.perf_counter() - started
    br, gz = _sizes(files)
    server = SearchIndex.from_chunks(corpus.chunks, synonyms=corpus.synonyms)
    first_br, first_gz = [], []
    for question in corpus.questions[:FIRST_QUESTIONS]:
        names = [files.manifest_name, *_fetch_all(StaticSearch(files.manifest), files, question)]
        first_br.append(sum(br[name] for name in names))
        first_gz.append(sum(gz[name] for name in names))
    page = StaticSearch(files.manifest)
    later_br, later_gz = [], []
    agree = declines = 0
    for number, question in enumerate(corpus.questions):
        names = _fetch_all(page, files, question)
        if number:
            later_br.append(sum(br[name] for name in names))
            later_gz.append(sum(gz[name] for name in names))
        static, full = page.find(question, LIMIT), server.find(question, LIMIT)
        agree += _top3(static.passages) == _top3(full.passages)
        declines += _verdict(static) == _verdict(full)
    visible = "\n".join(
        f"{c.page_title}\n{c.heading}\n{c.text}\n{c.code}" for c in corpus.chunks
    ).encode("utf-8")
    server.forget()
    new_ms = _timed(server.search, corpus.questions)
    plain_ms = _timed(server.search_plain_bm25, corpus.questions)
    count = len(corpus.questions)
    return Figures(
        corpus,
        len(files.parts) + 1,
        first_br,
        first_gz,
        later_br,
        later_gz,
        sum(br.values()),
        sum(size for name, size in br.items() if ".texts." in name),
        len(brotli.compress(visible, quality=11)),
        agree / count,
        declines / count,
        new_ms,
        plain_ms,
        split_s,
    )


def _mean(values: Sequence[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def _pct(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def _kb(values: Sequence[int], share: float) -> str:
    return f"{_pct(values, share) / 1000:.1f}"


def format_figures(all_figures: Sequence[Figures]) -> str:
    """Every corpus's block; growth is against the first (our docs)."""
    return "\n".join(format_corpus(f, all_figures[0]) for f in all_figures)


def format_corpus(f: Figures, small: Figures) -> str:
    """One corpus's figures, each next to its goal (and growth over `small`)."""
    lines: list[str] = []
    c = f.corpus
    lines.append(
        f"static [{c.name}] {len(c.chunks)} chunks, {len(c.questions)} questions "
        f"({c.source}); {f.files} files, split in {f.split_s:.2f} s"
    )
    lines.append(
        f"  first question, brotli kB  p50 {_kb(f.first_br, 0.5)}  p90 {_kb(f.first_br, 0.9)}"
        f"  max {_kb(f.first_br, 1.0)}  (gzip p50 {_kb(f.first_gz, 0.5)}, p90 "
        f"{_kb(f.first_gz, 0.9)})   goal <= {FIRST_GOAL_KB}"
    )
    lines.append(
        f"  later question, brotli kB  p50 {_kb(f.later_br, 0.5)}  p90 {_kb(f.later_br, 0.9)}"
        f"  max {_kb(f.later_br, 1.0)}  (gzip p50 {_kb(f.later_gz, 0.5)}, p90 "
        f"{_kb(f.later_gz, 0.9)})   goal <= {LATER_GOAL_KB}"
    )
    if f is not small:
        # Means, not medians: most later questions of a small site fetch nothing new.
        first = _mean(f.first_br) / max(_mean(small.first_br), 1.0)
        later = _mean(f.later_br) / max(_mean(small.later_br), 1.0)
        lines.append(
            f"  growth over [{small.corpus.name}] (mean bytes): first x{first:.2f}, later "
            f"x{later:.2f}   goal <= x{GROWTH_GOAL:.0f} (at {GENERATED_PAGES} pages)"
        )
    share = f.disk_br / max(f.visible_br, 1)
    search_share = (f.disk_br - f.text_br) / max(f.visible_br, 1)
    lines.append(
        f"  whole index on disk {f.disk_br / 1000:.1f} kB brotli vs visible text "
        f"{f.visible_br / 1000:.1f} kB brotli: {share:.0%} (without the text parts "
        f"{search_share:.0%})   goal <= {DISK_GOAL_SHARE:.0%}"
    )
    lines.append(
        f"  static = server: top-3 sources {f.agreement:.1%}, declines and near misses "
        f"{f.declines_agree:.1%}   goal >= {AGREEMENT_GOAL:.0%}"
    )
    lines.append(
        f"  search ms/question: shipped p50 {_pct(f.new_ms, 0.5):.2f} p90 {_pct(f.new_ms, 0.9):.2f}"
        f"   plain BM25 p50 {_pct(f.plain_ms, 0.5):.2f} p90 {_pct(f.plain_ms, 0.9):.2f}"
        f"   goal p50 <= {SEARCH_P50_GOAL_MS:.0f}"
    )
    return "\n".join(lines)


def corpora(root: Path | None, pages: int) -> tuple[list[Corpus], list[str]]:
    """Our docs, each real corpus with an eval file (built with MkDocs, as the answers
    section builds and caches it), and the generated site; notes for the table."""
    found: list[Corpus] = []
    notes: list[str] = []
    for name, path in EVAL_FILES.items():
        eval_set = load_eval_set(path)
        if not isinstance(eval_set.corpus, ProjectDocs) and root is None:
            continue
        index, corpus_notes = corpus_index(eval_set, root)
        notes.extend(corpus_notes)
        chunks = index.all_chunks()
        synonyms = site_synonyms() if isinstance(eval_set.corpus, ProjectDocs) else ()
        questions = [question.question for question in eval_set.questions]
        found.append(Corpus(name, chunks, questions, synonyms, path.name))
    if pages:
        chunks = generated_chunks(pages, docs_words(PROJECT_ROOT / "docs"))
        questions = generated_questions(chunks, CORPUS_QUESTIONS)
        found.append(Corpus(f"generated {pages} pages", chunks, questions, (), "generated"))
    return found, notes


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m agentskit_web.bench static [--corpora DIR] [--pages N]`."""
    parser = argparse.ArgumentParser(prog="agentskit-web bench static")
    parser.add_argument("--corpora", type=Path, default=default_corpora())
    parser.add_argument("--pages", type=int, default=GENERATED_PAGES)
    parser.add_argument(
        "--browser-runs",
        type=int,
        default=BROWSER_RUNS,
        help="runs of the browser part (Starlette in Chromium, beside serve-ask); 0 skips it",
    )
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    root = args.corpora if args.corpora is not None and args.corpora.is_dir() else None
    if root is None:
        print(f"static: no corpora at {args.corpora}; our docs and the generated site only")
    found, notes = corpora(root, args.pages)
    for note in notes:
        print(f"  {note}")
    figures: list[Figures] = []
    for corpus in found:  # each corpus printed as soon as measured (a slow machine)
        figures.append(measure(corpus))
        print(format_corpus(figures[-1], figures[0]), flush=True)
    if args.browser_runs > 0:
        from .static_browser import StaticBenchError, format_static_browser, run_static_browser

        starlette = root / "starlette" if root is not None else None
        if starlette is None:
            print("static (browser): no corpora, so no Starlette site to time in the browser")
            return 0
        try:
            result = run_static_browser(args.browser_runs, starlette)
        except StaticBenchError as error:
            print(f"static (browser): {error}", file=sys.stderr)
            return 1
        print(format_static_browser(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
