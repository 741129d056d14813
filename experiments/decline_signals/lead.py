"""Where the right section stands when the first source is not it (answered tuning questions).

Per corpus: answered answerable questions whose first source is a right section (R@1),
whose first source is on a right page but another section of it (same page), whose
right section is second or third (lower), or not in the first three (missed); for the
same-page and lower cases, the first source's and the right section's heading, anchor
depth and how many question words the heading holds. Round nine, tuning halves only:
`.venv/bin/python experiments/decline_signals/lead.py`
"""

from agentskit_web.answering.text_terms import terms_of
from agentskit_web.bench.answers import default_corpora, page_of, ranked_sections, split_indexes

for name, (index, questions) in split_indexes("tuning", default_corpora()).items():
    counts = {"r1": 0, "same page": 0, "lower": 0, "missed": 0}
    for q in questions:
        if q.needs == "none":
            continue
        found = index.find(q.question, 8)
        if not found.grounded:
            continue
        secs = ranked_sections(found.passages)
        expected = set(q.expected)
        if secs and secs[0] in expected:
            counts["r1"] += 1
            continue
        kind = (
            "same page"
            if secs and page_of(secs[0]) in {page_of(s) for s in expected}
            else "lower"
            if any(s in expected for s in secs[:3])
            else "missed"
        )
        counts[kind] += 1
        if kind == "missed":
            continue
        asked = terms_of(q.question)
        first = found.passages[0]
        print(
            f"  {name[:4]} {kind:<9} {q.question[:58]!r}\n"
            f"      first: {first.path}#{first.anchor} [{first.heading}] "
            f"heading words asked {len(terms_of(first.heading) & asked)}"
        )
        for p in found.passages[1:4]:
            if f"{p.path}#{p.anchor}" in expected or (p.anchor is None and p.path in expected):
                print(
                    f"      right: {p.path}#{p.anchor} [{p.heading}] "
                    f"heading words asked {len(terms_of(p.heading) & asked)}"
                )
    print(name, counts)
