"""Every tuning question's decline signals, beside what the search would give it undeclined.

Round nine (docs/design/answer-eval.md): for each tuning question of the four evals, the
shipped verdict and the signals a decline decision could read at once: the best row's
IDF-weighted coverage (`sec`), its page's (`page`), the share of the question's weight
the best row holds in a heading or page title (`head`), the share of weight of words the
docs never use (`absent`), the best score's margin over the best row of another page
(`margin`), and how common in the corpus the words the best row shares are (`gen`: the
mean document frequency share of the held words). With the decline switched off: is a
right page / section among the first three sources? Writes JSON for `rules.py`.
Tuning halves only: `.venv/bin/python experiments/decline_signals/features.py OUT.json`
"""

import json
import sys
from pathlib import Path

from agentskit_web.answering import ranking
from agentskit_web.answering.decline import (
    COVERAGE_PASSAGES_PER_PART,
    PAGE_MATE_ROWS,
    coverage,
    coverage_terms,
    in_passing,
    name_phrases,
    named_words,
    rows_of,
    term_weights,
    titled,
    unknown_name,
)
from agentskit_web.answering.query_terms import query_phrases
from agentskit_web.answering.question_split import split_question
from agentskit_web.answering.ranking import BM25_B, BM25_K1, FIELD_WEIGHTS, best_rows
from agentskit_web.bench.answers import default_corpora, page_of, ranked_sections, split_indexes

shipped_verdict = ranking.verdict
out = []
for name, (index, questions) in split_indexes("tuning", default_corpora()).items():
    for q in questions:
        index.forget()
        ranking.verdict = shipped_verdict  # type: ignore[attr-defined]
        found = index.find(q.question, 8)
        shipped = "answered" if found.grounded else ("closest" if found.passages else "declined")
        ranking.verdict = lambda *a, **k: "answered"  # type: ignore[attr-defined]
        index.forget()
        open_found = index.find(q.question, 8)
        ranking.verdict = shipped_verdict  # type: ignore[attr-defined]
        secs = ranked_sections(open_found.passages)[:3]
        expected = set(q.expected)
        pages = {page_of(s) for s in expected}
        page_ok = any(page_of(s) in pages for s in secs)
        sec_ok = any(s in expected for s in secs)
        sec1_ok = bool(secs) and secs[0] in expected

        groups = index.groups(q.question)
        terms = coverage_terms(q.question, groups)
        names = named_words(q.question)
        for phrase in name_phrases(terms, names):
            index.hits(phrase)
        scores = index._scores(query_phrases(groups), FIELD_WEIGHTS, BM25_K1, BM25_B)
        rows = best_rows(scores, PAGE_MATE_ROWS)
        rec = {
            "corpus": name,
            "q": q.question,
            "answerable": q.needs != "none",
            "shipped": shipped,
            "page_ok": page_ok,
            "sec_ok": sec_ok,
            "sec1_ok": sec1_ok,
            "nterms": len(terms),
        }
        if not rows or not terms:
            out.append(rec)
            continue
        top = rows[: COVERAGE_PASSAGES_PER_PART * len(split_question(q.question))]
        top_pages = {index.index.chunk(r).path for r in top}
        mates = [r for r in rows if index.index.chunk(r).path in top_pages]
        weights = term_weights(terms, top, index.hits, index.size)
        total = sum(w for w, _ in weights)
        share = coverage(weights, set(top))
        page_share = coverage(term_weights(terms, mates, index.hits, index.size), set(mates))
        head = 0.0
        absent = 0.0
        gen = []
        held_n = 0
        term_info = []
        for (word, phrases), (w, hits) in zip(terms, weights, strict=True):
            matching = rows_of(index.hits, phrases)
            if not matching:
                absent += w
            in_head = False
            for phrase in phrases:
                for row, fields in index.hits(phrase).items():
                    if row in top and (fields[0] or fields[1]):
                        in_head = True
            if in_head:
                head += w
            if hits:
                held_n += 1
                gen.append(len(matching) / index.size)
            any_head = any(
                fields[0] or fields[1]
                for phrase in phrases
                for fields in index.hits(phrase).values()
            )
            in_page = bool(matching & set(mates))
            term_info.append(
                [word, round(w, 3), len(matching), bool(hits), in_head, any_head, in_page]
            )
        best = scores[rows[0]]
        other = next(
            (scores[r] for r in rows[1:] if index.index.chunk(r).path not in top_pages), 0.0
        )
        rec.update(
            sec=share,
            page=page_share,
            head=head / total,
            absent=absent / total,
            margin=(best - other) / best if best else 0.0,
            gen=sum(gen) / len(gen) if gen else 0.0,
            held=held_n,
            titled=titled(terms, weights, top, index.hits),
            passing=in_passing(terms, weights, top, index.hits),
            name=unknown_name(terms, names, index.hits),
            terms=term_info,
        )
        out.append(rec)
Path(sys.argv[1]).write_text(json.dumps(out, indent=0), encoding="utf-8")
print(len(out), "questions")
