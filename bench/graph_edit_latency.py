#!/usr/bin/env python3
"""Save → `patina refs` reflects it: the latency of the live graph (issue 12).

Appends a function calling SYMBOL to FILE of a registered repository (a plain write, as an editor
saves), then polls `patina refs --json SYMBOL` until the new call site is listed; restores the
file and waits until it is gone again. Prints each latency and the median of both.

Usage (patinad running, the repository registered and indexed):
    python3 bench/graph_edit_latency.py REPO_ROOT FILE SYMBOL [-n 5] [--patina patina]
e.g. python3 bench/graph_edit_latency.py ~/src/flask src/flask/config.py get_debug_flag
"""

import argparse
import json
import os
import statistics
import subprocess
import time


def sites(patina, root, symbol):
    res = subprocess.run([patina, "refs", "--json", "--repo", root, symbol],
                         capture_output=True, text=True, cwd=root)
    if not res.stdout.strip():
        return set()
    return {(s["path"], s["line"]) for s in json.loads(res.stdout)}


def wait_for(pred, timeout=30.0):
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if pred():
            return time.monotonic() - start
        time.sleep(0.01)
    raise SystemExit("timed out")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("file")
    ap.add_argument("symbol")
    ap.add_argument("-n", type=int, default=5)
    ap.add_argument("--patina", default="patina")
    a = ap.parse_args()
    path = os.path.join(a.root, a.file)
    original = open(path, encoding="utf-8").read()
    base = original if original.endswith("\n") else original + "\n"
    line = base.count("\n") + 4  # the call's line in the appended function
    appear, vanish = [], []
    try:
        for i in range(a.n):
            probe = f"\n\ndef _patina_probe_{i}():\n    return {a.symbol}()\n"
            t0 = time.monotonic()
            with open(path, "w", encoding="utf-8") as f:
                f.write(base + probe)
            wait_for(lambda: (a.file, line) in sites(a.patina, a.root, a.symbol))
            appear.append(time.monotonic() - t0)
            t0 = time.monotonic()
            with open(path, "w", encoding="utf-8") as f:
                f.write(original)
            wait_for(lambda: (a.file, line) not in sites(a.patina, a.root, a.symbol))
            vanish.append(time.monotonic() - t0)
            print(f"run {i}: appears after {appear[-1]*1000:.0f} ms, gone after {vanish[-1]*1000:.0f} ms")
    finally:
        with open(path, "w", encoding="utf-8") as f:
            f.write(original)
    print(f"median: appears {statistics.median(appear)*1000:.0f} ms, "
          f"gone {statistics.median(vanish)*1000:.0f} ms (n={a.n})")


if __name__ == "__main__":
    main()
