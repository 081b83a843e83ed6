#!/usr/bin/env python3
"""Idle memory before and after a query load (issue 15: "after a 6,400-query load, idle RSS within
10 % of where it started").

    bench/load_memory.py --home STATE --repo NAME [--queries 6400] [--settle 30] [--bin target/release]

STATE is a PATINA_HOME whose repository NAME is indexed (and embedded, when the model is there).
The daemon is restarted, left to settle, and its idle VmRSS read from /proc; then QUERIES distinct
queries run one `patina q` process after the other (so no two are served from the query cache):
bare identifiers and questions built from the repository's own words, alternating, at chunk and
file level. After the load the daemon is left idle for --settle seconds (its bulk embedding
session and idle tables are released on timers) and VmRSS is read again.
"""
import argparse
import json
import random
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import patina_env, proc_status_bytes  # noqa: E402

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,30}")


def rss_mib(pid):
    b = proc_status_bytes(pid, "VmRSS")
    if b is None:
        raise RuntimeError("no VmRSS")
    return b / (1024 * 1024)


def daemon_pid(home):
    return int((home / "patinad.lock").read_text().split()[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--queries", type=int, default=6400)
    ap.add_argument("--settle", type=int, default=30)
    ap.add_argument("--bin", default=str(Path(__file__).resolve().parent.parent / "target" / "release"))
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    home = Path(a.home).resolve()
    patina = str(Path(a.bin) / "patina")
    env = patina_env(home)
    env.pop("PATINA_SOCKET", None)

    def run(*args, check=True):
        r = subprocess.run([patina, *args], env=env, capture_output=True, text=True)
        if check and r.returncode not in (0, 1):
            sys.exit(f"load_memory: patina {' '.join(args)}: {r.stderr.strip()}")
        return r.stdout

    repos = [line.split() for line in run("repos").splitlines() if line.strip()]
    root = next((Path(r[2]) for r in repos if len(r) > 2 and a.repo in (r[0], r[1])), None)
    if root is None:
        sys.exit(f"load_memory: no repository {a.repo} in {home}")
    # The repository's own words: identifiers for lookups, and pairs of them for questions.
    words = set()
    for p in sorted(root.rglob("*"))[:4000]:
        if p.is_file() and ".git" not in p.parts and p.stat().st_size < 200_000:
            try:
                words.update(WORD.findall(p.read_text(errors="ignore")))
            except OSError:
                pass
    words = sorted(words)
    rng = random.Random(7)
    run("daemon", "stop", check=False)
    run("daemon", "start")
    time.sleep(a.settle)
    pid = daemon_pid(home)
    before = rss_mib(pid)
    t0 = time.time()
    for i in range(a.queries):
        if i % 2 == 0:
            args = ["q", rng.choice(words), "--repo", a.repo, "-n", "10"]
        else:
            w = rng.sample(words, 3)
            args = ["q", f"how does {w[0]} handle {w[1]} and {w[2]}", "--repo", a.repo, "-n", "10"]
        if i % 5 == 4:
            args.append("--files")
        run(*args)
    took = time.time() - t0
    loaded = rss_mib(pid)
    time.sleep(a.settle)
    after = rss_mib(pid)
    if daemon_pid(home) != pid:
        sys.exit("load_memory: the daemon restarted during the load")
    out = {"repo": a.repo, "queries": a.queries, "load_s": round(took, 1),
           "idle_before_mib": round(before, 1), "right_after_load_mib": round(loaded, 1),
           "idle_after_mib": round(after, 1), "growth": round(after / before - 1, 3)}
    print(json.dumps(out) if a.json else
          f"{a.repo}: {a.queries} distinct queries in {took:.0f} s; idle RSS {before:.0f} MiB before, "
          f"{loaded:.0f} MiB right after, {after:.0f} MiB after {a.settle} s idle "
          f"({100 * (after / before - 1):+.1f} %)")


if __name__ == "__main__":
    main()
