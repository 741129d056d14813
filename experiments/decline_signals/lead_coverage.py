"""Would the lead improve if the answered passages were re-sorted by how much of the
question each holds? Score x (share of the question's weighted words the passage holds)
^ ALPHA over the passages `find` returns, tuning halves only (round nine):
`.venv/bin/python experiments/decline_signals/lead_coverage.py`
"""

import math

from agentskit_web.answering.text_terms import terms_of
from agentskit_web.bench.answers import default_corpora, page_of, ranked_sections, split_indexes

indexes = split_indexes("tuning", default_corpora())
cache: dict[str, list] = {}
for name, (index, questions) in indexes.items():
    rows = []
    for q in questions:
        if q.needs == "none":
            continue
        found = index.find(q.question, 8)
        if not found.grounded:
            rows.append((q, []))
            continue
        rows.append((q, list(found.passages)))
    cache[name] = rows

for alpha in [0.0, 0.25, 0.5, 1.0, 2.0]:
    cells = []
    for name, rows in cache.items():
        r1 = r3 = p3 = 0
        for q, passages in rows:
            asked = terms_of(q.question)
            if not passages or not asked:
                continue

            def held(p, asked=asked) -> float:
                words = terms_of(f"{p.page_title} {p.heading} {p.text}")
                return len(words & asked) / len(asked)

            ranked = sorted(passages, key=lambda p: -p.score * math.pow(held(p) + 1e-6, alpha))
            secs = ranked_sections(ranked)[:3]
            expected = set(q.expected)
            r1 += bool(secs) and secs[0] in expected
            r3 += any(s in expected for s in secs)
            p3 += any(page_of(s) in {page_of(e) for e in expected} for s in secs)
        n = len(rows)
        cells.append(f"{name[:4]} R@1 {r1 / n:.3f} R@3 {r3 / n:.3f} p@3 {p3 / n:.3f}")
    print(f"alpha {alpha:<5}", " | ".join(cells))
