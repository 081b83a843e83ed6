#!/usr/bin/env python3
"""The lexical oracle's own time on a long text (issue 16: a long issue text's BM25 cost is
bounded): `patina q --json --oracle lexical "<first 10 KB of TEXT_FILE> runN"` × RUNS (a distinct
last word per run, so the query cache never answers), median and max of the oracle's `took_us`,
with how often it timed out. The repository must be registered and indexed in PATINA_HOME.

    PATINA_BIN=target/debug/patina REPO=CLONE TEXT_FILE=FILE RUNS=15 bench/long_text_lexical.py
"""
import json, os, statistics, subprocess

BIN = os.environ.get("PATINA_BIN", "target/release/patina")
REPO = os.environ.get("REPO", ".")
RUNS = int(os.environ.get("RUNS", "15"))
text = open(os.environ["TEXT_FILE"]).read()[:10000]
took, statuses = [], []
for i in range(RUNS + 1):
    r = subprocess.run([BIN, "q", "--json", "--oracle", "lexical", f"{text} run{i}"],
                       cwd=REPO, capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    # JSON Lines: a line per hit, then the summary (with the oracles' reports) last.
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary.get("type") == "summary", summary
    o = summary["oracles"][0]
    if i == 0:
        continue  # warm-up
    took.append(o["took_us"] / 1000)
    statuses.append(o["status"])
print("lexical oracle on a %d-byte text: median %.1f ms, max %.1f ms, %d/%d timeouts"
      % (len(text), statistics.median(took), max(took), statuses.count("timeout"), RUNS))
