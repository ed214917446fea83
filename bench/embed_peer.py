"""The embedder's peer: ONNX Runtime's own Python binding running the same model file on the same passages.

The same work as `crates/embed`'s `throughput` example: ~500-character pieces of the `.txt` files in DIR (sorted by
name, the first LIMIT), tokenized by the same tokenizer.json (cut at 256 word pieces), sorted by length, run through
the same model.onnx with every core (intra-op threads = cores, as ours), mean-pooled over the real tokens and
normalised. The peer's batch is BATCH (16 unless given); ours runs one text a pass (the model quantizes its
activations per pass).

usage: embed_peer.py MODEL_DIR DIR [LIMIT] [BATCH]
"""
import glob
import os
import sys
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

model_dir, folder = sys.argv[1], sys.argv[2]
limit = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
batch = int(sys.argv[4]) if len(sys.argv) > 4 else 16

pieces = []
for path in sorted(glob.glob(os.path.join(folder, "*.txt"))):
    text = open(path, encoding="utf-8").read()
    pieces += [text[i:i + 500] for i in range(0, len(text), 500)]
    if len(pieces) >= limit:
        break
pieces = pieces[:limit]

tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
tokenizer.enable_truncation(256)
tokenizer.enable_padding()
options = ort.SessionOptions()
options.intra_op_num_threads = os.cpu_count() or 1
options.inter_op_num_threads = 1
session = ort.InferenceSession(os.path.join(model_dir, "model.onnx"), options, providers=["CPUExecutionProvider"])

order = sorted(range(len(pieces)), key=lambda i: len(pieces[i]))
start, tokens = time.perf_counter(), 0
for k in range(0, len(order), batch):
    chunk = order[k:k + batch]
    encodings = tokenizer.encode_batch([pieces[i] for i in chunk])
    ids = np.array([e.ids for e in encodings], np.int64)
    mask = np.array([e.attention_mask for e in encodings], np.int64)
    tokens += int(mask.sum())
    hidden = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
    mean = (hidden * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1)
    mean /= np.maximum(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12)
seconds = time.perf_counter() - start
print(f"peer: {len(pieces)} passages of ~500 characters ({tokens / max(len(pieces), 1):.0f} word pieces each) in "
      f"{seconds:.1f} s: {len(pieces) / seconds:.0f} passages/s ({options.intra_op_num_threads} threads, batch {batch})")
