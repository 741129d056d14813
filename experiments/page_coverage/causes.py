"""Why plain BM25 finds the right page in the first three where the shipped search does not.

For every answerable tuning question where plain BM25 has a right page among its first
three sources and the shipped search has none, the cause: the shipped search declined it
(outright or as a near miss) or ranked other pages first. Tuning halves only (round
eight, docs/design/answer-eval.md):
`.venv/bin/python experiments/page_coverage/causes.py`
"""

from collections import Counter

from agentskit_web.bench.answers import RANK_DEPTH, default_corpora, run_ranker, split_indexes

tally: Counter[tuple[str, str]] = Counter()
for name, (index, questions) in split_indexes("tuning", default_corpora()).items():
    answerable = [q for q in questions if q.needs != "none"]
    ours = run_ranker(index.find, answerable)
    plain = run_ranker(index.search_plain_bm25, answerable)
    for mine, theirs in zip(ours, plain, strict=True):
        if theirs.page_at(3) and not mine.page_at(3):
            cause = "near miss" if mine.closest else ("declined" if mine.declined else "ranked")
            tally[(name, cause)] += 1
            print(f"{name:<10} {cause:<9} {mine.question.id} {mine.question.question[:70]!r}")
        elif mine.page_at(3) and not theirs.page_at(3):
            tally[(name, "ours only")] += 1
print(f"(first {RANK_DEPTH} sources ranked; page@3 compared)")
for (name, cause), count in sorted(tally.items()):
    print(f"  {name:<10} {cause:<10} {count}")
total = sum(n for (_, c), n in tally.items() if c != "ours only")
declines = sum(n for (_, c), n in tally.items() if c in ("declined", "near miss"))
print(f"plain BM25 only: {total}, of which the shipped search declined {declines}")
