#!/usr/bin/env python3
"""In-daemon bulk embedding rate (issue 15: "≥ 85 chunks/s fp32 on the CoSQA corpus on an idle
2-core machine"): a fresh state root, `patina add DIR`, then `patina status --json` polled until
every chunk has its vector. Reports chunks, seconds from the end of the lexical index to full
coverage, and chunks per second.

    bench/embed_rate.py DIR [--bin target/release] [--precision fp32|int8] [--runs 3]
                        [--standalone target/release/examples/embed_bench]

--standalone EXAMPLE: after each daemon run, the standalone embedder (`embed_bench`, the same
precision at 2 threads, every text sorted by length in one call: its best case) embeds the texts
the daemon embedded — each file's path line and text, which is what the daemon embeds for a
corpus of one chunk per file such as the materialised CoSQA corpus — and the two rates are
reported side by side (issue 15: in-daemon within 10 % of standalone).

DIR: a directory to index (e.g. a materialised corpus: the `corpus-*` directory that
`patina bench retrieval --corpus` writes under its state root, or any repository). The model is
taken from where `scripts/setup-model` installs it ($PATINA_MODEL_DIR's parent, else
$XDG_DATA_HOME/patina/models). Nothing else should run on the machine.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import models_dir, patina_env


def one_run(src, patina, precision):
    with tempfile.TemporaryDirectory(prefix="patina-embed-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        (home / "models").symlink_to(models_dir())
        if precision != "fp32":
            (home / "config.toml").write_text(f'[semantic]\nprecision = "{precision}"\n')
        env = patina_env(home)
        env.pop("PATINA_SOCKET", None)
        subprocess.run([patina, "daemon", "start"], env=env, check=True, capture_output=True)
        try:
            r = subprocess.run([patina, "add", "--force", str(src)], env=env, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"embed_rate: patina add: {r.stderr.strip()}")
            t0 = time.monotonic()
            while True:
                st = json.loads(subprocess.run([patina, "status", "--json"], env=env, check=True,
                                               capture_output=True, text=True).stdout)
                repo = st["repos"][0]
                if repo["embed_backlog"] == 0 and repo["vectors"] >= repo["chunks"]:
                    took = time.monotonic() - t0
                    return repo["chunks"], took
                if time.monotonic() - t0 > 3600:
                    sys.exit("embed_rate: not covered within an hour")
                time.sleep(0.5)
        finally:
            subprocess.run([patina, "daemon", "stop"], env=env, capture_output=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--bin", default=str(Path(__file__).resolve().parent.parent / "target" / "release"))
    ap.add_argument("--precision", default="fp32", choices=["fp32", "int8"])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--standalone", help="the embed_bench example, run on the same texts")
    a = ap.parse_args()
    patina = str(Path(a.bin) / "patina")
    src = Path(a.dir).resolve()
    texts = standalone_input(src) if a.standalone else None
    rates, alone = [], []
    for i in range(a.runs):
        chunks, took = one_run(src, patina, a.precision)
        rates.append(chunks / took)
        print(f"run {i + 1}: {chunks} chunks embedded in {took:.1f} s: {chunks / took:.1f} chunks/s",
              flush=True)
        if texts:
            alone.append(standalone_rate(a.standalone, texts, a.precision))
            print(f"run {i + 1}: standalone on the same texts: {alone[-1]:.1f} chunks/s", flush=True)
    print(f"median {statistics.median(rates):.1f} chunks/s ({a.precision}, {a.runs} runs)")
    if alone:
        m, s = statistics.median(rates), statistics.median(alone)
        print(f"standalone median {s:.1f} chunks/s: the daemon at {m / s:.0%} of it")


def standalone_input(src):
    """The daemon's input for a corpus of one chunk per file: the path line, then the text."""
    out = Path(tempfile.mkdtemp(prefix="patina-embed-texts-")) / "texts.jsonl"
    n = 0
    with out.open("w") as f:
        for p in sorted(src.rglob("*")):
            if p.is_file() and ".git" not in p.relative_to(src).parts:
                rel = p.relative_to(src).as_posix()
                f.write(json.dumps({"text": rel + "\n" + p.read_text(errors="replace")}) + "\n")
                n += 1
    return out, n


def standalone_rate(example, texts, precision):
    path, n = texts
    env = dict(os.environ, EMBED_BENCH_ONLY=precision)
    r = subprocess.run([example, str(path), str(n)], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"embed_rate: {example}: {r.stderr.strip()}")
    line = next(l for l in r.stdout.splitlines() if "chunks/s" in l)
    return float(line.split(":")[1].split()[0])


if __name__ == "__main__":
    main()
