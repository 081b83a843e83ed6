"""Fit a static token table to all-MiniLM-L6-v2's own chunk vectors (Patina's first semantic pass).

A text's static vector is the L2-normalised sum of its WordPiece tokens' rows (no [CLS]/[SEP], the
first 254 pieces, as many as the model reads): microseconds per chunk, no model run. The table is
fitted so that this vector approximates the model's own vector of the same text (mean pooling, L2
norm), i.e. it lives in the model's space: a model query vector can be compared with static chunk
vectors directly, and static vectors can sit in the vector index until the model's replace them
(Model2Vec / tokenlearn-style regression):

1. Fitting corpus: a fixed, named one, the same bytes on every machine: the pinned packages of
   `corpus.json` beside this script (Python wheels from PyPI, Rust crates from crates.io, C
   sources bundled in crates, JavaScript/TypeScript tarballs from npm), each downloaded once into
   `--cache`, checked against its sha256 and read from the archive (an entry's `include` keeps a
   prefix of its paths). None of them is a project Patina is evaluated on. Test directories and
   locale data are left out. Files are cut where a code chunker would (a definition line after
   ≥ 8 lines, a blank line after ≥ 40, at most 60 lines) and a chunk is embedded as the daemon
   embeds one: `<relative path>\\n<chunk text>`. `--chunks` of them are drawn deterministically
   (a hash of path and position) with fixed language shares; fewer than 1,000 chunks in all is an
   error. `--corpus DIR` adds a directory of this machine (then the table is this machine's).
2. Targets Y: the model's vectors of those chunks (`model.int8.onnx` when present, 256 tokens).
3. Model: X = a row per chunk, its tokens' counts times a SIF weight a/(a + p) (a = 1e-4, p from a
   Zipf law over the vocabulary's order), normalised to sum 1. Prior T0 = [iso, E] A: `iso` the
   model's vector of each token alone (`[CLS] t [SEP]`, mean-pooled), `E` its input word embedding,
   both row-normalised, A the 768 × 384 least-squares map with X [iso, E] A ≈ Y. Then
   T = T0 + D minimising ||X (T0 + D) - Y||² + λ ||D||² (λ = 5e-3), by Jacobi-preconditioned
   conjugate gradients on all 384 columns at once (tokens absent from the corpus keep T0). The SIF
   weights are baked into the rows, so a reader only sums rows and normalises.

Embedding the targets dominates the time (~50 chunks/s with int8 on 2 cores). 400 further chunks
are held out and their mean cosine (static vs model) is reported.

    python3 distil.py --model-dir DIR --out DIR/static.bin --cache DIR [--chunks N] [--corpus DIR ...]

Output: a little-endian file `PSTV` magic, u32 version (2), u32 rows, u32 dims, then rows × dims
float16. A JSON summary goes to stderr. Needs numpy, onnxruntime, onnx, tokenizers (the pinned
wheels of setup-model); no scipy.
"""

import argparse
import hashlib
import io
import json
import os
import re
import resource
import struct
import sys
import tarfile
import time
import urllib.request
import zipfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from tokenizers import Tokenizer

MAGIC = b"PSTV"
VERSION = 2
SIF_A = 1e-4
MAX_TOKENS = 256  # the model's window, [CLS] and [SEP] included
LAMBDA = 5e-3
ITERS = 40
HOLDOUT = 400
MIN_CHUNKS = 1000
SHARES = {"py": 0.40, "rs": 0.25, "js": 0.20, "c": 0.15}

DEF = re.compile(
    r"^\s{0,4}(async\s+def|def|class|pub\s|fn\s|impl\b|struct\s|enum\s|trait\s|mod\s|function\b"
    r"|export\s|static\s|const\s|func\s|type\s)"
)
SKIP_DIRS = {"test", "tests", "testing", "testdata", "__tests__", "__pycache__", "site-packages", "dist-packages",
             "benches", "examples", "locale", "locales", "i18n"}
# Projects Patina is benchmarked on (and Patina itself): never fitted on.
EXCLUDE = re.compile(r"^(tokio([-_][a-z]+)*|grep([-_][a-z]+)*|ignore|globset|flask|_?pytest|express|cobra|ripgrep|patina)([-_.]\d.*)?$", re.I)


