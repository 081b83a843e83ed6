#!/usr/bin/env python3
"""What a repository's code graph costs in memory: the daemon's RSS before and after the graph is
built for one question, without the model (issue 65 item 3).

    python3 bench/graph_memory.py --bin target/release --repo /work/large/deno --home /tmp/gm
    python3 bench/graph_memory.py --bin target/release --repo /work/large/tree \\
        --home /work/large/tree-copy --existing      # a copy of a state that has the repository

A fresh home (emptied) gets the repository with `patina add`; with `--existing` the home's state
is used as it is (the daemon catches up first). RSS is read 20 s after the index is idle, then
for `--wait` seconds after the question (a large repository's graph is built in the background,
for the next questions), with the peak; then the question again and the memory breakdown.
"""
import argparse
import json
import os
import shutil
import subprocess
import time

QUESTION = "how are permissions checked before reading a file"


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--home", required=True)
    ap.add_argument("--existing", action="store_true", help="use the home's state as it is")
    ap.add_argument("--wait", type=float, default=180)
    a = ap.parse_args()
    if not a.existing:
        shutil.rmtree(a.home, ignore_errors=True)
        os.makedirs(a.home)
    env = dict(os.environ, PATINA_HOME=a.home, NO_COLOR="1",
               PATINA_MODEL_DIR=os.path.join(a.home, "no-model"))
    exe = os.path.join(a.bin, "patina")

    def run(*args):
        return subprocess.run([exe, *args], env=env, capture_output=True, text=True, cwd=a.repo)

    t0 = time.time()
    run("daemon", "start")
    pid = json.loads(run("status", "--json").stdout)["daemon"]["pid"]
    if not a.existing:
        run("add", a.repo)
    while json.loads(run("status", "--json").stdout)["repos"][0]["indexing"]:
        time.sleep(1)
    chunks = json.loads(run("status", "--json").stdout)["repos"][0]["chunks"]
    print(f"index ready in {time.time() - t0:.1f} s: {chunks} chunks")
    time.sleep(20)
    before = rss_mib(pid)
    run("q", QUESTION, "-n", "10")
    peak, t1 = before, time.time()
    while time.time() - t1 < a.wait:
        peak = max(peak, rss_mib(pid))
        time.sleep(0.2)
    summary = json.loads(run("q", QUESTION, "-n", "10", "--json").stdout.strip().splitlines()[-1])
    graph = next((o for o in summary["oracles"] if o["oracle"] == "graph"), {})
    parts = json.loads(run("status", "--json").stdout)["daemon"]["memory"]["parts"]
    after = rss_mib(pid)
    print(json.dumps({"rss_before_mib": before, "rss_after_mib": after, "peak_mib": peak,
                      "graph_mib": after - before, "graph_oracle": graph.get("status"),
                      "parts_mib": {p["component"].split(" (")[0]: p["bytes"] >> 20
                                    for p in parts}}))
    run("daemon", "stop")


if __name__ == "__main__":
    main()
