"""The weight sweep of docs/design/answer-eval.md: `ranking.FIELD_WEIGHTS`, `BM25_K1` and
`BM25_B` over a grid, on the TUNING halves only, in one process per run.

`python -m agentskit_web.bench.sweep [--corpora PATH] [--json PATH]` builds each corpus's
index once (as `bench answers` does), then for every setting overrides the three module
constants and asks the tuning questions with the shipped search. It prints the shipped
constants' figures, every setting that lowers no corpus's R@1, R@3, MRR or decline
balanced accuracy (the keep rule), best mean MRR first, and the closest failures. The
held-out halves are never asked here: read them once, afterwards, with `bench answers`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from ..answering import ranking
from .answers import (
    EvalQuestion,
    Outcome,
    default_corpora,
    run_ranker,
    score,
    split_indexes,
)

GRID: Final = {
    "b": (0.3, 0.5, 0.6, 0.75),
    "k1": (1.2, 1.6, 2.0),
    "title": (1.0, 1.5, 3.0),
    "heading": (2.0, 4.0, 6.0),
    "code": (0.25, 0.5, 1.0),
}
"""The grid of the second round (answer-eval.md), 324 settings; text weighs 1 throughout."""
MEASURES: Final = ("r1", "r3", "mrr", "balanced")


def keep_rule_figures(outcomes: Sequence[Outcome]) -> dict[str, float]:
    """The keep rule's measures (MEASURES) over one ranker's outcomes."""
    s = score(outcomes)
    return {"r1": s.recall[1], "r3": s.recall[3], "mrr": s.mrr, "balanced": s.balanced}


def tuning_figures(
    index: ranking.SearchIndex, questions: Sequence[EvalQuestion]
) -> dict[str, float]:
    """R@1, R@3, MRR and the decline's balanced accuracy over the given questions."""
    return keep_rule_figures(run_ranker(index.search, questions))


def setting_figures(
    indexes: dict[str, tuple[ranking.SearchIndex, list[EvalQuestion]]],
    weights: tuple[float, float, float, float],
    k1: float,
    b: float,
) -> dict[str, dict[str, float]]:
    """Each corpus's tuning figures with the constants overridden (and then put back)."""
    saved = ranking.FIELD_WEIGHTS, ranking.BM25_K1, ranking.BM25_B
    ranking.FIELD_WEIGHTS, ranking.BM25_K1, ranking.BM25_B = weights, k1, b  # type: ignore[misc]
    try:
        return {name: tuning_figures(index, qs) for name, (index, qs) in indexes.items()}
    finally:
        ranking.FIELD_WEIGHTS, ranking.BM25_K1, ranking.BM25_B = saved  # type: ignore[misc]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentskit_web.bench.sweep")
    parser.add_argument("--corpora", type=Path, default=default_corpora())
    parser.add_argument("--json", type=Path, default=None, help="also write every setting here")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    indexes = split_indexes("tuning", args.corpora)
    shipped = setting_figures(indexes, ranking.FIELD_WEIGHTS, ranking.BM25_K1, ranking.BM25_B)
    rows = []
    for b, k1, title, heading, code in itertools.product(*GRID.values()):
        figures = setting_figures(indexes, (title, heading, 1.0, code), k1, b)
        # how far below the shipped figures, summed over corpora and measures (0 = passes)
        shortfall = sum(max(0.0, shipped[n][m] - figures[n][m]) for n in figures for m in MEASURES)
        mean_mrr = sum(f["mrr"] for f in figures.values()) / len(figures)
        rows.append(((title, heading, 1.0, code), k1, b, shortfall, mean_mrr, figures))
    rows.sort(key=lambda r: (r[3] > 1e-9, r[3] if r[3] > 1e-9 else 0, -r[4]))

    def line(label: str, figures: dict[str, dict[str, float]]) -> str:
        cells = "  ".join(
            f"{n} " + "/".join(f"{figures[n][m]:.3f}" for m in MEASURES) for n in figures
        )
        return f"{label:<34} {cells}"

    print("tuning halves; per corpus R@1/R@3/MRR/balanced accuracy")
    shipped_label = f"shipped {ranking.FIELD_WEIGHTS} k1 {ranking.BM25_K1} b {ranking.BM25_B}"
    print(line(shipped_label, shipped))
    passing = [r for r in rows if r[3] <= 1e-9]
    print(f"{len(passing)} of {len(rows)} settings lower nothing; best mean MRR first:")
    for weights, k1, b, _, mean_mrr, figures in passing[:10]:
        print(line(f"{weights} k1 {k1} b {b} ({mean_mrr:.3f})", figures))
    print("closest that lower something (shortfall, mean MRR):")
    for weights, k1, b, short, mean_mrr, figures in rows[len(passing) : len(passing) + 8]:
        print(line(f"{weights} k1 {k1} b {b} ({short:.3f}, {mean_mrr:.3f})", figures))
    if args.json:
        dump = [dict(weights=r[0], k1=r[1], b=r[2], shortfall=r[3], figures=r[5]) for r in rows]
        args.json.write_text(json.dumps({"shipped": shipped, "settings": dump}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
