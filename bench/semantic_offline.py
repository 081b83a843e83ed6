#!/usr/bin/env python3
"""Screen an idea for the semantic side offline, in seconds, before building it.

Reads the vectors of `patina snapshot create` files (the daemon's own chunk embeddings), embeds
each labelled question with the same ONNX model, ranks files by their best chunk's cosine, and
prints nDCG@10 per set: the semantic oracle without the daemon's ranking rules (roles, sureness,
coherence). A question rewrite (`--rewrite module:function`, a function from the question's text
to the text embedded) is measured beside the plain question.

    # one snapshot per set, named SET.snap, made in each set's repository at its commit:
    (cd /work/repos/langs/mockk && patina snapshot create -o /tmp/snaps/mockk.snap)
    python3 bench/semantic_offline.py --snapshots /tmp/snaps --sets mockk,koin,cobra \
        [--rewrite my_idea:rewrite]

`--comments REPOS` measures instead a chunk-side change: each chunk with at least eight words of
whole-line comments or docstrings gets the normalised sum of its vector and its comments' vector
(the thirty-eighth session's comment blend; REPOS holds each set's checkout, as `bench/sets.py`'s
`--repos`).

A gain here is a reason to build, not a result: the thirty-sixth session's question-frame rewrite
gained +0.009 here and lost in the daemon, where the role priors already did what it did and the
lower cosines moved the sureness that weighs the oracles; the thirty-eighth session's comment
blend gained +0.025 here, +0.006 for the daemon's semantic oracle and −0.002 for its default
(bench/RESULTS.md). Measure the built change with `bench/sets.py`.
"""

import argparse
import importlib
import json
import math
import re
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import models_dir  # noqa: E402

HERE = Path(__file__).resolve().parent
MAGIC = b"PATINA-SNAPSHOT\n"
MAX_TOKENS = 256  # what the daemon embeds at most (crates/embed)


def read_snapshot(path):
    """The chunk paths, vectors and (start, end, parent, symbol) of a snapshot's embedded chunks
    (format 1, crates/index/src/snapshot.rs)."""
    import numpy as np

    b = Path(path).read_bytes()
    if not b.startswith(MAGIC):
        raise SystemExit(f"{path}: not a Patina snapshot")
    at = b.index(b"\n", len(MAGIC))
    header = json.loads(b[len(MAGIC):at])
    if header.get("format") != 1:
        raise SystemExit(f"{path}: snapshot format {header.get('format')}, this reads 1")
    dim = header["dim"]
    at += 1
    (count,) = struct.unpack_from("<Q", b, at)
    at += 8

    def string():
        nonlocal at
        (n,) = struct.unpack_from("<I", b, at)
        at += 4
        s = b[at:at + n].decode()
        at += n
        return s

    paths, vectors, spans = [], [], []
    for _ in range(count):
        at += 8  # id
        path = string()
        start, end = struct.unpack_from("<II", b, at)
        at += 8
        parent, symbol, _ = string(), string(), string()  # parent, symbol, hash
        has_vector = b[at]
        at += 1
        if has_vector:
            paths.append(path)
            vectors.append(np.frombuffer(b, dtype="<f4", count=dim, offset=at))
            spans.append((start, end, parent, symbol))
            at += 4 * dim
    return paths, np.array(vectors), spans


# Whole-line comment markers (any language: a screen, not the daemon's rules) and docstrings.
COMMENT = re.compile(r"^\s*(///?|/\*\*?|\*/?|#(?![!\[]|include|define|if|endif|else|region|endregion|pragma|import)|--|%+|;;|\(\*)\s?")


def comment_text(lines):
    """A chunk's whole-line comments and triple-quoted docstrings, joined by spaces."""
    out, in_doc = [], False
    for line in lines:
        st = line.strip()
        if st.startswith('"""') or st.endswith('"""') and in_doc:
            if st.count('"""') == 1:
                in_doc = not in_doc
            t = st.replace('"""', "").replace("@moduledoc", "").replace("@doc", "").strip()
            if t:
                out.append(t)
        elif in_doc:
            out.append(st)
        elif m := COMMENT.match(line):
            t = line[m.end():].strip().rstrip("*/").strip()
            if t:
                out.append(t)
    return " ".join(out)


