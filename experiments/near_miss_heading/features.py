"""Near misses on the tuning halves: how much of the question the best section's heading holds.

For every tuning question whose verdict is a near miss ("closest"), answerable or not:
its coverage, the IDF-weighted share of the question held by the best row's heading or
page title alone (`head`), and the rarest question word found there (`rare`: its
document frequency as a share of the rows). Whether the right section is first
(`right1`) says what promoting the near miss to an answer would give the reader.
Tuning halves only: `.venv/bin/python experiments/near_miss_heading/features.py`
"""

from agentskit_web.answering.decline import (
    COVERAGE_PASSAGES_PER_PART,
    PAGE_MATE_ROWS,
    coverage,
    coverage_terms,
    name_phrases,
    named_words,
    rows_of,
    term_weights,
)
from agentskit_web.answering.query_terms import query_phrases
from agentskit_web.answering.question_split import split_question
from agentskit_web.answering.ranking import BM25_B, BM25_K1, FIELD_WEIGHTS, best_rows
from agentskit_web.bench.answers import default_corpora, page_of, section_key, split_indexes

rows_out = []
for name, (index, questions) in split_indexes("tuning", default_corpora()).items():
    for q in questions:
        found = index.find(q.question, 8)
        if found.grounded or not found.passages:
            continue  # answered, or declined outright: only near misses here
        groups = index.groups(q.question)
        terms = coverage_terms(q.question, groups)
        for phrase in name_phrases(terms, named_words(q.question)):
            index.hits(phrase)
        scores = index._scores(query_phrases(groups), FIELD_WEIGHTS, BM25_K1, BM25_B)
        rows = best_rows(scores, PAGE_MATE_ROWS)
        top = rows[: COVERAGE_PASSAGES_PER_PART * len(split_question(q.question))]
        weights = term_weights(terms, top, index.hits, index.size)
        share = coverage(weights, set(top))
        total = sum(w for w, _ in weights)
        head = 0.0
        rare = 1.0
        for (_word, phrases), (w, _) in zip(terms, weights, strict=True):
            titled = False
            for phrase in phrases:
                for row, fields in index.hits(phrase).items():
                    if row in top and (fields[0] or fields[1]):
                        titled = True
            if titled:
                head += w
                rare = min(rare, len(rows_of(index.hits, phrases)) / index.size)
        answerable = q.needs != "none"
        first = [section_key(p) for p in found.passages][:1]
        right1 = bool(first) and page_of(first[0]) in {page_of(s) for s in q.expected}
        rows_out.append(
            (
                name,
                "A" if answerable else "U",
                share,
                head / total if total else 0,
                rare,
                right1,
                q.question[:60],
            )
        )

for r in sorted(rows_out, key=lambda r: -r[3]):
    print(
        f"{r[0]:<10}{r[1]} cov={r[2]:.2f} head={r[3]:.2f} rare={r[4]:.3f} "
        f"right1={int(r[5])} {r[6]!r}"
    )
