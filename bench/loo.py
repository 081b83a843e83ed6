#!/usr/bin/env python3
"""Leave-one-set-out choice of a ranking setting, from `bench/sets.py run` results.

Each setting was run on every set (`sets.py run --config ...`, one or more JSON files per
setting: the model sets and the no-model sets may be separate runs). For each set held out, the
setting with the best mean default nDCG@10 over the *other* sets is chosen, and its figures on
the held-out set are reported beside the first setting's (the baseline) and the best single oracle
of the same run. A setting only one set wants is then seen for what it is.

    bench/loo.py NAME=RUN.json[,RUN2.json] NAME2=... [--metric ndcg@10]

The first NAME is the baseline. Prints the held-out table and each setting's mean over all sets.
"""
import argparse
import json
from pathlib import Path

SETS = ["cosqa", "cobra", "flask", "ripgrep", "express", "pytest", "tokio",
        "sinatra", "koin", "plug", "slim", "serilog", "alamofire"]


def load(spec):
    name, files = spec.split("=", 1)
    runs = {}
    for f in files.split(","):
        runs.update(json.loads(Path(f).read_text()))
    return name, runs


def figures(rows):
    """The default row's figures and the best single oracle's nDCG@10 and MRR@10."""
    singles = [rows[k]["figures"] for k in ("lexical", "semantic") if k in rows]
    default = [k for k in rows if "+" in k and "history" not in k][-1]
    # (A run of the default alone, `sets.py run --default-only`, has no single-oracle rows.)
    return (rows[default]["figures"],
            max((s["ndcg@10"] for s in singles), default=float("nan")),
            max((s["mrr@10"] for s in singles), default=float("nan")))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("settings", nargs="+")
    p.add_argument("--metric", default="ndcg@10")
    a = p.parse_args()
    runs = dict(load(s) for s in a.settings)
    names = [s.split("=", 1)[0] for s in a.settings]
    sets = [s for s in SETS if all(s in runs[n] for n in names)]
    f = {(n, s): figures(runs[n][s]) for n in names for s in sets}
    m = a.metric
    mean = lambda n, over: sum(f[n, s][0][m] for s in over) / len(over)
    print(f"sets: {', '.join(sets)}; chosen by mean default {m} over the other sets")
    print(f"{'held out':<9} {'chosen':<14} {'nDCG@10':>8} {'MRR@10':>7}   {'baseline':>8} {'MRR@10':>7}   "
          f"{'best single':>11} {'MRR@10':>7}")
    for h in sets:
        train = [s for s in sets if s != h]
        best = max(names, key=lambda n: mean(n, train))
        d, bn, bm = f[best, h]
        d0 = f[names[0], h][0]
        print(f"{h:<9} {best:<14} {d['ndcg@10']:>8.3f} {d['mrr@10']:>7.3f}   {d0['ndcg@10']:>8.3f} "
              f"{d0['mrr@10']:>7.3f}   {bn:>11.3f} {bm:>7.3f}")
    print("mean over all sets:")
    for n in names:
        worst = min(f[n, s][0][m] - f[n, s][1] for s in sets)
        print(f"  {n:<14} {mean(n, sets):.4f}   worst default - best single: {worst:+.3f}")


if __name__ == "__main__":
    main()
