#!/usr/bin/env python3
"""Index time per file, per language: is a language's chunking and graph extraction in line with
Go's on a comparable repository?

    bench/lang_index_rate.py [--bin target/release] [--runs 3] NAME=DIR [NAME=DIR ...]

For each repository (a git clone), `--runs` times: a fresh PATINA_HOME without the model (the
model's pass is the same for every language, and runs after lexical and symbol search answer),
`patina add DIR` (waits for the round), then the round's time (`last_index_ms`), its files and
chunks from `patina status --json`, and the bytes of the files it indexed. Prints, per repository,
the median ms per file, per 100 KB of source and per 100 chunks, and each against the first
repository named (the reference, e.g. cobra=… for Go). The last line is JSON.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import patina_env


def patina(binary: Path, home: Path, *args: str) -> str:
    env = patina_env(home, PATINA_DAEMON_BIN=binary / "patinad")
    env.pop("PATINA_SOCKET", None)
    r = subprocess.run([str(binary / "patina"), *args], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"lang_index_rate: patina {' '.join(args)} failed ({r.returncode}): {r.stderr[-2000:]}")
    return r.stdout


def tracked_bytes(root: Path) -> int:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    total = 0
    for n in names.split(b"\0"):
        p = root / os.fsdecode(n)
        if n and p.is_file():
            total += p.stat().st_size
    return total


def one(binary: Path, root: Path) -> dict:
    home = Path(tempfile.mkdtemp(prefix="prate"))
    try:
        patina(binary, home, "add", str(root))
        status = json.loads(patina(binary, home, "status", "--json"))
        repo = next(r for r in status["repos"] if r["root"] == str(root))
        patina(binary, home, "daemon", "stop")
        return {"ms": repo["last_index_ms"], "files": repo["files"], "chunks": repo["chunks"],
                "languages": repo.get("languages", {})}
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="target/release", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("repos", nargs="+", metavar="NAME=DIR")
    args = ap.parse_args()
    rows = []
    for spec in args.repos:
        name, _, d = spec.partition("=")
        root = Path(d).resolve()
        runs = [one(args.bin.resolve(), root) for _ in range(args.runs)]
        ms = statistics.median(r["ms"] for r in runs)
        files, chunks = runs[0]["files"], runs[0]["chunks"]
        kb = tracked_bytes(root) / 1024
        top = sorted(runs[0]["languages"].items(), key=lambda kv: -kv[1])[:3]
        rows.append({"name": name, "files": files, "chunks": chunks, "kb": round(kb), "ms": ms,
                     "ms_per_file": ms / max(files, 1), "ms_per_100kb": 100 * ms / max(kb, 1),
                     "ms_per_100_chunks": 100 * ms / max(chunks, 1), "languages": dict(top)})
    ref = rows[0]
    print(f"{'repository':<12} {'files':>6} {'chunks':>7} {'KB':>7} {'round ms':>9} {'ms/file':>8} "
          f"{'ms/100KB':>9} {'ms/100ch':>9} {'×ref/file':>9} {'×ref/KB':>8}  languages")
    for r in rows:
        print(f"{r['name']:<12} {r['files']:>6} {r['chunks']:>7} {r['kb']:>7} {r['ms']:>9.0f} "
              f"{r['ms_per_file']:>8.2f} {r['ms_per_100kb']:>9.1f} {r['ms_per_100_chunks']:>9.1f} "
              f"{r['ms_per_file'] / ref['ms_per_file']:>9.2f} {r['ms_per_100kb'] / ref['ms_per_100kb']:>8.2f}  "
              f"{r['languages']}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