def log(msg: str) -> None:
    print(f"distil: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- corpus

PINNED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus.json")


def fetch(entry: dict, cache: str) -> bytes:
    """One pinned archive: from `cache` when its bytes match the pin, else downloaded into it."""
    name = entry["url"].rsplit("/", 1)[1]
    path = os.path.join(cache, name)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        if hashlib.sha256(data).hexdigest() == entry["sha256"]:
            return data
    except OSError:
        pass
    req = urllib.request.Request(entry["url"], headers={"User-Agent": "patina-setup-model"})
    for attempt in range(3):
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                data = r.read()
            break
        except OSError as e:
            if attempt == 2:
                sys.exit(f"distil: cannot download {entry['url']}: {e}")
            time.sleep(2 * (attempt + 1))
    got = hashlib.sha256(data).hexdigest()
    if got != entry["sha256"]:
        sys.exit(f"distil: {entry['url']} has sha256 {got}, pinned {entry['sha256']}")
    os.makedirs(cache, exist_ok=True)
    with open(path + ".tmp", "wb") as fh:
        fh.write(data)
    os.replace(path + ".tmp", path)
    return data


def archive_files(entry: dict, data: bytes):
    """(path inside the archive, bytes) of each source file the entry keeps, by path."""
    keep = entry.get("include", "")

    def kept(name: str, size: int) -> bool:
        parts = name.split("/")
        return (name.startswith(keep) and size <= 400_000 and not name.endswith(".d.ts")
                and os.path.splitext(name)[1] in EXT_LANG
                and not any(d in SKIP_DIRS or d.startswith(".") for d in parts[:-1]))

    out = []
    if entry["url"].endswith((".whl", ".zip")):
        z = zipfile.ZipFile(io.BytesIO(data))
        out = [(i.filename, z.read(i)) for i in z.infolist() if not i.is_dir() and kept(i.filename, i.file_size)]
    else:
        # In the archive's order: a gzip stream read backwards is decompressed again from its start.
        with tarfile.open(fileobj=io.BytesIO(data), mode="r|*") as t:
            out = [(m.name, t.extractfile(m).read()) for m in t if m.isfile() and kept(m.name, m.size)]
    return sorted(out)


EXT_LANG = {".py": "py", ".rs": "rs", ".js": "js", ".mjs": "js", ".ts": "js", ".go": "go", ".h": "c", ".c": "c"}


def key(s: str) -> bytes:
    return hashlib.blake2b(s.encode(), digest_size=8).digest()


def source_files(root: str, exts: tuple[str, ...]) -> list[str]:
    out = []
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".") and not EXCLUDE.match(d))
        out += [os.path.join(dirpath, f) for f in files if f.endswith(exts)]
    return out


def chunk_file(text: str, min_lines: int = 8, max_lines: int = 60) -> list[str]:
    chunks, cur = [], []
    for line in text.split("\n"):
        if cur and ((DEF.match(line) and len(cur) >= min_lines) or len(cur) >= max_lines or (len(cur) >= 40 and not line.strip())):
            chunks.append(cur)
            cur = []
        if cur or line.strip():
            cur.append(line)
    if cur:
        chunks.append(cur)
    out = []
    for c in chunks:
        while c and not c[-1].strip():
            c.pop()
        text = "\n".join(c)
        if len(c) >= 3 and len(text) >= 80:
            out.append(text)
    return out


