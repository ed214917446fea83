"""The embedder's peer: ONNX Runtime's own Python binding running the same model file on the same passages.

The same work as `crates/embed`'s `throughput` example: ~500-character pieces of the `.txt` files in DIR (sorted by
name, the first LIMIT), tokenized by the same tokenizer.json (cut at 256 word pieces) inside the timing, run through
the same model.onnx with the same session settings (ONNX Runtime's add-and-normalise fusion left out, as ours), mean-
pooled over the real tokens and normalised.

Two ways, chosen by MODE:
- `side-by-side` (as ours): one text a pass, one session of one thread per core, the sessions running side by side
  on Python threads (ONNX Runtime releases the interpreter's lock while it computes);
- `batch=N`: N texts a pass (sorted by length, padded), one session with every core as its intra-op threads.

usage: embed_peer.py MODEL_DIR DIR [LIMIT] [MODE]
"""
import glob
import os
import sys
import threading
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

model_dir, folder = sys.argv[1], sys.argv[2]
limit = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
mode = sys.argv[4] if len(sys.argv) > 4 else "side-by-side"
cores = os.cpu_count() or 1

pieces = []
for path in sorted(glob.glob(os.path.join(folder, "*.txt"))):
    text = open(path, encoding="utf-8").read()
    pieces += [text[i:i + 500] for i in range(0, len(text), 500)]
    if len(pieces) >= limit:
        break
pieces = pieces[:limit]

tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
tokenizer.enable_truncation(256)


def session(threads):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(os.path.join(model_dir, "model.onnx"), options, providers=["CPUExecutionProvider"],
                                disabled_optimizers=["SkipLayerNormFusion"])


def embed(run, encodings):
    ids = np.array([e.ids for e in encodings], np.int64)
    mask = np.array([e.attention_mask for e in encodings], np.int64)
    hidden = run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
    mean = (hidden * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1)
    return mean / np.maximum(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12)


if mode == "side-by-side":
    sessions = [session(1) for _ in range(cores)]
    start = time.perf_counter()
    encodings = tokenizer.encode_batch(pieces)
    vectors = [None] * len(encodings)
    next_index, lock = [0], threading.Lock()

    def worker(run):
        while True:
            with lock:
                i = next_index[0]
                next_index[0] += 1
            if i >= len(encodings):
                return
            vectors[i] = embed(run, [encodings[i]])

    threads = [threading.Thread(target=worker, args=(s.run,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    how = f"one text a pass, {cores} sessions of one thread side by side"
else:
    batch = int(mode.removeprefix("batch="))
    run = session(cores).run
    tokenizer.enable_padding()
    start = time.perf_counter()
    order = sorted(range(len(pieces)), key=lambda i: len(pieces[i]))
    for k in range(0, len(order), batch):
        embed(run, tokenizer.encode_batch([pieces[i] for i in order[k:k + batch]]))
    how = f"batch {batch}, one session of {cores} threads"
seconds = time.perf_counter() - start
print(f"peer: {len(pieces)} passages of ~500 characters in {seconds:.1f} s: {len(pieces) / seconds:.0f} passages/s "
      f"({how})")
