#!/usr/bin/env python3
"""Validate the retrieval question set.

Usage: validate.py CLONES_DIR [CLONES_DIR ...]
Each CLONES_DIR holds clones named after the JSONL files (cobra, flask,
ripgrep, express, sinatra, koin, plug, slim, serilog, alamofire), e.g. as
created by fetch.sh; a repository is looked up in each directory in turn
(e.g. `validate.py DIR/own DIR/langs` for bench/sets.py's layout).

Checks: every file is JSON Lines with the expected fields, ids are unique,
every relevant path exists at the recorded commit
(git cat-file -e COMMIT:PATH), and prints counts per repository and kind.
"""
import collections, json, pathlib, subprocess, sys

KINDS = {"how", "where", "behaviour", "identifier", "docs", "tests"}
FIELDS = {"id", "repo", "commit", "query", "relevant", "kind"}

def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    dirs = [pathlib.Path(d) for d in sys.argv[1:]]
    here = pathlib.Path(__file__).resolve().parent
    errors, ids, counts = [], set(), collections.Counter()
    for f in sorted(here.glob("*.jsonl")):
        name = f.stem
        clone = next((d / name for d in dirs if (d / name).exists()), dirs[0] / name)
        for n, line in enumerate(f.read_text().splitlines(), 1):
            where = f"{f.name}:{n}"
            try:
                q = json.loads(line)
            except json.JSONDecodeError as e:
                errors.append(f"{where}: bad JSON: {e}")
                continue
            if set(q) != FIELDS:
                errors.append(f"{where}: fields {sorted(q)}")
                continue
            if q["id"] in ids:
                errors.append(f"{where}: duplicate id {q['id']}")
            ids.add(q["id"])
            if q["kind"] not in KINDS:
                errors.append(f"{where}: unknown kind {q['kind']}")
            if not q["query"].strip():
                errors.append(f"{where}: empty query")
            if not 1 <= len(q["relevant"]) <= 3:
                errors.append(f"{where}: {len(q['relevant'])} relevant paths")
            for r in q["relevant"]:
                spec = f"{q['commit']}:{r['path']}"
                rc = subprocess.run(["git", "-C", str(clone), "cat-file", "-e", spec],
                                    capture_output=True).returncode
                if rc != 0:
                    errors.append(f"{where}: {spec} missing in {clone}")
            counts[(name, q["kind"])] += 1
    for e in errors:
        print("ERROR", e)
    repos = sorted({r for r, _ in counts})
    kinds = ["how", "where", "behaviour", "identifier", "docs", "tests"]
    print("repo".ljust(10), *[k.rjust(10) for k in kinds], "total".rjust(7))
    for r in repos:
        row = [counts[(r, k)] for k in kinds]
        print(r.ljust(10), *[str(v).rjust(10) for v in row], str(sum(row)).rjust(7))
    tot = [sum(counts[(r, k)] for r in repos) for k in kinds]
    print("all".ljust(10), *[str(v).rjust(10) for v in tot], str(sum(tot)).rjust(7))
    return 1 if errors else 0

if __name__ == "__main__":
    sys.exit(main())
