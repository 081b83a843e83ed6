#!/usr/bin/env python3
"""Check the converted encoder graphs against reference embeddings.

    python3 verify.py --model-dir DIR [--reference reference.json]
                      [--corpus FILE.jsonl|DIR] [--limit 200] [--bench]
                      [--ort-lib DIR/lib/libonnxruntime.so] [--json-out figures.json]

DIR holds tokenizer.json, model.onnx and (optionally) model.int8.onnx.
Embeddings are computed as Patina does: tokenizer truncation 256, padding to
the longest sequence of the batch, mean pooling over the attention mask, L2
normalisation; onnxruntime on the CPU with one intra-op thread.

Checks (exit status 1 if any fails):
  * fp32 vs reference.json: cosine >= 0.999 for every sentence;
  * int8 vs fp32: mean cosine >= 0.99 over the reference sentences plus the
    corpus chunks (a JSON-lines file with a "text" field, or a directory of
    Python sources whose function definitions are used as chunks);
  * --ort-lib: the shared library loads and reports its version.
--bench adds informational throughput figures (chunks/s, 1 thread).
"""

import argparse
import ast
import ctypes
import json
import sys
import time
from pathlib import Path

import numpy as np

FP32_MIN_COSINE = 0.999
INT8_MEAN_COSINE = 0.99
BATCH = 16


def log(msg):
    print(f"verify: {msg}", file=sys.stderr)


def check_ort_lib(path):
    """dlopen libonnxruntime and return its version string (what `ort` will do)."""
    class OrtApiBase(ctypes.Structure):
        _fields_ = [("GetApi", ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_uint32)),
                    ("GetVersionString", ctypes.CFUNCTYPE(ctypes.c_char_p))]

    lib = ctypes.CDLL(str(path))
    lib.OrtGetApiBase.restype = ctypes.POINTER(OrtApiBase)
    base = lib.OrtGetApiBase().contents
    if not base.GetApi(17):
        raise RuntimeError("OrtGetApi(17) returned NULL")
    return base.GetVersionString().decode()


def load_corpus(path, limit):
    path = Path(path)
    if path.is_file():
        with path.open() as f:
            texts = [json.loads(line)["text"] for line in f if line.strip()]
        return texts[:limit]
    chunks = []
    for src in sorted(path.rglob("*.py")):
        code = src.read_text(errors="replace")
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                seg = ast.get_source_segment(code, node) or ""
                if 200 <= len(seg) <= 4000:
                    chunks.append(seg)
                    if len(chunks) >= limit:
                        return chunks
    return chunks


class Embedder:
    def __init__(self, model_path, tokenizer, threads):
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(model_path), so, providers=["CPUExecutionProvider"])
        self.tokenizer = tokenizer

    def embed(self, texts):
        enc = self.tokenizer.encode_batch(list(texts))
        feed = {"input_ids": np.array([e.ids for e in enc], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64)}
        (hidden,) = self.session.run(["last_hidden_state"], feed)
        mask = feed["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    def embed_all(self, texts, batch=BATCH):
        """Embed in length-sorted batches; returns rows in the input order and the wall time."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        t0 = time.perf_counter()
        for s in range(0, len(order), batch):
            idx = order[s : s + batch]
            out[idx] = self.embed([texts[i] for i in idx])
        return out, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-dir", required=True, type=Path)
    ap.add_argument("--reference", type=Path, default=Path(__file__).with_name("reference.json"))
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--ort-lib", type=Path)
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args()

    figures, failures = {}, []
    if args.ort_lib:  # before onnxruntime's own copy is imported
        try:
            figures["ort_lib"] = {"file": args.ort_lib.name, "version": check_ort_lib(args.ort_lib)}
            log(f"{args.ort_lib.name} loads, version {figures['ort_lib']['version']}")
        except (OSError, RuntimeError, AttributeError) as e:
            failures.append(f"cannot load {args.ort_lib}: {e}")

    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(args.model_dir / "tokenizer.json"))
    tok.enable_truncation(max_length=256)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")  # no length: pad to the batch's longest

    ref = json.loads(args.reference.read_text())["sentences"]
    texts = [r["text"] for r in ref]
    want = np.array([r["embedding"] for r in ref], dtype=np.float64)
    want /= np.linalg.norm(want, axis=1, keepdims=True)

    fp32 = Embedder(args.model_dir / "model.onnx", tok, args.threads)
    got = fp32.embed(texts)  # one padded batch: also exercises the attention mask
    cos = (got * want).sum(axis=1)
    figures["fp32_vs_reference"] = {"sentences": len(texts), "min_cosine": round(float(cos.min()), 7)}
    log(f"fp32 vs reference: min cosine {cos.min():.7f} over {len(texts)} sentences")
    if cos.min() < FP32_MIN_COSINE:
        failures.append(f"fp32 cosine {cos.min():.6f} < {FP32_MIN_COSINE}")

    chunks = load_corpus(args.corpus, args.limit) if args.corpus else []
    int8_path = args.model_dir / "model.int8.onnx"
    if int8_path.exists():
        int8 = Embedder(int8_path, tok, args.threads)
        items = texts + chunks
        a, t_fp32 = fp32.embed_all(items)
        b, t_int8 = int8.embed_all(items)
        cos = (a * b).sum(axis=1)
        figures["int8_vs_fp32"] = {"texts": len(items), "corpus": str(args.corpus) if args.corpus else None,
                                   "mean_cosine": round(float(cos.mean()), 5), "min_cosine": round(float(cos.min()), 5)}
        log(f"int8 vs fp32: mean cosine {cos.mean():.5f}, min {cos.min():.5f} over {len(items)} texts")
        if cos.mean() < INT8_MEAN_COSINE:
            failures.append(f"int8 mean cosine {cos.mean():.4f} < {INT8_MEAN_COSINE}")
        if args.bench and chunks:
            bench = {"threads": args.threads, "chunks": len(chunks)}
            for name, emb in (("fp32", fp32), ("int8", int8)):
                emb.embed(chunks[:4])  # warm-up
                t0 = time.perf_counter()
                for c in chunks:
                    emb.embed([c])
                bench[f"{name}_batch1_chunks_per_s"] = round(len(chunks) / (time.perf_counter() - t0), 1)
                _, t = emb.embed_all(chunks)
                bench[f"{name}_batch{BATCH}_sorted_chunks_per_s"] = round(len(chunks) / t, 1)
            figures["throughput"] = bench
            log("throughput " + json.dumps(bench))

    if args.json_out:
        args.json_out.write_text(json.dumps(figures, indent=1) + "\n")
    for f in failures:
        log("FAIL " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
