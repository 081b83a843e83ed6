#!/usr/bin/env python3
"""In-daemon bulk embedding rate (issue 15: "≥ 85 chunks/s fp32 on the CoSQA corpus on an idle
2-core machine"): a fresh state root, `patina add DIR`, then `patina status --json` polled until
every chunk has its vector. Reports chunks, seconds from the end of the lexical index to full
coverage, and chunks per second.

    bench/embed_rate.py DIR [--bin target/release] [--precision fp32|int8] [--runs 3]

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

from common import models_dir


def one_run(src, patina, precision):
    with tempfile.TemporaryDirectory(prefix="patina-embed-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        (home / "models").symlink_to(models_dir())
        if precision != "fp32":
            (home / "config.toml").write_text(f'[semantic]\nprecision = "{precision}"\n')
        env = dict(os.environ, PATINA_HOME=str(home))
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
    a = ap.parse_args()
    patina = str(Path(a.bin) / "patina")
    rates = []
    for i in range(a.runs):
        chunks, took = one_run(Path(a.dir).resolve(), patina, a.precision)
        rates.append(chunks / took)
        print(f"run {i + 1}: {chunks} chunks embedded in {took:.1f} s: {chunks / took:.1f} chunks/s",
              flush=True)
    print(f"median {statistics.median(rates):.1f} chunks/s ({a.precision}, {a.runs} runs)")


if __name__ == "__main__":
    main()
