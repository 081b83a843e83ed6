#!/usr/bin/env python3
"""Build an ONNX graph of a BERT encoder (all-MiniLM-L6-v2) straight from safetensors.

No torch: the weights are read with numpy from ``model.safetensors`` and the
graph is written node by node with ``onnx.helper``.

    python3 convert.py --model-dir DIR --out model.onnx

Graph contract (what Patina's embedder feeds and reads):
  inputs   input_ids, attention_mask, token_type_ids   int64 [batch, seq]
  output   last_hidden_state                           float32 [batch, seq, hidden]
Pooling (mean over the attention mask, L2 normalisation) is left to the caller.

Layout per encoder layer N mirrors the Hugging Face BertModel; every MatMul is
named after its weight (e.g. ``encoder.layer.N.output.dense/MatMul``) so that
quantize.py can select nodes by name.  GELU is the exact erf form.

Position embeddings are a Slice of the table whose 1-D `ends` comes from
Shape(input_ids).  Do not use Gather(table, Range(0, seq)): onnxruntime 1.31's
extended/full graph optimisation rewrites it into a Slice with 2-D starts that
fails at run time ("Starts must be a 1-D array").

The output is deterministic: the same inputs give a byte-identical file.
"""

import argparse
import json
import math
import struct
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def load_safetensors(path):
    """Read every tensor of a safetensors file into numpy (little-endian, no copies kept)."""
    dtypes = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}
    raw = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        dt = np.dtype(dtypes[info["dtype"]])
        arr = np.frombuffer(raw, dtype=dt, count=(end - start) // dt.itemsize, offset=8 + n + start)
        tensors[name] = arr.reshape(info["shape"])
    return tensors


class GraphBuilder:
    """Tiny helper that names nodes/values and collects initializers."""

    def __init__(self, weights):
        self.weights = weights
        self.nodes, self.inits, self._seen = [], [], set()

    def init(self, name, array):
        if name not in self._seen:
            self._seen.add(name)
            self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def weight(self, name, transpose=False):
        w = self.weights[name].astype(np.float32)
        return self.init(name + ("_T" if transpose else ""), w.T if transpose else w)

    def const(self, name, value, dtype=np.float32):
        return self.init(name, np.array(value, dtype=dtype))

    def op(self, op_type, inputs, name, **attrs):
        self.nodes.append(helper.make_node(op_type, inputs, [name], name=name, **attrs))
        return name

    def linear(self, x, prefix):
        """x @ W^T + b for a Hugging Face Linear named `prefix`."""
        y = self.op("MatMul", [x, self.weight(prefix + ".weight", transpose=True)], prefix + "/MatMul")
        return self.op("Add", [y, self.weight(prefix + ".bias")], prefix + "/Add")

    def layer_norm(self, x, prefix, eps):
        return self.op("LayerNormalization", [x, self.weight(prefix + ".weight"), self.weight(prefix + ".bias")],
                       prefix + "/LayerNorm", axis=-1, epsilon=eps)


def build(weights, cfg):
    g = GraphBuilder(weights)
    hidden, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    head_dim, eps = hidden // heads, cfg["layer_norm_eps"]
    if cfg.get("hidden_act", "gelu") != "gelu" or cfg.get("position_embedding_type", "absolute") != "absolute":
        raise SystemExit("convert: only BERT with exact GELU and absolute positions is supported")

    # Embeddings: word + position + token type, then LayerNorm.
    # Positions 0..seq-1 are the first `seq` rows of the table (see module docstring).
    seq_len = g.op("Slice", [g.op("Shape", ["input_ids"], "emb/shape"), g.const("c/one_1d", [1], np.int64),
                             g.const("c/two_1d", [2], np.int64)], "emb/seq_len")
    word = g.op("Gather", [g.weight("embeddings.word_embeddings.weight"), "input_ids"], "emb/word", axis=0)
    pos = g.op("Slice", [g.weight("embeddings.position_embeddings.weight"), g.const("c/zero_1d", [0], np.int64),
                         seq_len, g.const("c/zero_1d", [0], np.int64)], "emb/pos")
    typ = g.op("Gather", [g.weight("embeddings.token_type_embeddings.weight"), "token_type_ids"], "emb/type", axis=0)
    x = g.op("Add", [g.op("Add", [word, pos], "emb/word_pos"), typ], "emb/sum")
    x = g.layer_norm(x, "embeddings.LayerNorm", eps)

    # Additive attention mask [batch, 1, 1, seq]: 0 where attended, -10000 where padded.
    mask = g.op("Cast", ["attention_mask"], "mask/float", to=TensorProto.FLOAT)
    mask = g.op("Unsqueeze", [mask, g.const("c/axes_1_2", [1, 2], np.int64)], "mask/4d")
    mask = g.op("Mul", [g.op("Sub", [g.const("c/one_f", 1.0), mask], "mask/inv"), g.const("c/neg", -10000.0)],
                "mask/additive")

    split_shape = g.const("c/split_heads", [0, 0, heads, head_dim], np.int64)
    merge_shape = g.const("c/merge_heads", [0, 0, hidden], np.int64)
    scale = g.const("c/scale", 1.0 / math.sqrt(head_dim))
    inv_sqrt2 = g.const("c/inv_sqrt2", 1.0 / math.sqrt(2.0))
    half, one = g.const("c/half", 0.5), g.const("c/one_f", 1.0)

    for n in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{n}."

        def heads_of(kind, perm):
            y = g.linear(x, p + "attention.self." + kind)
            y = g.op("Reshape", [y, split_shape], p + f"attention.self.{kind}/split")
            return g.op("Transpose", [y], p + f"attention.self.{kind}/transpose", perm=perm)

        q = heads_of("query", [0, 2, 1, 3])  # [b, h, s, d]
        k = heads_of("key", [0, 2, 3, 1])    # [b, h, d, s]
        v = heads_of("value", [0, 2, 1, 3])  # [b, h, s, d]
        scores = g.op("MatMul", [q, k], p + "attention.self/scores")
        scores = g.op("Mul", [scores, scale], p + "attention.self/scaled")
        scores = g.op("Add", [scores, mask], p + "attention.self/masked")
        probs = g.op("Softmax", [scores], p + "attention.self/probs", axis=-1)
        ctx = g.op("MatMul", [probs, v], p + "attention.self/context")
        ctx = g.op("Transpose", [ctx], p + "attention.self/context_t", perm=[0, 2, 1, 3])
        ctx = g.op("Reshape", [ctx, merge_shape], p + "attention.self/merge")
        attn = g.linear(ctx, p + "attention.output.dense")
        x = g.layer_norm(g.op("Add", [attn, x], p + "attention.output/residual"), p + "attention.output.LayerNorm", eps)

        h = g.linear(x, p + "intermediate.dense")
        erf = g.op("Erf", [g.op("Mul", [h, inv_sqrt2], p + "intermediate/gelu_scale")], p + "intermediate/gelu_erf")
        gate = g.op("Mul", [g.op("Add", [erf, one], p + "intermediate/gelu_add"), half], p + "intermediate/gelu_half")
        h = g.op("Mul", [h, gate], p + "intermediate/gelu")
        out = g.linear(h, p + "output.dense")
        x = g.layer_norm(g.op("Add", [out, x], p + "output/residual"), p + "output.LayerNorm", eps)

    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))

    dims = ["batch", "seq"]
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, dims)
              for name in ("input_ids", "attention_mask", "token_type_ids")]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dims + [hidden])
    graph = helper.make_graph(g.nodes, "bert_encoder", inputs, [output], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="patina-convert", producer_version="1")
    model.ir_version = 8  # readable by onnxruntime >= 1.10
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-dir", required=True, type=Path, help="holds model.safetensors and config.json")
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args()

    cfg = json.loads((args.model_dir / "config.json").read_text())
    model = build(load_safetensors(args.model_dir / "model.safetensors"), cfg)
    onnx.checker.check_model(model)
    tmp = args.out.with_name(args.out.name + ".tmp")
    onnx.save_model(model, str(tmp))
    tmp.replace(args.out)


if __name__ == "__main__":
    main()