def corpus(n: int, pinned: str, cache: str, extra: list[str]) -> tuple[list[str], dict]:
    """`n` chunk texts (`path\\ntext`), drawn per language by hash; dict: chunks per language."""
    # (hash key, relative path, text getter) per language
    files: dict[str, list[tuple[bytes, str, object]]] = {}
    with open(pinned) as fh:
        entries = json.load(fh)
    for entry in entries:
        data = fetch(entry, cache)
        for name, raw in archive_files(entry, data):
            lang = EXT_LANG.get(os.path.splitext(name)[1])
            if lang is None:
                continue
            rel = f"{entry['name']}/{name.split('/', 1)[1] if '/' in name else name}"
            files.setdefault(lang, []).append((key(rel), rel, raw))
    for root in extra:
        for f in source_files(root, tuple(EXT_LANG)):
            rel = os.path.relpath(f, root)
            files.setdefault(EXT_LANG[os.path.splitext(f)[1]], []).append((key(rel), rel, f))
    # Read each language's files in hash order until it has four times its share of chunks.
    pools: dict[str, list[tuple[bytes, str]]] = {}
    want = {lang: int(n * SHARES.get(lang, 0.1)) + 1 for lang in files}
    for lang, fl in files.items():
        fl.sort(key=lambda e: (e[0], e[1]))
        pool = pools.setdefault(lang, [])
        for _, rel, src in fl:
            if len(pool) >= 4 * want[lang]:
                break
            try:
                if isinstance(src, bytes):
                    text = src.decode("utf-8")
                else:
                    if os.path.getsize(src) > 400_000:
                        continue
                    with open(src, encoding="utf-8") as fh:
                        text = fh.read()
            except (OSError, UnicodeDecodeError):
                continue
            pool += [(key(f"{rel}#{i}"), f"{rel}\n{c}") for i, c in enumerate(chunk_file(text))]
        pool.sort()
    # Fixed shares; a language short of its share passes the rest on to the others.
    take = {lang: 0 for lang in pools}
    left = n
    while left > 0:
        open_ = [l for l in pools if take[l] < len(pools[l])]
        if not open_:
            break
        total = sum(SHARES.get(l, 0.1) for l in open_)
        given = 0
        for l in open_:
            g = min(len(pools[l]) - take[l], max(1, int(left * SHARES.get(l, 0.1) / total)))
            take[l] += g
            given += g
        left -= given
    texts = [t for l in pools for _, t in pools[l][: take[l]]]
    texts.sort(key=key)
    return texts[:n], {l: c for l, c in take.items() if c}


# ---------------------------------------------------------------- model

def session(path: str, threads: int) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    # Idle threads sleep rather than spin: setup runs this beside a cold build, where spinning
    # threads took the build's cores (the first table's 1,400 chunks: 14.6 s idle, 42.3 s beside
    # rustc with spinning). The same kernels and partition either way, so the same bytes.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def run(sess, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    feed = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in {i.name for i in sess.get_inputs()}:
        feed["token_type_ids"] = np.zeros_like(ids)
    return sess.run(["last_hidden_state"], feed)[0]


