#!/usr/bin/env python3
"""Leave one set out between assembly settings (issue 64): for each context set, the setting with
the best mean line recall on the *other* sets is chosen, and its figures on the held-out set are
reported. The held-out mean is the honest figure; the in-sample best is printed beside it to show
the gap.

    python3 bench/context_loso.py NAME=RUN.json NAME=RUN.json ... [--budget 4000] [--method all]
        [--keep-files-of NAME]

Each RUN.json is the `--out` of `bench/context_run.py` for one setting (e.g. `depth1=a.json
depth05=b.json`); only sets present in every run are used.
"""

import argparse
import json
import statistics


def cell(run, name, method, budget):
    for row in run[name]["rows"]:
        if row["method"] == method and row["budget"] == budget:
            return row
    raise SystemExit(f"{name}: no row for {method} at {budget}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="SETTING=RUN.json")
    ap.add_argument("--budget", type=int, default=4000)
    ap.add_argument("--method", default="all", help="the oracle subset's row (all: the default)")
    ap.add_argument("--keep-files-of", metavar="SETTING",
                    help="only settings whose file recall on the other sets is at least this "
                         "setting's (less --tolerance) may be chosen: file recall does not drop")
    ap.add_argument("--tolerance", type=float, default=0.02)
    args = ap.parse_args()
    runs = {}
    for spec in args.runs:
        setting, path = spec.split("=", 1)
        with open(path) as f:
            runs[setting] = json.load(f)
    sets = sorted(set.intersection(*(set(r) for r in runs.values())))
    if len(sets) < 2:
        raise SystemExit("leave one set out needs at least two sets common to every run")
    line = {s: {n: cell(r, n, args.method, args.budget)["line_recall"] for n in sets}
            for s, r in runs.items()}
    files = {s: {n: cell(r, n, args.method, args.budget)["file_recall"] for n in sets}
             for s, r in runs.items()}
    print(f"| held-out set | chosen on the others | line recall | file recall |")
    print("|---|---|---|---|")
    held_line, held_file = [], []
    for n in sets:
        others = [m for m in sets if m != n]
        allowed = [s for s in runs if not args.keep_files_of
                   or statistics.mean(files[s][m] for m in others)
                   >= statistics.mean(files[args.keep_files_of][m] for m in others) - args.tolerance]
        chosen = max(allowed, key=lambda s: (statistics.mean(line[s][m] for m in others), s))
        held_line.append(line[chosen][n])
        held_file.append(files[chosen][n])
        print(f"| {n} | {chosen} | {line[chosen][n]:.3f} | {files[chosen][n]:.2f} |")
    best = max(runs, key=lambda s: statistics.mean(line[s].values()))
    print(f"| **held-out mean** | | **{statistics.mean(held_line):.3f}** | "
          f"**{statistics.mean(held_file):.2f}** |")
    print(f"\nIn-sample: the best setting on all sets is {best}, line recall "
          f"{statistics.mean(line[best].values()):.3f}, file recall "
          f"{statistics.mean(files[best].values()):.2f}. Every setting, mean line / file recall: "
          + "; ".join(f"{s} {statistics.mean(line[s].values()):.3f} / "
                      f"{statistics.mean(files[s].values()):.2f}" for s in runs))


if __name__ == "__main__":
    main()
