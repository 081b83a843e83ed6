#!/usr/bin/env python3
"""Fit the learned ranking stage on every labelled set at once, and judge it only on sets it never saw.

    PYTHONPATH=DIR_WITH_NUMPY_SCIPY python3 bench/learn_rank.py --features DIR [--folds set|language]
        [--out MODEL.json] [--lambdas 0.03,0.3,3,30] [--json OUT.json]

DIR holds one `patina bench retrieval --features` file per set (`bench/sets.py run --features DIR`
writes DIR/SET.jsonl): each query's first 30 file hits in today's order, each with its named
ranking features (`patina_retrieve::features`) and whether it is relevant.

The model is linear over those features: a file's learned score is w . x, and the first 30 are
reordered by it (`patina_retrieve::learned`). Today's order is w = (score: 1, the rest 0), the
starting point: the fit minimises a pairwise logistic loss (every relevant file above every other
file of its question), each set weighing the same and each question the same within its set, plus
lambda * |w - today|^2, so a feature moves away from 0 only as far as the data of many sets asks.
The fit is deterministic (L-BFGS from today's weights, no sampling).

Judged out of sample only: for each fold (a set, or with --folds language every set of one
language), the model is fitted on the other folds, lambda chosen among --lambdas by an inner
leave-one-fold-out over those other folds alone, and the held-out fold's questions are ranked by
it. The table shows, per set: lexical, semantic (their own rows of the run, when it had them),
today's default, the learned default held out, and in-sample (fitted on everything, to show the
gap); and how often the default put another file first when lexical and semantic agreed on the
first file (overruled), and how often that was right.

--out writes the model fitted on every set (lambda chosen by leave-one-fold-out over all of them)
in the format `crates/retrieve/data/rank-model.json` ships, with the data and command recorded.
"""
import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

# The feature order of `patina_retrieve::features::Feature::ALL`.
FEATURES = [
    "score", "place", "lexical", "semantic", "symbol", "graph", "history", "cochange",
    "lexical_evidence", "semantic_evidence", "agreement", "unanimous_first", "role_factor",
    "definition_factor", "path_factor", "mention_factor", "near_factor", "test", "docs", "example",
    "other_role", "test_for_tests", "docs_for_usage", "reexport", "module_root", "declaration",
    "semantic_prose", "symbol_named", "lexical_long",
]
TODAY = np.eye(len(FEATURES))[0]

# The language of each set, for --folds language (sets of one language are held out together).
LANGUAGE = {
    "cobra": "go", "flask": "python", "ripgrep": "rust", "express": "javascript", "hono": "typescript",
    "jsoup": "java", "sinatra": "ruby", "rack": "ruby", "koin": "kotlin", "mockk": "kotlin",
    "plug": "elixir", "ecto": "elixir", "slim": "php", "serilog": "csharp", "newtonsoft": "csharp",
    "alamofire": "swift", "kingfisher": "swift", "mainargs": "scala", "munit": "scala", "lazy": "lua",
    "shelf": "dart", "hakyll": "haskell", "bats": "bash", "pyenv": "bash", "cowboy": "erlang",
    "httpzig": "zig", "afnetworking": "objc", "lwt": "ocaml", "libuv": "c", "httpjl": "julia",
    "fmt": "cpp", "cosqa": "python", "pytest": "python", "tokio": "rust", "more-xarray": "python",
    "more-astropy": "python", "seaborn": "python", "fzf": "go", "lumen": "php", "nancy": "csharp",
    "chibicc": "c", "fd": "rust", "zod": "typescript", "gson": "java", "starlette": "python",
}


class Question:
    __slots__ = ("id", "x", "y", "n_relevant", "unanimous")

    def __init__(self, line):
        self.id = line["id"]
        hits = line["hits"]
        self.x = np.array([[h["features"].get(f, 0.0) for f in FEATURES] for h in hits], dtype=float)
        self.x = self.x.reshape(len(hits), len(FEATURES))
        self.y = np.array([bool(h["relevant"]) for h in hits])
        self.n_relevant = len(set(line["relevant"]))
        u = np.flatnonzero(self.x[:, FEATURES.index("unanimous_first")] > 0.5) if len(hits) else []
        self.unanimous = int(u[0]) if len(u) else None


def mrr10(y_in_order, n_relevant):
    hit = np.flatnonzero(y_in_order[:10])
    return 1.0 / (hit[0] + 1) if len(hit) else 0.0


METRIC = None  # --metric: ndcg10 or mrr10


def ndcg10(y_in_order, n_relevant):
    gains = y_in_order[:10]
    dcg = sum(1.0 / np.log2(i + 2) for i, g in enumerate(gains) if g)
    idcg = sum(1.0 / np.log2(i + 2) for i in range(min(n_relevant, 10)))
    return dcg / idcg if idcg > 0 else 0.0


def order(q, w):
    """The learned order of one question: stable, ties keep today's order."""
    s = q.x @ w
    return sorted(range(len(s)), key=lambda i: (-s[i], i))


