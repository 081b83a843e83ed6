"""Distil all-MiniLM-L6-v2 into a static token-embedding table (Patina's first semantic pass).

Every WordPiece token of the vocabulary is run through the ONNX model alone (`[CLS] token [SEP]`,
mean-pooled as the sentence recipe does), the table is centred, and each row is weighted by an
estimate of how informative the token is (SIF, a/(a + p), a = 1e-4, with p from a Zipf law over
the vocabulary's order, which for BERT's WordPiece vocabulary roughly follows frequency). PCA to
256 dimensions is optional (`--dims`): it halves the table and cost 0.01-0.03 MRR@10 on CoSQA.
A text's static vector is then the L2-normalised mean of its tokens' rows: microseconds per
chunk, no model run.

    python3 distil.py --model-dir DIR --out DIR/static.bin

Output: a little-endian file `PSTV` magic, u32 version, u32 rows, u32 dims, then rows × dims
float16. Needs numpy, onnxruntime, tokenizers (the pinned wheels of setup-model).
"""

import argparse
import json
import struct
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

MAGIC = b"PSTV"
VERSION = 1
SIF_A = 1e-4
BATCH = 1024


def token_vectors(model_dir: str) -> np.ndarray:
    tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    vocab = tok.get_vocab_size(with_added_tokens=True)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    sess = ort.InferenceSession(f"{model_dir}/model.onnx", opts, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    out = np.zeros((vocab, 384), dtype=np.float32)
    for start in range(0, vocab, BATCH):
        ids = np.arange(start, min(start + BATCH, vocab), dtype=np.int64)
        n = len(ids)
        input_ids = np.stack([np.full(n, cls), ids, np.full(n, sep)], axis=1).astype(np.int64)
        feed = {"input_ids": input_ids, "attention_mask": np.ones_like(input_ids)}
        if "token_type_ids" in names:
            feed["token_type_ids"] = np.zeros_like(input_ids)
        hidden = sess.run(["last_hidden_state"], feed)[0]
        out[start : start + n] = hidden.mean(axis=1)
    return out


def distil(vectors: np.ndarray, dims: int = 0) -> np.ndarray:
    reduced = vectors - vectors.mean(axis=0)
    if dims:
        _, _, vt = np.linalg.svd(reduced, full_matrices=False)
        reduced = reduced @ vt[:dims].T
    rank = np.arange(1, len(reduced) + 1, dtype=np.float64)
    p = (1.0 / rank) / (1.0 / rank).sum()
    weight = SIF_A / (SIF_A + p)
    return (reduced * weight[:, None]).astype(np.float16)


def write(table: np.ndarray, path: str) -> None:
    with open(path, "wb") as f:
        f.write(MAGIC + struct.pack("<III", VERSION, table.shape[0], table.shape[1]))
        f.write(table.astype("<f2").tobytes())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dims", type=int, default=0, help="PCA to this many dimensions (0: keep 384)")
    args = ap.parse_args()
    table = distil(token_vectors(args.model_dir), args.dims)
    write(table, args.out)
    print(json.dumps({"rows": table.shape[0], "dims": table.shape[1]}), file=sys.stderr)


if __name__ == "__main__":
    main()
