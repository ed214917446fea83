"""A probe of retrieval ideas beside the product's own ranking, on the retrieval benchmark's store (issue 21).

It reads the store `eval_retrieval` fills (its passages, their full-text index and one model's stored vectors) and
scores one half of CUAD (even or odd positions in labels.jsonl) with the benchmark's definitions: the 41 category
descriptions as queries, recall@3 and MRR within each contract. It recomputes what the product does, so its first
rows must match `eval_retrieval`'s (BM25, dense, hybrid at fusion weight 0.25), then ideas the product does not use:
- `sentences`: each passage scored by its best sentence (the sentences embedded here, cached beside the store);
- `feedback K`: the query replaced by the mean vector of the portfolio's first K hybrid hits (pseudo-relevance
  feedback; no label is read);
- each of them fused with BM25 as the product fuses (reciprocal rank fusion, k = 60) at weights 0.25, 0.5 and 1.

usage: retrieval_probe.py STORE CUAD_DIR MODEL_DIR even|odd
Needs numpy, onnxruntime and tokenizers (bench/embed.sh's venv has them).
"""
import collections
import csv
import json
import math
import os
import re
import sqlite3
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

store, cuad, model_dir, half = sys.argv[1:5]
labels = [json.loads(line) for line in open(os.path.join(cuad, "labels.jsonl")) if line.strip()]
records = [r for i, r in enumerate(labels) if (i % 2 == 0) == (half == "even")]
categories = []
with open(os.path.join(cuad, "category_descriptions.csv"), encoding="utf-8-sig") as f:
    rows = csv.reader(f)
    next(rows)
    for row in rows:
        if len(row) >= 2 and row[0].strip().startswith("Category:"):
            categories.append((row[0].split(":", 1)[1].strip(), row[1].split(":", 1)[1].strip()))

db = sqlite3.connect(store)
documents = {name: id for id, name in db.execute("select id, name from documents")}
model_id = db.execute("select model_id from passage_vectors group by model_id order by max(rowid) desc").fetchone()[0]

# The word index: FTS5's own tokens of every passage, BM25 as FTS5 defines it.
db.execute("create virtual table temp.vocab using fts5vocab(main, passages_fts, 'instance')")
postings, lengths = collections.defaultdict(collections.Counter), collections.Counter()
for term, passage in db.execute("select term, doc from temp.vocab where col = 'text'"):
    postings[term][passage] += 1
    lengths[passage] += 1
count, average = len(lengths), sum(lengths.values()) / len(lengths)
STOPWORDS = set("""a an and any are as at be by can do does for from has have how if in is it its of on or our shall
that the their there this to under was we what when where which who will with would you your contract contracts
agreement agreements clause say says""".split())
stemmer = sqlite3.connect(":memory:")
stemmer.execute("create virtual table q using fts5(t, tokenize = 'porter unicode61')")
stemmer.execute("create virtual table qv using fts5vocab(q, 'instance')")


def query_terms(text):
    words = []
    for word in re.split(r"[^\w]+", text.lower()):
        if len(word) >= 2 and word not in STOPWORDS and word not in words:
            words.append(word)
    stemmer.execute("delete from q")
    stemmer.execute("insert into q (rowid, t) values (1, ?)", (" ".join(words[:16]),))
    return sorted({term for (term,) in stemmer.execute("select term from qv")})


def bm25(terms, passages):
    scores = collections.Counter()
    for term in terms:
        holding = postings.get(term, {})
        if not holding:
            continue
        weight = max(1e-6, math.log((count - len(holding) + 0.5) / (len(holding) + 0.5)))
        for p in passages:
            f = holding.get(p, 0)
            if f:
                scores[p] += weight * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * lengths[p] / average))
    return [p for p, _ in sorted(scores.items(), key=lambda x: (-x[1], x[0]))]


def fuse(lists):
    scores, best = {}, {}
    for ranked, weight in lists:
        for rank, p in enumerate(ranked[:50]):
            scores[p] = scores.get(p, 0) + weight / (61 + rank)
            best[p] = min(best.get(p, 99), rank)
    return [p for p, _ in sorted(scores.items(), key=lambda x: (-x[1], best[x[0]], x[0]))]


tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
tokenizer.enable_truncation(256)
tokenizer.enable_padding()
options = ort.SessionOptions()
options.intra_op_num_threads = os.cpu_count() or 1
session = ort.InferenceSession(os.path.join(model_dir, "model.onnx"), options, providers=["CPUExecutionProvider"])