def evaluate(questions, w):
    """Mean nDCG@10 and the overrule counts (unanimous first not first: how often, how often rightly)."""
    scores, over, right = [], 0, 0
    for q in questions:
        o = order(q, w) if w is not None else list(range(len(q.y)))
        scores.append(METRIC(q.y[o], q.n_relevant))
        if q.unanimous is not None and o and o[0] != q.unanimous:
            over += 1
            right += int(q.y[o[0]] and not q.y[q.unanimous])
    return (float(np.mean(scores)) if scores else 0.0), over, right


_PAIRS = {}


def set_pairs(qs):
    """One set's (relevant, other) pair feature differences and weights: each of its questions an
    equal share of 1, each pair an equal share of its question. Cached per set."""
    key = id(qs)
    if key not in _PAIRS:
        usable = [q for q in qs if q.y.any() and (~q.y).any()]
        diffs, weights = [np.zeros((0, len(FEATURES)))], [np.zeros(0)]
        for q in usable:
            pos, neg = q.x[q.y], q.x[~q.y]
            d = (pos[:, None, :] - neg[None, :, :]).reshape(-1, len(FEATURES))
            diffs.append(d)
            weights.append(np.full(len(d), 1.0 / (len(d) * len(usable))))
        _PAIRS[key] = (np.vstack(diffs), np.concatenate(weights))
    return _PAIRS[key]


def fit(sets, lam):
    """w minimising the mean over sets of the pairwise logistic loss, + lam * |w - today|^2."""
    parts = [set_pairs(qs) for qs in sets]
    d = np.vstack([p[0] for p in parts])
    wt = np.concatenate([p[1] for p in parts]) / max(len(sets), 1)
    if len(d) == 0:
        return TODAY.copy()

    def loss(w):
        m = d @ w
        l = np.logaddexp(0.0, -m)
        g_m = -wt * (1.0 / (1.0 + np.exp(np.clip(m, -50, 50))))
        r = w - TODAY
        return float(wt @ l + lam * r @ r), d.T @ g_m + 2 * lam * r

    res = minimize(loss, TODAY.copy(), jac=True, method="L-BFGS-B", options={"maxiter": 500})
    return res.x


def choose_lambda(folds, lambdas):
    """The lambda with the best mean held-out nDCG@10 over leave-one-fold-out of `folds`."""
    best = None
    for lam in lambdas:
        held = []
        for i in range(len(folds)):
            train = [s for j, f in enumerate(folds) if j != i for s in f]
            w = fit(train, lam)
            held.extend(evaluate(s, w)[0] for s in folds[i])
        m = float(np.mean(held))
        if best is None or m > best[0] + 1e-12:
            best = (m, lam)
    return best[1]


def load(directory):
    sets = {}
    for path in sorted(Path(directory).glob("*.jsonl")):
        by_subset = {}
        for l in path.read_text().splitlines():
            if l.strip():
                line = json.loads(l)
                by_subset.setdefault(line["subset"], []).append(line)
        sets[path.stem] = by_subset
    return sets


