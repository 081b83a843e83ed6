#!/usr/bin/env python3
"""How long a question takes while the model's pass runs, against after it (issue 65, item 2).

A fresh daemon (a throwaway PATINA_HOME with the installed model linked in) registers REPO; while
its model pass runs, and again once it is done, one question is asked every --every seconds as a
fresh `patina q` process, cycling three kinds: a hybrid question (the default oracles), the same
question lexical-only, and a bare identifier. No text is asked twice, so nothing comes from the
answer cache. For each answer: the wall time of the whole process, the daemon's own `took_us`, and
each oracle's. Prints one JSON line per question and a summary (median and p90 per kind, during
the pass and after) as JSON on the last line.

    bench/pass_latency.py --repo PATH [--bin target/release] [--every 5] [--after 12]
        [--questions FILE] [--identifiers FILE]

--questions / --identifiers: one per line (defaults: generic questions any code base answers, and
identifiers taken from the repository's own words). Nothing here is fitted to a repository.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Patina, models_dir  # noqa: E402

QUESTIONS = [
    "how is an error reported to the caller",
    "where are configuration options parsed",
    "how does the code wait for a timeout",
    "where is a buffer resized when it is full",
    "how are tasks scheduled on worker threads",
    "what happens when a connection is closed",
    "how is shutdown signalled to running work",
    "where are bytes read from a socket",
    "how is a lock acquired and released",
    "how are tests set up with a runtime",
    "where is memory allocated for a new node",
    "how does the code retry after a failure",
    "where is the version number defined",
    "how is a message sent between threads",
    "how are files opened and read",
    "where is the main loop",
    "how does cancellation propagate",
    "where are metrics counted",
    "how is input validated before use",
    "how does the timer wheel advance",
]


def identifiers(repo, n=200):
    """Distinct identifiers of the repository's own files (snake or camel case, ≥ 8 chars)."""
    out = subprocess.run(["git", "-C", str(repo), "grep", "-ohE", r"\b[a-z]+_[a-z_]{4,}\b"],
                         capture_output=True, text=True).stdout
    seen = []
    for w in out.split():
        if w not in seen:
            seen.append(w)
        if len(seen) >= n:
            break
    return seen


def ask(p, repo, text, oracle=None):
    args = ["q", text, "-n", "10", "--json"]
    if oracle:
        args += ["--oracle", oracle]
    start = time.monotonic()
    # Asked from inside the repository: `patina q` searches (and registers) where it runs.
    r = p.run(*args, cwd=str(repo), check=False)
    wall_ms = (time.monotonic() - start) * 1000
    summary = {}
    for line in r.stdout.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if obj.get("type") == "summary":
            summary = obj
    return {
        "wall_ms": round(wall_ms, 1),
        "took_ms": round(summary.get("took_us", 0) / 1000, 1),
        "oracles": {o["oracle"]: round(o["took_us"] / 1000, 1) for o in summary.get("oracles", [])},
        "cached": summary.get("cached"),
        "rc": r.returncode,
    }


def backlog(p):
    st = p.status()
    return sum(r.get("embed_backlog", 0) for r in st["repos"]), st["daemon"].get("rss_bytes", 0)


def stats(xs):
    if not xs:
        return None
    xs = sorted(xs)
    return {"n": len(xs), "median": round(statistics.median(xs), 1),
            "p90": round(xs[min(len(xs) - 1, int(0.9 * len(xs)))], 1), "max": round(xs[-1], 1)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--bin", default="target/release")
    ap.add_argument("--every", type=float, default=5.0)
    ap.add_argument("--after", type=int, default=12, help="questions of each kind after the pass")
    ap.add_argument("--questions")
    ap.add_argument("--identifiers")
    ap.add_argument("--max-minutes", type=float, default=60)
    a = ap.parse_args()
    repo = Path(a.repo).resolve()
    questions = (Path(a.questions).read_text().splitlines() if a.questions else QUESTIONS)
    idents = (Path(a.identifiers).read_text().splitlines() if a.identifiers else identifiers(repo))
    model = models_dir() / "all-MiniLM-L6-v2"
    if not (model / "MANIFEST.json").is_file():
        sys.exit(f"pass_latency: no model at {model}; run scripts/setup-model")
    home = Path(tempfile.mkdtemp(prefix="ppass"))
    (home / "models").mkdir()
    (home / "models" / "all-MiniLM-L6-v2").symlink_to(model)
    p = Patina(a.bin, str(home), True)
    rows = []
    counter = {"q": 0, "i": 0}

    def next_question():
        # A question is never asked twice: cycle the pool with a round number appended.
        k = counter["q"]
        counter["q"] += 1
        q = questions[k % len(questions)]
        return q if k < len(questions) else f"{q} {k // len(questions) + 1}"

    def next_identifier():
        k = counter["i"]
        counter["i"] += 1
        return idents[k % len(idents)]

    def sample(phase, kind):
        if kind == "identifier":
            text, oracle = next_identifier(), None
        else:
            text, oracle = next_question(), ("lexical" if kind == "lexical" else None)
        left, rss = backlog(p)
        row = {"phase": phase, "kind": kind, "text": text, "backlog": left,
               "rss_mib": round(rss / 2**20), **ask(p, repo, text, oracle)}
        rows.append(row)
        print(json.dumps(row), flush=True)
        return left

    try:
        p.run("add", "--no-wait", str(repo))
        # Wait until the round is over and the model's pass has begun (the backlog is what the
        # model has still to embed; static vectors fill first).
        kinds = ["hybrid", "lexical", "identifier"]
        deadline = time.monotonic() + a.max_minutes * 60
        turn = 0
        while time.monotonic() < deadline:
            st = p.status()
            r = st["repos"][0] if st["repos"] else {}
            if not r.get("indexing") and r.get("chunks", 0) > 0 and r.get("embed_backlog", 0) > 0:
                break
            time.sleep(1)
        while time.monotonic() < deadline:
            left = sample("during", kinds[turn % 3])
            turn += 1
            if left == 0:
                break
            time.sleep(a.every)
        for i in range(3 * a.after):
            sample("after", kinds[i % 3])
            time.sleep(0.5)
        st = p.status()
        if len(st["repos"]) != 1:
            sys.exit(f"pass_latency: {len(st['repos'])} repositories registered, expected 1")
    finally:
        p.run("daemon", "stop", check=False)
    summary = {"repo": str(repo)}
    for phase in ("during", "after"):
        for kind in ("hybrid", "lexical", "identifier"):
            sel = [r for r in rows if r["phase"] == phase and r["kind"] == kind and r["rc"] == 0]
            summary[f"{phase}/{kind}"] = {
                "wall_ms": stats([r["wall_ms"] for r in sel]),
                "took_ms": stats([r["took_ms"] for r in sel]),
                "oracles_median_ms": {
                    o: round(statistics.median([r["oracles"][o] for r in sel if o in r["oracles"]]), 1)
                    for o in sorted({o for r in sel for o in r["oracles"]})
                },
            }
    summary["failed"] = sum(1 for r in rows if r["rc"] != 0)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
