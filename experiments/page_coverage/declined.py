"""The tuning questions the decline refuses, and what a page-level view would hold of them.

For every tuning question the shipped search declines (outright or as a near miss),
and every unanswerable one it does not: the coverage of its best row, of that row and
its page-mates among the best 12 rows, which test declined it, and whether a right
page is among the best 12 rows' pages. Tuning halves only (round eight,
docs/design/answer-eval.md): `.venv/bin/python experiments/page_coverage/declined.py`
"""

from agentskit_web.answering.decline import (
    COVERAGE_PASSAGES_PER_PART,
    PAGE_MATE_ROWS,
    coverage,
    coverage_terms,
    in_passing,
    name_phrases,
    named_words,
    term_weights,
    unknown_name,
)
from agentskit_web.answering.query_terms import query_phrases
from agentskit_web.answering.question_split import split_question
from agentskit_web.answering.ranking import BM25_B, BM25_K1, FIELD_WEIGHTS, best_rows
from agentskit_web.bench.answers import default_corpora, page_of, split_indexes

for name, (index, questions) in split_indexes("tuning", default_corpora()).items():
    print(f"== {name}")
    for q in questions:
        found = index.find(q.question, 8)
        answerable = q.needs != "none"
        if found.grounded == answerable:
            continue
        groups = index.groups(q.question)
        terms = coverage_terms(q.question, groups)
        names = named_words(q.question)
        for phrase in name_phrases(terms, names):
            index.hits(phrase)
        scores = index._scores(query_phrases(groups), FIELD_WEIGHTS, BM25_K1, BM25_B)
        rows = best_rows(scores, PAGE_MATE_ROWS)
        top = rows[: COVERAGE_PASSAGES_PER_PART * len(split_question(q.question))]
        pages = {index.index.chunk(r).path for r in top}
        mates = [r for r in rows if index.index.chunk(r).path in pages]
        weights = term_weights(terms, top, index.hits, index.size)
        share = coverage(weights, set(top))
        page_share = coverage(term_weights(terms, mates, index.hits, index.size), set(mates))
        why = (
            "name"
            if unknown_name(terms, names, index.hits)
            else "passing"
            if in_passing(terms, weights, top, index.hits)
            else "coverage"
        )
        expected = {page_of(s) for s in q.expected}
        right_pages = [i for i, r in enumerate(rows) if index.index.chunk(r).path in expected]
        kind = "A-declined" if answerable else "U-answered"
        shown = "near" if found.passages else "out"
        print(
            f"  {kind} {shown:<4} {why:<8} sec={share:.2f} page={page_share:.2f} "
            f"mates={len(mates)} right@{right_pages[:3]} {q.question[:60]!r}"
        )
