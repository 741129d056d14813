"""Sweep decline.PAGE_COVERAGE on the tuning halves of the four evals.

For each value (1.01 turns the page-coverage rule off: no share reaches it), per
corpus: page@3, R@3, R@1, answerable questions wrongly declined, unanswerable ones
declined outright. Tuning halves only (round eight, docs/design/answer-eval.md):
`.venv/bin/python experiments/page_coverage/sweep.py [VALUE...]`
"""

import sys

from agentskit_web.answering import decline
from agentskit_web.bench.answers import default_corpora, run_ranker, score, split_indexes

VALUES = [float(v) for v in sys.argv[1:]] or [1.01, 0.9, 0.8, 0.75, 0.7, 0.66, 0.6, 0.5, 0.45]
indexes = split_indexes("tuning", default_corpora())
print(
    f"{'value':>6} {'corpus':<10}{'page@3':>8}{'R@3':>7}{'R@1':>7}{'wrong':>7}"
    f"{'outright':>9}{'u-decl':>8}"
)
for value in VALUES:
    decline.PAGE_COVERAGE = value  # type: ignore[misc]
    for name, (index, questions) in indexes.items():
        index.forget()
        s = score(run_ranker(index.find, questions))
        print(
            f"{value:>6.2f} {name:<10}{s.page_at3:>8.3f}{s.recall[3]:>7.3f}{s.recall[1]:>7.3f}"
            f"{s.wrongly_declined:>7.3f}{s.declined_outright:>9.3f}{s.declined:>8.3f}"
        )
