"""The tuning questions the decline makes near misses, with what their best rows share.

For each: the coverage terms, each term's document frequency (rows holding it), and,
when the best row holds it, in which fields (T title, H heading, t text, c code); then
how many near misses a variant of the rule would decline outright (v1: no held word in
a title or heading, shipped; v2: nor twice in the text). Tuning halves only (issue 32,
item 3): `.venv/bin/python experiments/decline_outright/near_misses.py`
"""

from collections import Counter

from agentskit_web.answering.decline import (
    COVERAGE_PASSAGES_PER_PART,
    coverage,
    coverage_terms,
    rows_of,
    term_weights,
)
from agentskit_web.answering.query_terms import query_phrases
from agentskit_web.answering.question_split import split_question
from agentskit_web.answering.ranking import BM25_B, BM25_K1, FIELD_WEIGHTS, best_rows
from agentskit_web.bench.answers import default_corpora, section_key, split_indexes

FIELDS = "THtc"
tally: Counter[tuple[str, str, str]] = Counter()
for name, (index, questions) in split_indexes("tuning", default_corpora()).items():
    print(f"== {name} ({index.size} rows)")
    for q in questions:
        found = index.find(q.question, 8)
        if found.grounded or not found.passages:
            continue
        groups = index.groups(q.question)
        terms = coverage_terms(q.question, groups)
        scores = index._scores(query_phrases(groups), FIELD_WEIGHTS, BM25_K1, BM25_B)
        depth = COVERAGE_PASSAGES_PER_PART * len(split_question(q.question))
        top = best_rows(scores, 40)[:depth]
        weights = term_weights(terms, top, index.hits, index.size)
        parts = []
        v1 = v2 = False
        for (word, phrases), (_, held) in zip(terms, weights, strict=True):
            fields = set()
            for phrase in phrases:
                for row, counts in index.hits(phrase).items():
                    if row in held:
                        fields.update(k for k, n in zip(FIELDS, counts, strict=False) if n)
                        v1 = v1 or bool(counts[0] or counts[1])
                        v2 = v2 or bool(counts[0] or counts[1]) or counts[2] >= 2
            where = f"[{''.join(sorted(fields))}]" if held else ""
            parts.append(f"{word}:df{len(rows_of(index.hits, phrases))}{where}")
        right = any(section_key(p) in q.expected for p in found.passages[:3])
        kind = "U" if q.needs == "none" else ("ok" if right else "miss")
        tally[(name, kind, "v1")] += not v1
        tally[(name, kind, "v2")] += not v2
        share = coverage(weights, set(top))
        print(f"  {kind:<4} v1={v1:d} v2={v2:d} cov={share:.2f} {q.question[:60]!r}")
        print(f"       {' '.join(parts)}")
print("near misses each variant declines outright (corpus, kind, variant): count")
for key, count in sorted(tally.items()):
    print(" ", key, count)
