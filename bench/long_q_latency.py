#!/usr/bin/env python3
"""Repeated long-query latency: `patina q "$(first 10 KB of TEXT_FILE)"` × 15, whole process, per
PATINA_HOME given (e.g. one with `[cache] entries = 0` and one with the defaults); stops each daemon.

    PATINA_BIN=DIR/patina REPO=CLONE TEXT_FILE=FILE bench/long_q_latency.py HOME_OFF HOME_ON …
"""
import os, statistics, subprocess, sys, time

from common import patina_env
BIN = os.environ.get("PATINA_BIN", "target/release/patina")
REPO = os.environ.get("REPO", ".")
text = open(os.environ["TEXT_FILE"]).read()[:10000]
for home in sys.argv[1:]:
    env = patina_env(home)
    subprocess.run([BIN, "q", text, "-n", "10"], env=env, cwd=REPO, capture_output=True)
    time.sleep(8)  # let the start-up catch-up round finish: only answers of a fresh index are kept
    subprocess.run([BIN, "q", text, "-n", "10"], env=env, cwd=REPO, capture_output=True)
    times = []
    for _ in range(15):
        t0 = time.perf_counter()
        r = subprocess.run([BIN, "q", text, "-n", "10"], env=env, cwd=REPO, capture_output=True)
        times.append((time.perf_counter() - t0) * 1000)
        assert r.returncode in (0, 1), r.stderr
    subprocess.run([BIN, "daemon", "stop"], env=env, capture_output=True)
    print(home, "p50 %.1f ms, max %.1f ms" % (statistics.median(times), max(times)))
