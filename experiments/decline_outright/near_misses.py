"""The tuning questions the decline makes near misses, with what their best rows share.

For each: the coverage terms, each term's document frequency (rows holding it, of the
index), whether the best row holds it and in which field (title, heading, text, code).
Tuning halves only (issue 32, item 3). `.venv/bin/python experiments/decline_outright/near_misses.py`
"""

from agentskit_web.answering.decline import (
    COVERAGE_PASSAGES_PER_PART,
    coverage,
    coverage_terms,
    named_words,
    rows_of,
    term_weights,
    verdict,
)
from agentskit_web.answering.query_terms import query_phrases
from agentskit_web.answering.question_split import split_question
from agentskit_web.answering.ranking import BM25_B, BM25_K1, FIELD_WEIGHTS, best_rows
from agentskit_web.bench.answers import default_corpora, split_indexes

tally: dict[tuple[str, str, str], int] = {}
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
        for (word, phrases), (weight, held) in zip(terms, weights, strict=True):
            rows = rows_of(index.hits, phrases)
            fields = ""
            for phrase in phrases:
                for row, f in index.hits(phrase).items():
                    if row in held:
                        fields += "".join(k for k, n in zip("THtc", f) if n)
                        v1 = v1 or bool(f[0] or f[1])
                        v2 = v2 or bool(f[0] or f[1]) or f[2] >= 2
            parts.append(
                f"{word}:df{len(rows)}{'[' + ''.join(sorted(set(fields))) + ']' if held else ''}"
            )
        right = any(
            s.path + (f"#{s.anchor}" if s.anchor else "") in q.expected for s in found.passages[:3]
        )
        kind = "U" if q.needs == "none" else ("ok" if right else "miss")
        tally[(name, kind, "v1")] = tally.get((name, kind, "v1"), 0) + (not v1)
        tally[(name, kind, "v2")] = tally.get((name, kind, "v2"), 0) + (not v2)
        print(
            f"  {kind:<4} v1={int(v1)} v2={int(v2)} cov={coverage(weights, set(top)):.2f} {q.question[:60]!r}  {' '.join(parts)}"
        )
print("declined outright by each variant (name, kind, variant): count")
for key, count in sorted(tally.items()):
    print(" ", key, count)