def blend_comments(repo, paths, m, spans, embed):
    """Each commented chunk's vector summed with its comments' vector, normalised."""
    import numpy as np

    files, out = {}, m.copy()
    for i, (p, (start, end, parent, symbol)) in enumerate(zip(paths, spans)):
        if p not in files:
            try:
                files[p] = (Path(repo) / p).read_text(errors="replace").split("\n")
            except OSError:
                files[p] = []
        text = comment_text(files[p][max(0, start - 1):end])
        if len(text.split()) >= 8:
            v = m[i] + embed(f"{p} {parent + '::' + symbol if parent else symbol}\n{text}")
            out[i] = v / np.linalg.norm(v)
    return out


def embedder():
    """The question embedder: `scripts/model/verify.py`'s, which embeds as the daemon does
    (truncation 256, mean pooling over the mask, L2 norm), on the model `scripts/setup-model`
    installed; one text at a time."""
    models = models_dir()
    sys.path.insert(0, str(models / ".pytools"))
    sys.path.insert(0, str(HERE.parent / "scripts" / "model"))
    from tokenizers import Tokenizer
    from verify import Embedder

    model = models / "all-MiniLM-L6-v2"
    tok = Tokenizer.from_file(str(model / "tokenizer.json"))
    tok.enable_truncation(max_length=MAX_TOKENS)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    e = Embedder(model / "model.onnx", tok, threads=1)
    return lambda text: e.embed([text])[0]


def files_by_best_chunk(paths, scores):
    best = {}
    for p, s in zip(paths, scores):
        if s > best.get(p, -2.0):
            best[p] = s
    return sorted(best, key=lambda p: -best[p])


def ndcg10(ranked, relevant):
    gain = sum(1 / math.log2(i + 2) for i, p in enumerate(ranked[:10]) if p in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    return gain / ideal if ideal else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snapshots", required=True, help="folder of SET.snap files")
    ap.add_argument("--sets", required=True, help="comma-separated set names (bench/questions/SET.jsonl)")
    ap.add_argument("--rewrite", help="module:function rewriting a question before it is embedded")
    ap.add_argument("--comments", metavar="REPOS",
                    help="blend each commented chunk's comments into its vector (REPOS/{own,langs}/SET)")
    a = ap.parse_args()
    rewrite = None
    if a.rewrite:
        module, func = a.rewrite.split(":")
        sys.path.insert(0, ".")
        rewrite = getattr(importlib.import_module(module), func)
    embed = embedder()
    rows = []
    for name in a.sets.split(","):
        paths, m, spans = read_snapshot(Path(a.snapshots) / f"{name}.snap")
        blended = None
        if a.comments:
            repo = next((d for d in (Path(a.comments) / k / name for k in ("own", "langs")) if d.exists()), None)
            if repo is None:
                raise SystemExit(f"{name}: no checkout at {a.comments}/own/{name} or {a.comments}/langs/{name}")
            blended = blend_comments(repo, paths, m, spans, embed)
        questions = [json.loads(line) for line in open(HERE / "questions" / f"{name}.jsonl")]
        plain, changed = [], []
        for q in questions:
            relevant = {r["path"] for r in q["relevant"]}
            qv = embed(q["query"])
            plain.append(ndcg10(files_by_best_chunk(paths, m @ qv), relevant))
            if rewrite:
                qv = embed(rewrite(q["query"]))
            if rewrite or blended is not None:
                chunks = m if blended is None else blended
                changed.append(ndcg10(files_by_best_chunk(paths, chunks @ qv), relevant))
        row = [name, sum(plain) / len(plain)] + ([sum(changed) / len(changed)] if changed else [])
        rows.append(row)
        print(f"{name:<14} {row[1]:.3f}" + (f"  changed {row[2]:.3f} ({row[2] - row[1]:+.3f})" if changed else ""),
              flush=True)
    if len(rows) > 1:
        mean = [sum(r[i] for r in rows) / len(rows) for i in range(1, len(rows[0]))]
        print(f"{'mean':<14} {mean[0]:.4f}" + (f"  changed {mean[1]:.4f}" if len(mean) > 1 else ""))

if __name__ == "__main__":
    main()
