"""What the static-embedding rerank would cost the page: bytes per question and time.

Layout simulated: row vectors (int8, one per chunk) in parts of R consecutive rows;
the static table's token vectors (int8) in parts of T consecutive token ids. A question
fetches the row parts holding its BM25 pool (top POOL rows) and the token parts holding
its tokens. Bytes are brotli (quality 11) of the raw int8 parts. First question: that
question alone; later: what the questions asked before had not fetched yet (tuning
questions, file order). Time: the rerank in pure Python (as the page would run it).

    .venv-exp/bin/python experiments/vocab_bridge/page_cost.py
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import brotli
import numpy as np
from model2vec import StaticModel

from agentskit_web.answering import ranking
from agentskit_web.answering.query_terms import query_phrases
from agentskit_web.bench.answers import EVAL_FILES, corpus_index, default_corpora, load_eval_set

POOL = int(os.environ.get("POOL", "48"))
MODEL = os.environ.get("ENCODER", ".cache/m2v/minilm-None")


def int8(a: np.ndarray) -> tuple[np.ndarray, float]:
    scale = float(np.abs(a).max()) / 127
    return np.round(a / scale).astype(np.int8), scale


def main() -> int:
    m = StaticModel.from_pretrained(MODEL)
    table, _ = int8(m.embedding.astype(np.float32))
    token_part_size: dict[tuple[int, int], int] = {}
    print(f"token table {table.shape}, {table.nbytes / 1e6:.1f} MB raw int8")
    for name, path in EVAL_FILES.items():
        index, _ = corpus_index(load_eval_set(path), default_corpora())
        questions = [q.question for q in load_eval_set(path).questions if q.split == "tuning"]
        passages = index.all_passages()
        texts = [f"{p.page_title} - {p.heading}. {p.text} {p.code[:300]}" for p in passages]
        emb = m.encode(texts)
        emb = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-9)
        rows8, _ = int8(emb)
        total_rows = len(brotli.compress(rows8.tobytes(), quality=11))
        print(f"{name}: {len(passages)} rows, all row vectors {total_rows / 1000:.1f} kB brotli")
        for rows_per_part, tokens_per_part in ((8, 8), (16, 16), (32, 32)):
            row_part: dict[int, int] = {}
            first, later, seen = [], [], set()
            for number, question in enumerate(questions):
                sc = index._scores(query_phrases(index.groups(question)), ranking.FIELD_WEIGHTS)
                pool = ranking.best_rows(sc, POOL)
                tokens = m.tokenizer.encode(question, add_special_tokens=False).ids
                parts = {("r", r // rows_per_part) for r in pool}
                parts |= {("t", t // tokens_per_part) for t in tokens}
                size = 0
                new = 0
                for kind, k in parts:
                    if kind == "r":
                        if k not in row_part:
                            chunk = rows8[k * rows_per_part : (k + 1) * rows_per_part]
                            row_part[k] = len(brotli.compress(chunk.tobytes(), quality=11))
                        b = row_part[k]
                    else:
                        key = (tokens_per_part, k)
                        if key not in token_part_size:
                            chunk = table[k * tokens_per_part : (k + 1) * tokens_per_part]
                            token_part_size[key] = len(brotli.compress(chunk.tobytes(), quality=11))
                        b = token_part_size[key]
                    size += b
                    if (kind, k) not in seen:
                        new += b
                seen |= parts
                first.append(size)
                if number:
                    later.append(new)
            print(
                f"  rows/part {rows_per_part}, tokens/part {tokens_per_part}: first question p50 "
                f"{statistics.median(first) / 1000:.1f} kB max {max(first) / 1000:.1f}; later p50 "
                f"{statistics.median(later) / 1000:.1f} kB max {max(later) / 1000:.1f}"
            )
        # pure-Python rerank time: mean of token vectors, then POOL dot products
        rows_py = [list(map(int, r)) for r in rows8]
        table_rows = {}
        times = []
        for question in questions:
            sc = index._scores(query_phrases(index.groups(question)), ranking.FIELD_WEIGHTS)
            pool = ranking.best_rows(sc, POOL)
            started = time.perf_counter()
            tokens = m.tokenizer.encode(question, add_special_tokens=False).ids
            q = [0] * table.shape[1]
            for t in tokens:
                vec = table_rows.get(t) or table_rows.setdefault(t, list(map(int, table[t])))
                q = [a + b for a, b in zip(q, vec, strict=True)]
            scores = [sum(a * b for a, b in zip(q, rows_py[r], strict=True)) for r in pool]
            sorted(range(len(pool)), key=lambda i: -scores[i])
            times.append((time.perf_counter() - started) * 1000)
        print(f"  rerank in pure Python (CPython): p50 {statistics.median(times):.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