def embed(texts):
    # One text a pass, as the product: the model quantizes its activations per pass.
    out = np.zeros((len(texts), 384), np.float32)
    for k in range(len(texts)):
        chunk = [k]
        enc = tokenizer.encode_batch([texts[i] for i in chunk])
        ids = np.array([e.ids for e in enc], np.int64)
        mask = np.array([e.attention_mask for e in enc], np.int64)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        mean = (hidden * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1)
        out[chunk] = mean / np.maximum(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12)
    return out


vectors = {}
for passage, blob in db.execute("select passage_id, vector from passage_vectors where model_id = ?", (model_id,)):
    vectors[passage] = np.frombuffer(blob[4:], np.int8).astype(np.float32) * np.frombuffer(blob[:4], "<f4")[0]
queries = embed([d for _, d in categories])

# Sentences of this half's passages (cut at sentence ends, lines and semicolons; pieces under 40 characters joined).
names = [r["contract"] for r in records if r["contract"] in documents]
cache = os.path.join(os.path.dirname(store), f"probe-sentences-{model_id.replace('@', '-')}-{half}.npz")
split = re.compile(r"(?<=[.;:])\s+|\n+")
if os.path.exists(cache):
    saved = np.load(cache)
    sentence_vectors, owners = saved["vectors"], saved["owners"]
else:
    pieces, owners = [], []
    for name in names:
        for passage, text in db.execute("select id, text from passages where document_id = ?", (documents[name],)):
            merged = []
            for part in (p.strip() for p in split.split(text) if p and p.strip()):
                if merged and (len(part) < 40 or len(merged[-1]) < 40):
                    merged[-1] += " " + part
                else:
                    merged.append(part)
            pieces += merged
            owners += [passage] * len(merged)
    sentence_vectors, owners = embed(pieces), np.array(owners)
    np.savez(cache, vectors=sentence_vectors, owners=owners)
by_passage = collections.defaultdict(list)
for i, p in enumerate(owners):
    by_passage[int(p)].append(i)

# Pseudo-relevance feedback: the mean vector of the portfolio's first K hybrid hits for each description.
everything = sorted(vectors)
matrix = np.stack([vectors[p] for p in everything])
feedback = {}
for qi, (_, description) in enumerate(categories):
    words = bm25(query_terms(description), lengths.keys())[:50]
    meaning = [everything[i] for i in np.argsort(-(matrix @ queries[qi]))[:50]]
    hits = fuse([(words, 1), (meaning, 0.25)])
    for k in (5, 20):
        v = np.mean([vectors[p] for p in hits[:k]], axis=0)
        feedback[(qi, k)] = v / np.linalg.norm(v)

results = collections.defaultdict(list)
for record in records:
    if record["contract"] not in documents:
        continue
    passages = list(db.execute("select id, start_char, end_char from passages where document_id = ? order by start_char",
                               (documents[record["contract"]],)))
    ids = [p[0] for p in passages]
    own = np.stack([vectors[p] for p in ids])
    rows = [i for p in ids for i in by_passage[p]]
    sentence_owner, sentences = owners[rows], sentence_vectors[rows]
    for qi, (category, description) in enumerate(categories):
        spans = record["clauses"].get(category, [])
        relevant = {p for p, a, b in passages if any(a < s["end"] and s["start"] < b for s in spans)}
        if not relevant:
            continue
        lists = {"BM25": bm25(query_terms(description), ids)}
        lists["dense"] = [ids[i] for i in np.argsort(-(own @ queries[qi]), kind="stable")]
        best = {}
        for p, score in zip(sentence_owner, sentences @ queries[qi]):
            best[int(p)] = max(best.get(int(p), -9), score)
        lists["sentences"] = sorted(best, key=lambda p: -best[p])
        for k in (5, 20):
            lists[f"feedback {k}"] = [ids[i] for i in np.argsort(-(own @ feedback[(qi, k)]), kind="stable")]
        for name in ["dense", "sentences", "feedback 5", "feedback 20"]:
            for weight in (0.25, 0.5, 1.0):
                lists[f"BM25 + {name} ({weight})"] = fuse([(lists["BM25"], 1), (lists[name], weight)])
        for name, ranked in lists.items():
            recall = len([p for p in ranked[:3] if p in relevant]) / min(3, len(relevant))
            rr = next((1 / (i + 1) for i, p in enumerate(ranked[:10]) if p in relevant), 0)
            results[name].append((recall, rr))
print(f"model {model_id}, half {half}")
for name, values in results.items():
    print(f"{name:30s} pairs {len(values)}  recall@3 {np.mean([r for r, _ in values]):.3f}  "
          f"MRR {np.mean([m for _, m in values]):.3f}")