def default_subset(by_subset):
    """The default oracles' rows: the subset with the most oracles, history aside."""
    parts = lambda s: re.split(r"[+,]", s)
    names = [s for s in by_subset if "history" not in parts(s)]
    return max(names, key=lambda s: (len(parts(s)), s))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--features", required=True, help="directory of SET.jsonl feature files")
    p.add_argument("--folds", choices=["set", "language"], default="set")
    p.add_argument("--lambdas", default="0.03,0.3,3,30")
    p.add_argument("--out", help="write the model fitted on every set here")
    p.add_argument("--json", help="write the per-set figures here")
    p.add_argument("--markdown", help="write the table as Markdown here (bench/RESULTS.md)")
    p.add_argument("--metric", choices=["ndcg10", "mrr10"], default="ndcg10",
                   help="what the table reports and lambda is chosen by (the fit is the same loss)")
    a = p.parse_args()
    global METRIC
    METRIC = {"ndcg10": ndcg10, "mrr10": mrr10}[a.metric]
    lambdas = [float(x) for x in a.lambdas.split(",")]
    raw = load(a.features)
    if not raw:
        sys.exit(f"learn_rank: no *.jsonl in {a.features}")
    names = sorted(raw)
    default = {n: [Question(l) for l in raw[n][default_subset(raw[n])]] for n in names}
    key = (lambda n: n) if a.folds == "set" else (lambda n: LANGUAGE.get(n, n))
    fold_keys = sorted({key(n) for n in names})
    folds = {k: [n for n in names if key(n) == k] for k in fold_keys}

    held_w, held_lam = {}, {}
    for k in fold_keys:
        train_keys = [j for j in fold_keys if j != k]
        train_folds = [[default[n] for n in folds[j]] for j in train_keys]
        lam = choose_lambda(train_folds, lambdas) if len(train_folds) > 1 else lambdas[0]
        w = fit([s for f in train_folds for s in f], lam)
        for n in folds[k]:
            held_w[n], held_lam[n] = w, lam
        print(f"fold {k}: lambda {lam}", file=sys.stderr)
    all_lam = choose_lambda([[default[n] for n in folds[k]] for k in fold_keys], lambdas)
    w_all = fit([default[n] for n in names], all_lam)

    rows = []
    for n in names:
        single = {}
        for o in ("lexical", "semantic"):
            if o in raw[n]:
                single[o] = evaluate([Question(l) for l in raw[n][o]], None)[0]
        today, t_over, t_right = evaluate(default[n], None)
        held, h_over, h_right = evaluate(default[n], held_w[n])
        ins = evaluate(default[n], w_all)[0]
        unanimous = sum(q.unanimous is not None for q in default[n])
        rows.append(dict(set=n, questions=len(default[n]), lexical=single.get("lexical"),
                         semantic=single.get("semantic"), today=today, learned=held,
                         in_sample=ins, unanimous=unanimous, today_overruled=t_over,
                         today_rightly=t_right, learned_overruled=h_over, learned_rightly=h_right,
                         lam=held_lam[n]))
    fmt = lambda x: "     -" if x is None else f"{x:6.3f}"
    print(f"{a.metric}   folds: {a.folds}   lambdas: {lambdas}   lambda on all: {all_lam}")
    print(f"{'set':<14} {'n':>4} {'lexical':>7} {'semantic':>8} {'today':>6} {'learned':>7} "
          f"{'in-smp':>6}  {'unan':>4} {'overruled today':>15} {'learned':>8}")
    for r in rows:
        print(f"{r['set']:<14} {r['questions']:>4} {fmt(r['lexical']):>7} {fmt(r['semantic']):>8} "
              f"{fmt(r['today'])} {fmt(r['learned']):>7} {fmt(r['in_sample'])}  {r['unanimous']:>4} "
              f"{r['today_overruled']:>7} ({r['today_rightly']} right) {r['learned_overruled']:>3} "
              f"({r['learned_rightly']} right)")
    mean = lambda k: float(np.mean([r[k] for r in rows]))
    print(f"{'mean':<14} {sum(r['questions'] for r in rows):>4} {'':>7} {'':>8} {mean('today'):6.3f} "
          f"{mean('learned'):7.3f} {mean('in_sample'):6.3f}")
    best_single = [max(v for v in (r["lexical"], r["semantic"]) if v is not None)
                   for r in rows if r["lexical"] is not None or r["semantic"] is not None]
    if best_single:
        below_t = sum(r["today"] < b - 0.005 for r, b in zip(rows, best_single))
        below_l = sum(r["learned"] < b - 0.005 for r, b in zip(rows, best_single))
        print(f"below the best single oracle - 0.005: today {below_t}, learned {below_l} of {len(rows)}")
    print("weights fitted on every set: " + ", ".join(
        f"{f} {x:+.3f}" for f, x in zip(FEATURES, w_all) if abs(x - TODAY[FEATURES.index(f)]) > 1e-3))
    if a.markdown:
        f3 = lambda x: "–" if x is None else f"{x:.3f}"
        with open(a.markdown, "w") as out:
            out.write(f"| set | n | lexical | semantic | today | learned (held out) | in-sample | "
                      f"lex = sem first | today overrules (right) | learned overrules (right) |\n"
                      f"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
            for r in rows:
                out.write(f"| {r['set']} | {r['questions']} | {f3(r['lexical'])} | {f3(r['semantic'])} | "
                          f"{f3(r['today'])} | {f3(r['learned'])} | {f3(r['in_sample'])} | {r['unanimous']} | "
                          f"{r['today_overruled']} ({r['today_rightly']}) | {r['learned_overruled']} "
                          f"({r['learned_rightly']}) |\n")
            out.write(f"| **mean** | {sum(r['questions'] for r in rows)} | "
                      f"{f3(np.mean([r['lexical'] for r in rows if r['lexical'] is not None]))} | "
                      f"{f3(np.mean([r['semantic'] for r in rows if r['semantic'] is not None]) if any(r['semantic'] is not None for r in rows) else None)} | "
                      f"**{mean('today'):.3f}** | **{mean('learned'):.3f}** | {mean('in_sample'):.3f} | "
                      f"{sum(r['unanimous'] for r in rows)} | {sum(r['today_overruled'] for r in rows)} "
                      f"({sum(r['today_rightly'] for r in rows)}) | {sum(r['learned_overruled'] for r in rows)} "
                      f"({sum(r['learned_rightly'] for r in rows)}) |\n")
    if a.json:
        Path(a.json).write_text(json.dumps(dict(folds=a.folds, rows=rows, lambda_all=all_lam,
                                                weights=dict(zip(FEATURES, w_all.tolist()))), indent=1))
    if a.out:
        model = {
            "version": 1,
            "made_by": "python3 bench/learn_rank.py " + " ".join(sys.argv[1:]),
            "data": {"sets": {n: len(default[n]) for n in names}, "lambda": all_lam,
                     "held_out_mean_ndcg10": mean("learned"), "today_mean_ndcg10": mean("today")},
            "pool": 30,
            "weights": {f: round(float(x), 6) for f, x in zip(FEATURES, w_all) if abs(x) > 1e-6},
        }
        Path(a.out).write_text(json.dumps(model, indent=2) + "\n")


if __name__ == "__main__":
    main()
