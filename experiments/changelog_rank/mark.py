"""Round five, index-time mark: the reader's change-log mark (`Chunk.history`) against main's
same-page candidate heuristic, on the TUNING halves only, in one process
(docs/design/answer-eval.md, "Round five").

`.venv/bin/python experiments/changelog_rank/mark.py` prints, per corpus, how many indexed
rows the reader marks (and how many of those have a version heading of their own), then
R@1 / R@3 / MRR / decline balanced accuracy per tuning half for four settings:

- `none`: factor 1 (no change-log rule at all);
- `main`: main's rule (own version heading, or another candidate of the page has one),
  the mark ignored;
- `mark`: the mark alone (shipped);
- `mark+page`: the mark, or main's rule.

Main's rule is restated here (`main_sections`), as `ranking._changelog_sections` was on
main at a1da25c, since the shipped ranking no longer has it.

Each is checked by the keep rule against `main` (no corpus lower on any measure), and the
tuning questions whose ranked sections differ from `main` are listed with the rank of
their first right section (`DIFFS=1`: and both ranked lists).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from functools import partial

from agentskit_web.answering import ranking
from agentskit_web.answering.changelog import asks_about_versions, is_version_heading
from agentskit_web.answering.inverted_index import InvertedIndex
from agentskit_web.answering.ranking import SearchIndex
from agentskit_web.answering.text_terms import terms_of
from agentskit_web.bench.answers import (
    default_corpora,
    run_ranker,
    split_indexes,
)
from agentskit_web.bench.sweep import MEASURES, keep_rule_figures

if os.environ.get("SPLIT", "tuning") != "tuning":
    sys.exit("this experiment reads the tuning halves only")

SHIPPED_WEIGHT = ranking.CHANGELOG_WEIGHT


def main_sections(question, chunks, asked, *, with_mark):
    """Main's recognition (a1da25c): an anchored candidate whose heading is a version, or
    whose page has such a candidate; `with_mark` also counts the reader's mark."""
    pages = {c.path for c in chunks if c.anchor and is_version_heading(c.heading)}
    found = []
    for chunk in chunks:
        old = bool(chunk.anchor) and (chunk.path in pages or is_version_heading(chunk.heading))
        old = old or (with_mark and chunk.history)
        title = terms_of(chunk.page_title)
        found.append(old and not asks_about_versions(question, title, asked))
    return found


SHIPPED_SECTIONS = ranking._changelog_sections


def main() -> None:
    marked, unmarked = {}, {}
    for name, (index, qs) in split_indexes("tuning", default_corpora()).items():
        chunks = index.all_chunks()
        marked[name] = (index, qs)
        plain = [dataclasses.replace(c, history=False) for c in chunks]
        again = SearchIndex(
            InvertedIndex.of(plain), index.vocabulary, index.synonyms, index.options
        )
        unmarked[name] = (again, qs)
        history = [c for c in chunks if c.history]
        own = [c for c in history if is_version_heading(c.heading)]
        pages = sorted({c.path for c in history})
        print(f"{name}: {len(chunks)} rows, {len(history)} marked", end=" ")
        print(f"({len(own)} with a version heading of their own) on {pages}")

    settings = {
        "none": (unmarked, 1.0, partial(main_sections, with_mark=False)),
        "main": (unmarked, SHIPPED_WEIGHT, partial(main_sections, with_mark=False)),
        "mark": (marked, SHIPPED_WEIGHT, SHIPPED_SECTIONS),
        "mark+page": (marked, SHIPPED_WEIGHT, partial(main_sections, with_mark=True)),
    }
    outcomes = {}
    for label, (indexes, weight, sections) in settings.items():
        ranking.CHANGELOG_WEIGHT = weight  # type: ignore[misc]
        ranking._changelog_sections = sections
        outcomes[label] = {n: run_ranker(index.search, qs) for n, (index, qs) in indexes.items()}
    base = {n: keep_rule_figures(o) for n, o in outcomes["main"].items()}
    for label, outs in outcomes.items():
        fig = {n: keep_rule_figures(o) for n, o in outs.items()}
        lower = any(fig[n][m] < base[n][m] - 1e-9 for n in fig for m in MEASURES)
        higher = any(fig[n][m] > base[n][m] + 1e-9 for n in fig for m in MEASURES)
        verdict = "FAILS" if lower else ("passes" if higher else "same")
        print(f"{label:10} vs main: {verdict}")
        for n in fig:
            print(f"    {n:10} " + " / ".join(f"{fig[n][m]:.3f}" for m in MEASURES))
        for n in outs:
            for b, o in zip(outcomes["main"][n], outs[n], strict=True):
                if b.sections != o.sections:
                    print(
                        f"    moved {n}: {o.question.question!r} "
                        f"first right {b.first_right_rank()} -> {o.first_right_rank()}"
                    )
                    if os.environ.get("DIFFS"):
                        print(f"        main: {b.sections}\n        this: {o.sections}")
        if label == "mark+page":
            same = all(
                b.sections == o.sections
                for n in outs
                for b, o in zip(outcomes["mark"][n], outs[n], strict=True)
            )
            print(f"    mark+page ranks every tuning question as mark alone: {same}")


if __name__ == "__main__":
    main()
