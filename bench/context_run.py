#!/usr/bin/env python3
"""Every context set through `patina bench context`, one table: line recall, file recall and
characters at each budget, for the default, lexical only and the two baselines (issue 64).

    python3 bench/context_run.py --bin target/release --home /tmp/ctx-home --repos /work/repos \
        --out /tmp/ctx.json [--sets tokio,cobra] [--model] [--config 'locate_files = 0'] \
        [--swebench /work/sets] [--oracle all]

Sets: `bench/questions/context/NAME.jsonl`, each evaluated in the clone `REPOS/NAME` (bring them
with `fetch` and `git clone`, or a directory of links, one per set: `/work/repos/ctx`); with `--swebench DIR`, also `DIR/swectx-NAME.jsonl` (the shared
swebench-context set split by repository) in `REPOS/NAME`. Without `--model` semantic search is
off, as the shared set's method says. `--config` appends a `[context]` line to the daemon's
config (e.g. `locate_files = 0`: matched pieces only, the assembly before locating). `--oracle`
asks only that subset's rows (`all`: the default's, what `context_loso.py` chooses by; without
it, the default and lexical only).
"""

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Patina  # noqa: E402

HERE = Path(__file__).resolve().parent


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--home", required=True)
    ap.add_argument("--repos", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sets", default="")
    ap.add_argument("--swebench", default="")
    ap.add_argument("--model", action="store_true")
    ap.add_argument("--config", default="")
    ap.add_argument("--budget", default="1000,2000,4000,8000")
    ap.add_argument("--oracle", action="append", default=[],
                    help="an oracle subset's rows only (repeat); default: all, then lexical")
    args = ap.parse_args()
    os.makedirs(args.home, exist_ok=True)
    if args.config:
        with open(os.path.join(args.home, "config.toml"), "a") as f:
            f.write(f"[context]\n{args.config}\n")
    p = Patina(args.bin, args.home, args.model)
    wanted = [s for s in args.sets.split(",") if s]
    runs = []
    for f in sorted((HERE / "questions" / "context").glob("*.jsonl")):
        runs.append((f.stem, f, f.stem))
    if args.swebench:
        for f in sorted(Path(args.swebench).glob("swectx-*.jsonl")):
            runs.append((f.stem, f, f.stem.split("-", 1)[1]))
    results = {}
    for name, questions, repo in runs:
        if wanted and name not in wanted:
            continue
        clone = os.path.join(args.repos, repo)
        print(f"== {name} ({clone})", file=sys.stderr, flush=True)
        oracles = [a for o in args.oracle for a in ("--oracle", o)]
        r = p.run("bench", "context", "--queries", str(questions), "--repo-dir", clone,
                  "--force", "--budget", args.budget, *oracles, "--json", check=False)
        if r.returncode != 0:
            print(f"{name}: failed: {r.stderr[-2000:]}", file=sys.stderr)
            continue
        results[name] = json.loads(r.stdout)
        with open(args.out, "w") as f:
            json.dump(results, f)
    p.run("daemon", "stop", check=False)
    print_table(results)


def print_table(results):
    for name, res in results.items():
        print(f"\n{name}: {res['questions']} questions")
        print(f"{'method':<16} {'budget':>7} {'lines':>7} {'files':>7} {'chars':>7}")
        for row in sorted(res["rows"], key=lambda r: (r["budget"], r["method"])):
            print(f"{row['method']:<16} {row['budget']:>7} {row['line_recall']:>7.3f} "
                  f"{row['file_recall']:>7.3f} {row['chars']:>7.0f}")


if __name__ == "__main__":
    main()