def embed(sess, tok: Tokenizer, texts: list[str], batch: int = 32) -> np.ndarray:
    """The model's vectors (mean over the mask, L2-normalised), batches of similar length."""
    enc = tok.encode_batch(texts)
    lens = np.array([len(e.ids) for e in enc])
    order = np.argsort(lens, kind="stable")
    out = np.zeros((len(texts), 384), np.float32)
    for s in range(0, len(texts), batch):
        idx = order[s : s + batch]
        ids = np.zeros((len(idx), lens[idx].max()), np.int64)
        mask = np.zeros_like(ids)
        for r, i in enumerate(idx):
            ids[r, : lens[i]] = enc[i].ids
            mask[r, : lens[i]] = 1
        h = run(sess, ids, mask)
        v = (h * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        out[idx] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def isolated(sess, vocab: int, cls: int, sep: int, batch: int = 2048) -> np.ndarray:
    """Each token run alone (`[CLS] t [SEP]`), mean-pooled."""
    out = np.zeros((vocab, 384), np.float32)
    for s in range(0, vocab, batch):
        t = np.arange(s, min(s + batch, vocab))
        ids = np.stack([np.full(len(t), cls), t, np.full(len(t), sep)], 1).astype(np.int64)
        out[s : s + len(t)] = run(sess, ids, np.ones_like(ids)).mean(1)
    return out


def word_embeddings(model_path: str, vocab: int) -> np.ndarray:
    m = onnx.load(model_path)
    for init in m.graph.initializer:
        if "word_embeddings" in init.name and list(init.dims)[:1] == [vocab]:
            return numpy_helper.to_array(init).astype(np.float32)
    sys.exit(f"distil: no word-embedding initializer of {vocab} rows in {model_path}")


# ---------------------------------------------------------------- sparse algebra (numpy only)

class SegSum:
    """out[s] = Σ val[k] · M[idx[k]] over the k of segment s. Segments are bucketed by length and
    padded, so each bucket is one gather and one batched matmul (np.add.reduceat is far slower)."""

    def __init__(self, starts, lens, idx, val, budget: int = 40_000):
        self.nseg = len(lens)
        self.plan = []
        order = np.argsort(lens, kind="stable")
        sl = lens[order]
        i = 0
        while i < len(order):
            cap = int(max(sl[i], 1) * 1.3) + 1
            j = min(int(np.searchsorted(sl, cap, side="right")), i + max(1, budget // cap))
            segs = order[i:j]
            width = max(int(sl[j - 1]), 1)
            pos = starts[segs][:, None] + np.arange(width)[None, :]
            mask = np.arange(width)[None, :] < lens[segs][:, None]
            pos = np.where(mask, pos, 0)
            self.plan.append((segs, np.where(mask, idx[pos], 0), np.where(mask, val[pos], 0).astype(np.float32)[:, None, :]))
            i = j

    def __call__(self, m: np.ndarray) -> np.ndarray:
        out = np.zeros((self.nseg, m.shape[1]), np.float32)
        for segs, idx, w in self.plan:
            out[segs] = np.matmul(w, m[idx])[:, 0, :]
        return out


class Bag:
    """X: one row per text, its tokens' weighted counts (rows summing to 1 when `normalise`)."""

    def __init__(self, ids_list, weight=None, normalise=True):
        rows, cols, vals = [], [], []
        for i, ids in enumerate(ids_list):
            u, c = np.unique(np.asarray(ids, dtype=np.int64), return_counts=True)
            v = c * (weight[u] if weight is not None else 1.0)
            rows.append(np.full(len(u), i))
            cols.append(u)
            vals.append(v / v.sum() if normalise and len(v) else v)
        self.n = len(ids_list)
        row = np.concatenate(rows)
        col = np.concatenate(cols)
        val = np.concatenate(vals).astype(np.float32)
        indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
        self.used = np.unique(col)
        pos = np.searchsorted(self.used, col)
        self._dot_v = SegSum(indptr[:-1], np.diff(indptr), col, val)
        self._dot_u = SegSum(indptr[:-1], np.diff(indptr), pos, val)
        perm = np.argsort(col, kind="stable")
        starts = np.searchsorted(col[perm], self.used)
        lens = np.diff(np.append(starts, len(col)))
        self._tdot = SegSum(starts, lens, row[perm], val[perm])
        self.diag = np.bincount(pos, weights=val.astype(np.float64) ** 2, minlength=len(self.used))

    def dot(self, t: np.ndarray) -> np.ndarray:
        """X @ t, t indexed by vocabulary id."""
        return self._dot_v(t)

    def dot_used(self, t: np.ndarray) -> np.ndarray:
        """X @ t, t indexed by position in `used`."""
        return self._dot_u(t)

    def tdot(self, r: np.ndarray) -> np.ndarray:
        """X^T @ r, indexed by position in `used`."""
        return self._tdot(r)


def ridge(x: Bag, y: np.ndarray, t0: np.ndarray, lam: float, iters: int) -> tuple[np.ndarray, int]:
    """T = t0 + D, D minimising ||X (t0 + D) - y||² + lam ||D||² (Jacobi-PCG, all columns at once)."""
    b = x.tdot(y - x.dot(t0))
    minv = (1.0 / (x.diag + lam)).astype(np.float32)[:, None]
    d = np.zeros_like(b)
    r = b.copy()
    z = minv * r
    p = z.copy()
    rz = (r * z).sum(0)
    bb = np.maximum((b * b).sum(0), 1e-30)
    it = 0
    for it in range(1, iters + 1):
        ap = x.tdot(x.dot_used(p)) + lam * p
        alpha = rz / np.maximum((p * ap).sum(0), 1e-30)
        d += alpha * p
        r -= alpha * ap
        if np.sqrt((r * r).sum(0) / bb).max() < 1e-3:
            break
        z = minv * r
        rz, rz_old = (r * z).sum(0), rz
        p = z + (rz / np.maximum(rz_old, 1e-30)) * p
    t = t0.copy()
    t[x.used] += d
    return t, it


def normed(a: np.ndarray) -> np.ndarray:
    return a / (np.linalg.norm(a, axis=1, keepdims=True) + 1e-12)


# ---------------------------------------------------------------- main

def distil(args) -> tuple[np.ndarray, dict]:
    t_start = time.time()
    stats: dict = {}
    tok = Tokenizer.from_file(f"{args.model_dir}/tokenizer.json")
    tok.no_padding()
    tok.enable_truncation(args.target_tokens)
    vocab = tok.get_vocab_size(with_added_tokens=True)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    int8 = f"{args.model_dir}/model.int8.onnx"
    fp32 = f"{args.model_dir}/model.onnx"
    target_model = int8 if os.path.isfile(int8) and not args.fp32 else fp32
    sess = session(target_model, args.threads)

    t = time.time()
    texts, langs = corpus(args.chunks + HOLDOUT, args.pinned, args.cache, args.corpus)
    stats.update(corpus_chunks=langs, corpus_s=round(time.time() - t, 1))
    log(f"corpus: {len(texts)} chunks {langs} in {stats['corpus_s']} s")
    if len(texts) < MIN_CHUNKS:
        sys.exit(f"distil: only {len(texts)} code chunks found (need {MIN_CHUNKS}); is {args.pinned} complete?")
    hold = min(HOLDOUT, len(texts) // 10)

    t = time.time()
    y = embed(sess, tok, texts)
    stats["embed_s"] = round(time.time() - t, 1)
    stats["rss_after_targets_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    log(f"targets: {len(texts)} chunks through {os.path.basename(target_model)} in {stats['embed_s']} s")

    t = time.time()
    iso = normed(isolated(sess, vocab, cls, sep))
    emb = normed(word_embeddings(fp32, vocab))
    basis = np.hstack([iso, emb]).astype(np.float32)
    del iso, emb
    stats["tokens_s"] = round(time.time() - t, 1)
    del sess

    t = time.time()
    tok.no_truncation()
    ids = [e.ids[: args.target_tokens - 2] for e in tok.encode_batch(texts, add_special_tokens=False)]
    rank = np.arange(1, vocab + 1, dtype=np.float64)
    zipf = (1.0 / rank) / (1.0 / rank).sum()
    weight = SIF_A / (SIF_A + zipf)
    x = Bag(ids[hold:], weight)
    f = x.dot(basis)
    a = np.linalg.solve(f.T @ f + 1e-3 * np.eye(f.shape[1], dtype=np.float32), f.T @ y[hold:])
    t0 = (basis @ a).astype(np.float32)
    del basis, f
    table, iters = ridge(x, y[hold:], t0, args.lam, args.iters)
    table *= weight[:, None].astype(np.float32)
    stats.update(fit_s=round(time.time() - t, 1), cg_iterations=iters, tokens_fitted=int(len(x.used)))

    held = Bag(ids[:hold], normalise=False)
    stats["heldout_cosine"] = round(float((normed(held.dot(table)) * y[:hold]).sum(1).mean()), 4)
    stats["heldout_cosine_prior"] = round(float((normed(held.dot(t0 * weight[:, None].astype(np.float32))) * y[:hold]).sum(1).mean()), 4)
    stats["total_s"] = round(time.time() - t_start, 1)
    stats["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    return table.astype(np.float16), stats


def write(table: np.ndarray, path: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(MAGIC + struct.pack("<III", VERSION, table.shape[0], table.shape[1]))
        f.write(table.astype("<f2").tobytes())
    os.replace(tmp, path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--chunks", type=int, default=8000, help="chunks to fit on (default 8000; embedding ~50/s on 2 cores)")
    ap.add_argument("--pinned", default=PINNED, help="the pinned corpus (default: corpus.json beside this script)")
    ap.add_argument("--cache", required=True, help="where the pinned archives are downloaded and kept")
    ap.add_argument("--corpus", action="append", default=[], help="a directory of this machine's code to add (the table is then not reproducible)")
    ap.add_argument("--target-tokens", type=int, default=MAX_TOKENS,
                    help="tokens of each chunk the model reads for its target vector, [CLS] and [SEP] included (default 256, all the model reads)")
    ap.add_argument("--lam", type=float, default=LAMBDA, help="ridge strength towards the prior table")
    ap.add_argument("--iters", type=int, default=ITERS, help="conjugate-gradient iterations at most")
    ap.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads")
    ap.add_argument("--fp32", action="store_true", help="targets from model.onnx even when model.int8.onnx exists")
    args = ap.parse_args()
    table, stats = distil(args)
    if not np.isfinite(table).all():
        sys.exit("distil: the fitted table has non-finite values")
    write(table, args.out)
    print(json.dumps({"rows": table.shape[0], "dims": table.shape[1], **stats}), file=sys.stderr)


if __name__ == "__main__":
    main()
