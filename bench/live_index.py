#!/usr/bin/env python3
"""Live-index benchmark on a repository of >= 1,000 files, through the real daemon and client.

    bench/live_index.py [--bin target/release] [--files 1200] [--runs 20] [--idle 30]

Reports:
  * save -> searchable latency (p50/p95): a file is written with a new function; the clock stops
    when a plain `patina q` (no --fresh) returns it, lexically and semantically;
  * branch switch of ~100 changed files -> fully reconciled (indexed commit == HEAD, nothing
    pending, no embedding backlog);
  * CPU use of the idle daemon watching the repository.
Needs the model (scripts/setup-model) for the semantic figure.
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import sys

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import model_dir, patina_env, pct  # noqa: E402

TOPICS = ["orbital period of a satellite", "ripeness of a mango", "tide height at a harbour",
          "migration route of a whale", "pressure inside a diving bell", "tempo of a waltz",
          "yield of a wheat field", "depth of a glacier crevasse", "altitude of a weather balloon",
          "strength of a spider web", "salinity of an estuary", "brightness of a variable star"]



def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="target/release")
    ap.add_argument("--files", type=int, default=1200)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--idle", type=int, default=30, help="seconds of idle CPU sampling")
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(__file__), "../../shared/eval/cosqa/corpus.jsonl"))
    args = ap.parse_args()

    patina = os.path.abspath(os.path.join(args.bin, "patina"))
    home = tempfile.mkdtemp(prefix="plive")
    repo = tempfile.mkdtemp(prefix="plrepo")
    env = patina_env(home)
    if "PATINA_MODEL_DIR" not in env:
        env["PATINA_MODEL_DIR"] = str(model_dir())

    def git(*a):
        subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", *a], cwd=repo, check=True, capture_output=True)

    def q(text, oracle):
        r = subprocess.run([patina, "q", text, "--oracle", oracle, "--json", "-n", "5"], cwd=repo, env=env, capture_output=True, text=True)
        if r.returncode not in (0, 1):
            return []
        # JSON Lines: one object per hit, then a summary.
        return [h for h in map(json.loads, r.stdout.splitlines()) if h.get("type") == "hit"]

    def status():
        r = subprocess.run([patina, "status", "--json"], env=env, capture_output=True, text=True, check=True)
        return json.loads(r.stdout)

    with open(args.corpus) as f:
        docs = [json.loads(l)["text"] for _, l in zip(range(args.files), f)]
    for i, text in enumerate(docs):
        d = os.path.join(repo, f"pkg{i % 40:02d}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"mod{i}.py"), "w") as f:
            f.write(text + "\n")
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "base")

    t0 = time.perf_counter()
    subprocess.run([patina, "add", repo], env=env, check=True, capture_output=True)
    while True:
        r = status()["repos"][0]
        if r["embed_backlog"] == 0 and not r["indexing"]:
            break
        time.sleep(0.2)
    print(f"repository: {args.files} files, indexed and embedded in {time.perf_counter() - t0:.1f} s "
          f"(semantic {status()['daemon']['semantic']})")

    lex, sem = [], []
    for i in range(args.runs):
        name = f"zq_live_probe_{i}_{random.randrange(10**9)}"
        topic = TOPICS[i % len(TOPICS)]
        path = os.path.join(repo, "pkg00", f"probe{i}.py")
        start = time.perf_counter()
        with open(path, "w") as f:
            f.write(f'def {name}(x):\n    """Estimate the {topic} from a reading."""\n    return x * 1.5\n')
        got_lex = got_sem = None
        while got_lex is None or got_sem is None:
            now = time.perf_counter() - start
            if now > 30:
                break
            if got_lex is None and any(h["symbol"] == name for h in q(name, "lexical")):
                got_lex = time.perf_counter() - start
            if got_sem is None and any(h["symbol"] == name for h in q(f"estimate the {topic}", "semantic")[:3]):
                got_sem = time.perf_counter() - start
            time.sleep(0.005)
        lex.append(got_lex if got_lex is not None else float("inf"))
        sem.append(got_sem if got_sem is not None else float("inf"))
        os.remove(path)
        time.sleep(0.3)
    print(f"save -> searchable, lexical:  p50 {statistics.median(lex) * 1000:.0f} ms, p95 {pct(lex, 0.95) * 1000:.0f} ms over {len(lex)} saves")
    print(f"save -> searchable, semantic: p50 {statistics.median(sem) * 1000:.0f} ms, p95 {pct(sem, 0.95) * 1000:.0f} ms")

    # Branch switch: ~100 files differ.
    git("checkout", "-q", "-b", "other")
    for i in range(100):
        p = os.path.join(repo, f"pkg{i % 40:02d}", f"mod{i}.py")
        with open(p, "a") as f:
            f.write(f"\n\ndef branch_variant_{i}():\n    return {i}\n")
    git("add", "-A")
    git("commit", "-q", "-m", "other")
    git("checkout", "-q", "main")
    time.sleep(2)
    while not status()["repos"][0]["freshness"]["fresh"]:
        time.sleep(0.1)
    start = time.perf_counter()
    git("checkout", "-q", "other")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    while True:
        f = status()["repos"][0]["freshness"]
        if f["fresh"] and f["indexed_commit"] == head:
            break
        time.sleep(0.02)
    print(f"branch switch (100 files changed) -> fully reconciled (lexical + embeddings): {time.perf_counter() - start:.2f} s")

    # Idle CPU.
    pid = status()["daemon"]["pid"]
    time.sleep(2)
    tick = os.sysconf("SC_CLK_TCK")

    def cpu():
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick

    c0, w0 = cpu(), time.perf_counter()
    time.sleep(args.idle)
    c1, w1 = cpu(), time.perf_counter()
    print(f"idle daemon CPU over {args.idle} s: {100 * (c1 - c0) / (w1 - w0):.2f} % of one core; "
          f"RSS {status()['daemon']['rss_bytes'] / 2**20:.0f} MiB")
    subprocess.run([patina, "daemon", "stop"], env=env, capture_output=True)


if __name__ == "__main__":
    main()
