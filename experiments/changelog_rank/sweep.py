"""Issue 26 round five: sweep `ranking.CHANGELOG_WEIGHT`, with the reader's change-log mark
(`spread=True`, shipped) and with a section's own version heading only (`spread=False`),
on the TUNING halves only, in one process (docs/design/answer-eval.md, "Round five").

`.venv/bin/python experiments/changelog_rank/sweep.py` (`WEIGHTS="1 0.5"` to choose the
factors, `DIFFS=1` to list the moved questions) prints, per corpus, how many indexed
sections have a version heading, then for each setting R@1 / R@3 / MRR / balanced accuracy
per tuning half, whether it passes the keep rule against the factor 1 (no rule), and (with
DIFFS) the
tuning questions whose ranked sections changed (with the ranks of their first right section).
"""

from __future__ import annotations

import dataclasses
import os
import sys

from agentskit_web.answering import ranking
from agentskit_web.answering.changelog import is_version_heading
from agentskit_web.answering.inverted_index import InvertedIndex
from agentskit_web.answering.ranking import SearchIndex
from agentskit_web.bench.answers import (
    default_corpora,
    run_ranker,
    split_indexes,
)
from agentskit_web.bench.sweep import MEASURES, keep_rule_figures

if os.environ.get("SPLIT", "tuning") != "tuning":
    sys.exit("this sweep reads the tuning halves only")

WEIGHTS = [float(w) for w in os.environ.get("WEIGHTS", "1 0.9 0.8 0.7 0.6 0.5 0.4 0.3").split()]


def own_heading_only(index):
    """The same index with the reader's mark replaced by the section's own heading: a
    version number in it, as main's rule read it before the page-wide heuristic."""
    chunks = [
        dataclasses.replace(c, history=bool(c.anchor) and is_version_heading(c.heading))
        for c in index.all_chunks()
    ]
    return SearchIndex(InvertedIndex.of(chunks), index.vocabulary, index.synonyms, index.options)


def run(indexes, weight, spread):
    """The tuning outcomes with `CHANGELOG_WEIGHT` set to `weight`; without `spread`, only
    a section whose own heading is a version is weighed (not the reader's whole mark)."""
    ranking.CHANGELOG_WEIGHT = weight  # type: ignore[misc]
    return {n: run_ranker(pair[spread].search, qs) for n, (pair, qs) in indexes.items()}


def main() -> None:
    indexes = {}
    for name, (index, qs) in split_indexes("tuning", default_corpora()).items():
        indexes[name] = ({False: own_heading_only(index), True: index}, qs)
        passages = index.all_passages()
        versions = [p for p in passages if p.anchor and is_version_heading(p.heading)]
        pages = {p.path for p in versions}
        on_pages = sum(1 for p in passages if p.anchor and p.path in pages)
        print(
            f"{name}: {len(passages)} rows, {len(versions)} with a version heading, "
            f"{on_pages} sections on {len(pages)} such pages {sorted(pages)}"
        )
    base = run(indexes, 1.0, True)
    base_fig = {n: keep_rule_figures(o) for n, o in base.items()}
    for spread in (False, True):
        for weight in WEIGHTS:
            outs = run(indexes, weight, spread)
            fig = {n: keep_rule_figures(o) for n, o in outs.items()}
            lower = any(fig[n][m] < base_fig[n][m] - 1e-9 for n in fig for m in MEASURES)
            higher = any(fig[n][m] > base_fig[n][m] + 1e-9 for n in fig for m in MEASURES)
            verdict = "FAILS" if lower else ("passes" if higher else "no change")
            cells = "  ".join(f"{n} " + "/".join(f"{fig[n][m]:.3f}" for m in MEASURES) for n in fig)
            moved = {
                n: [
                    (o.question.question[:60], b.first_right_rank(), o.first_right_rank())
                    for b, o in zip(base[n], outs[n], strict=True)
                    if b.sections != o.sections
                ]
                for n in outs
            }
            counts = " ".join(f"{n}:{len(v)}" for n, v in moved.items())
            print(f"spread={spread!s:5} w={weight:.2f} {cells}  {verdict}  lists changed {counts}")
            if os.environ.get("DIFFS"):
                for n, items in moved.items():
                    for q, r0, r1 in items:
                        print(f"    {n}: {q!r} first right {r0} -> {r1}")


if __name__ == "__main__":
    main()
