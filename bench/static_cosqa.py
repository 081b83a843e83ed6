"""CoSQA dev MRR@10 of a static token table (scripts/model/distil.py). A text's static vector is the
L2-normalised sum of its first 254 WordPiece tokens' rows (weights baked in, as the daemon reads
static.bin); documents are embedded as the daemon embeds a chunk (path, newline, text). Two modes:

  static query   the query's static vector against the static documents
  model query    the model's own vector of the query (mean pooling, L2 norm: what the daemon
                 compares) against the static documents; meaningful for version-2 tables, which
                 are fitted to the model's space

usage: python3 static_cosqa.py MODEL_DIR static.bin [--precision fp32|int8] [--full] [--eval DIR]
  --full   also the model's own document vectors (model vs model; ~2 min on 2 cores)
  --eval   the CoSQA set (default: ../shared/eval/cosqa beside the checkout)
Documents carry the daemon's context line only in part: the path (CoSQA's functions name
themselves, so `Semantic::input` adds no symbol to them).
needs numpy, tokenizers, onnxruntime: PYTHONPATH=<models>/.pytools"""
import argparse, json, struct
import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from pathlib import Path

ap = argparse.ArgumentParser(usage=__doc__)
ap.add_argument("model_dir"); ap.add_argument("table")
ap.add_argument("--precision", choices=["fp32", "int8"], default="fp32")
ap.add_argument("--full", action="store_true")
ap.add_argument("--eval", default=str(Path(__file__).resolve().parents[2] / "shared/eval/cosqa"))
args = ap.parse_args()
EVAL = args.eval

tok = Tokenizer.from_file(f"{args.model_dir}/tokenizer.json"); tok.no_truncation(); tok.no_padding()
raw = open(args.table, "rb").read()
assert raw[:4] == b"PSTV", "not a static table"
version, rows, dims = struct.unpack("<III", raw[4:16])
T = np.frombuffer(raw[16:], dtype="<f2").reshape(rows, dims).astype(np.float32)

def static(texts):
    out = np.zeros((len(texts), dims), np.float32)
    for i, e in enumerate(tok.encode_batch(texts, add_special_tokens=False)):
        v = T[e.ids[:254]].sum(axis=0)
        out[i] = v / (np.linalg.norm(v) + 1e-12)
    return out

def model(texts, batch=32):
    opts = ort.SessionOptions(); opts.intra_op_num_threads = 2
    name = "model.onnx" if args.precision == "fp32" else "model.int8.onnx"
    sess = ort.InferenceSession(f"{args.model_dir}/{name}", opts, providers=["CPUExecutionProvider"])
    mtok = Tokenizer.from_file(f"{args.model_dir}/tokenizer.json"); mtok.no_padding(); mtok.enable_truncation(256)
    enc = mtok.encode_batch(texts); order = np.argsort([len(e.ids) for e in enc])
    out = np.zeros((len(texts), 384), np.float32)
    for s in range(0, len(texts), batch):
        idx = order[s:s + batch]; L = max(len(enc[i].ids) for i in idx)
        ids = np.zeros((len(idx), L), np.int64); m = np.zeros_like(ids)
        for r, i in enumerate(idx):
            ids[r, :len(enc[i].ids)] = enc[i].ids; m[r, :len(enc[i].ids)] = 1
        h = sess.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": m, "token_type_ids": np.zeros_like(ids)})[0]
        v = (h * m[:, :, None]).sum(1) / m.sum(1, keepdims=True)
        out[idx] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out

def mrr10(Q, D):
    top = np.argsort(-(Q @ D.T), axis=1)[:, :10]; total = 0.0
    for qi, row in enumerate(top):
        for k, j in enumerate(row):
            if paths[j] in rel[qi]: total += 1 / (k + 1); break
    return total / len(top)

corpus = [json.loads(l) for l in open(f"{EVAL}/corpus.jsonl")]
qs = [json.loads(l) for l in open(f"{EVAL}/dev.jsonl")]
paths = [c["path"] for c in corpus]
rel = [{r["path"] for r in q["relevant"]} for q in qs]
docs = [c["path"] + "\n" + c["text"] for c in corpus]
D = static(docs)
Qm = model([q["query"] for q in qs])
print("table v%d, %d x %d; %d queries, %d documents" % (version, rows, dims, len(qs), len(docs)))
print("static query vs static documents  MRR@10 %.4f" % mrr10(static([q["query"] for q in qs]), D))
print("model query  vs static documents  MRR@10 %.4f (%s)" % (mrr10(Qm, D), args.precision))
if args.full:
    print("model query  vs model documents   MRR@10 %.4f (%s)" % (mrr10(Qm, model(docs)), args.precision))
