#!/usr/bin/env python3
"""Whole-process latency of `patina q` against a warm daemon.

Starts (or reuses) a daemon, registers the repository, warms it up, then runs `patina q` as a fresh
process N times per query and reports p50/p95 wall time over all runs, plus the client's binary
size. The time includes process creation, connecting to the socket, the query and printing.

    bench/q_latency.py [--bin target/release] [--repo .] [--runs 12] [--oracle lexical,symbol]
        [--queries FILE] [--expand --budget 4000] [--no-cache] [--no-model]

`--queries FILE`: one question per line (default: five about this repository). `--expand`: the
context an agent reads (`patina q --expand --budget N`, MCP `patina_context`) instead of the
ranked list. `--no-cache`: the daemon's answer cache off (`[cache] entries = 0`), so every run
computes its answer; otherwise repeated questions are answered from the cache. `--no-model`:
semantic search off (no backlog to wait for; lexical and the other oracles answer).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from common import patina_env, pct

QUERIES = [
    "how are flags parsed",
    "parse_args",
    "where does the daemon bind its socket",
    "reciprocal rank fusion",
    "config.toml",
]



def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="target/release")
    ap.add_argument("--repo", default=".")
    ap.add_argument("--runs", type=int, default=12, help="runs per query (5 queries)")
    ap.add_argument("--home", help="PATINA_HOME to use (default: a fresh temporary one)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--oracle", help="oracle subset for patina q (default: all)")
    ap.add_argument("--queries", help="a file of questions, one per line")
    ap.add_argument("--expand", action="store_true", help="time `patina q --expand`")
    ap.add_argument("--budget", type=int, default=4000, help="token budget with --expand")
    ap.add_argument("--no-cache", action="store_true", help="turn the answer cache off")
    ap.add_argument("--no-model", action="store_true", help="semantic search off")
    args = ap.parse_args()
    args.extra = ["--oracle", args.oracle] if args.oracle else []
    if args.expand:
        args.extra += ["--expand", "--budget", str(args.budget)]
    queries = QUERIES
    if args.queries:
        with open(args.queries) as f:
            queries = [line.strip() for line in f if line.strip()]

    patina = os.path.abspath(os.path.join(args.bin, "patina"))
    home = args.home or tempfile.mkdtemp(prefix="pbench")
    env = patina_env(home, model=not args.no_model)
    if args.no_cache:
        with open(os.path.join(home, "config.toml"), "a") as f:
            f.write("[cache]\nentries = 0\n")
    repo = os.path.abspath(args.repo)
    subprocess.run([patina, "add", repo], env=env, check=True, capture_output=True)
    # Time queries against an idle daemon: wait until the embedding backlog is empty.
    while any(r["embed_backlog"] for r in json.loads(
            subprocess.run([patina, "status", "--json"], env=env, capture_output=True, check=True).stdout)["repos"]):
        time.sleep(0.2)
    for q in queries:  # warm-up
        subprocess.run([patina, "q", q, "-n", "10", *args.extra], env=env, cwd=repo, capture_output=True)

    times = []
    for q in queries:
        for _ in range(args.runs):
            t0 = time.perf_counter()
            r = subprocess.run([patina, "q", q, "-n", "10", *args.extra], env=env, cwd=repo, capture_output=True)
            times.append((time.perf_counter() - t0) * 1000)
            if r.returncode not in (0, 1):
                sys.exit(f"patina q failed: {r.stderr.decode()}")
    # Baseline: process creation alone.
    base = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        subprocess.run(["/bin/true"], capture_output=True)
        base.append((time.perf_counter() - t0) * 1000)
    health = subprocess.run([patina, "status", "--json"], env=env, capture_output=True, check=True)
    rss = json.loads(health.stdout)["daemon"]["rss_bytes"]
    subprocess.run([patina, "daemon", "stop"], env=env, capture_output=True)
    out = {
        "runs": len(times),
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(pct(times, 0.95), 2),
        "bin_true_p50_ms": round(statistics.median(base), 2),
        "client_bytes": os.path.getsize(patina),
        "daemon_rss_mib": round(rss / 2**20, 1),
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(f"patina q {' '.join(args.extra)}, whole process, {out['runs']} runs over {len(queries)} queries: "
              f"p50 {out['p50_ms']} ms, p95 {out['p95_ms']} ms "
              f"(/bin/true p50 {out['bin_true_p50_ms']} ms); "
              f"client binary {out['client_bytes'] / 1024:.0f} KiB; daemon RSS {out['daemon_rss_mib']} MiB")


if __name__ == "__main__":
    main()
