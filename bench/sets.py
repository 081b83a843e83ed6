#!/usr/bin/env python3
"""Every retrieval set in one run, through the real daemon: the table a ranking change is judged by.

A gain on one set that costs another is not a gain, so a change to ranking is measured on all of
them at once, with the same binary and state, and compared per question against a baseline run.

    bench/sets.py run  --home DIR --repos DIR --out RUN.json [--bin target/release]
                       [--sets cosqa,own,langs,pytest,tokio] [--config TOML] [--history]
    bench/sets.py diff BASE.json NEW.json     # per set: figures side by side, questions won / lost
    bench/sets.py diff --first-ten BASE.json NEW.json   # questions whose first ten files are the same

--home   the PATINA_HOME of the run (created; `models` is linked to the installed model unless
         --no-model). Indices persist there, so a second run with the same home only catches up.
--repos  clones: own/{cobra,flask,ripgrep,express} and langs/{sinatra,koin,plug,slim,serilog,
         alamofire,mainargs,lazy,shelf,hakyll,bats,newtonsoft}
         (bench/questions/fetch.sh URL DIR/own own, ... DIR/langs langs), pytest, tokio
         (any clone of pytest-dev/pytest and tokio-rs/tokio; `patina bench` checks commits out).
--config the text of $PATINA_HOME/config.toml for this run (the daemon is restarted with it).
--fresh-ms  passed to `patina bench --repo-dir` (how long to wait for the embeddings to catch up).
--features  DIR: each set's file hits with their ranking features and labels, DIR/SET.jsonl
         (what bench/learn_rank.py fits and judges the learned ranking on).

Sets (../shared/eval and bench/questions):
  cosqa   CoSQA dev, 500 web questions -> Python functions
  own     124 questions over cobra (Go), flask (Python), ripgrep (Rust), express (JS), hono (TS),
          jsoup (Java)
  langs   494 questions: 20 each for sinatra and rack (Ruby), koin and mockk (Kotlin), plug and ecto
          (Elixir), slim (PHP), serilog and newtonsoft (C#), alamofire and kingfisher (Swift), lazy
          (Lua), shelf (Dart), hakyll
          (Haskell), pyenv (Bash), afnetworking (Objective-C), munit (Scala), libuv (C), httpjl
          (Julia), fmt (C++), 19 each for mainargs (Scala), bats (Bash), httpzig (Zig) and lwt
          (OCaml), 18 for cowboy (Erlang); measured like own
  new     180 questions, 20 each, over seaborn (Python, data science), fzf (Go CLI), lumen (PHP web
          framework), nancy (C# web framework), chibicc (a C compiler), fd (Rust CLI), zod
          (TypeScript), gson (Java), starlette (Python web framework): --repos DIR/new/NAME
  heldout 20 questions over gin (Go web framework), kept aside: not fitted on, reported once
  pytest  34 GitHub issues -> files of the fix (SWE-bench) (+ history with --history)
  tokio   100 commit messages -> files (run with --no-model, as RESULTS does; + lexical,symbol)
  more    swebench-more: GitHub issues -> files of the fix in xarray and astropy (more-xarray,
          more-astropy; --repos DIR/xarray and DIR/astropy; instances whose commit the clone
          lacks blobs of are left out and counted)
Each set is measured with the lexical and the semantic oracle alone and with the default oracles
(without the model: lexical alone and lexical,symbol,graph).
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path

from common import models_dir, patina_env

HERE = Path(__file__).resolve().parent
EVAL = (HERE / ".." / ".." / "shared" / "eval").resolve()
DEFAULT = "lexical,symbol,semantic,graph"
OWN = ["cobra", "flask", "ripgrep", "express", "hono", "jsoup"]
NEW = ["seaborn", "fzf", "lumen", "nancy", "chibicc", "fd", "zod", "gson", "starlette"]
LANGS = ["sinatra", "koin", "plug", "slim", "serilog", "alamofire", "mainargs", "lazy", "shelf", "hakyll", "bats", "newtonsoft", "pyenv", "mockk", "cowboy", "httpzig", "afnetworking", "lwt", "munit", "libuv", "httpjl", "fmt", "rack", "ecto", "kingfisher"]


def patina(args, env, binary):
    cmd = [str(Path(binary) / "patina"), *args]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"sets: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return r.stdout


FRESH_MS = None  # --fresh-ms: passed to `patina bench` with --repo-dir when set
FEATURES = None  # --features DIR: each set's ranking features, DIR/SET.jsonl


def bench(env, binary, oracles, queries, corpus=None, repo_dir=None, name=None):
    args = ["bench", "retrieval", "--queries", str(queries), "--json"]
    if FEATURES:
        args += ["--features", str(FEATURES / f"{name}.jsonl")]
    args += ["--corpus", str(corpus)] if corpus else ["--repo-dir", str(repo_dir), "--force"]
    if repo_dir and FRESH_MS:
        args += ["--fresh-ms", str(FRESH_MS)]
    for o in oracles:
        args += ["--oracle", o]
    out = json.loads(patina(args, env, binary))
    rows = {}
    for subset in out["subsets"]:
        row = next(r for r in out["rows"] if r["oracles"] == subset["oracles"] and not r.get("kind"))
        rows[subset["oracles"]] = {
            "figures": {k: row[k] for k in ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10",
                                            "chunk_ndcg@10", "latency_p50_ms")},
            "queries": {q["id"]: q for q in subset["queries"]},
        }
    return rows


def run(a):
    global FRESH_MS, FEATURES
    FRESH_MS = a.fresh_ms
    if a.features:
        FEATURES = Path(a.features).resolve()
        FEATURES.mkdir(parents=True, exist_ok=True)
    home = Path(a.home).resolve()
    home.mkdir(parents=True, exist_ok=True)
    models = home / "models"
    if not a.no_model and not models.exists():
        models.symlink_to(models_dir())
    env = patina_env(home)
    env.pop("PATINA_SOCKET", None)
    subprocess.run([str(Path(a.bin) / "patina"), "daemon", "stop"], env=env, capture_output=True)
    if a.config is not None:
        (home / "config.toml").write_text(a.config.replace("\\n", "\n") + "\n")
    repos = Path(a.repos).resolve()
    sets = a.sets.split(",")
    result = {}
    # Every set is measured with each single oracle beside the default: the default must never be
    # worse than the best of them. Without the model, the default is the lexical oracles + graph.
    singles = ["lexical"] if a.no_model else ["lexical", "semantic"]
    if a.default_only:
        singles = []
    default = "lexical,symbol,graph" if a.no_model else DEFAULT
    if "cosqa" in sets:
        result["cosqa"] = bench(env, a.bin, singles + [default],
                                EVAL / "cosqa" / "dev.jsonl", corpus=EVAL / "cosqa" / "corpus.jsonl", name="cosqa")
    for n in OWN:
        if "own" in sets or n in sets:
            result[n] = bench(env, a.bin, singles + [default], HERE / "questions" / f"{n}.jsonl",
                              repo_dir=repos / "own" / n, name=n)
    for n in LANGS:
        if "langs" in sets or n in sets:
            result[n] = bench(env, a.bin, singles + [default], HERE / "questions" / f"{n}.jsonl",
                              repo_dir=repos / "langs" / n, name=n)
    for n in NEW:
        if "new" in sets or n in sets:
            result[n] = bench(env, a.bin, singles + [default], HERE / "questions" / f"{n}.jsonl",
                              repo_dir=repos / "new" / n, name=n)
    if "heldout" in sets:
        result["gin"] = bench(env, a.bin, singles + [default], HERE / "questions" / "heldout" / "gin.jsonl",
                              repo_dir=repos / "new" / "gin", name="heldout-gin")
    if "pytest" in sets:
        rows = singles + [default] + ([default + ",history"] if a.history else [])
        result["pytest"] = bench(env, a.bin, rows, EVAL / "swebench-pytest" / "dev.jsonl",
                                 repo_dir=repos / "pytest", name="pytest")
    for n in ["xarray", "astropy"]:
        if "more" in sets or f"more-{n}" in sets:
            queries = more_queries(home, repos / n, n)
            result[f"more-{n}"] = bench(env, a.bin, singles + [default], queries,
                                        repo_dir=repos / n, name=f"more-{n}")
    if "tokio" in sets:
        rows = singles + ([] if a.default_only else ["lexical,symbol"]) + [default] + (["lexical,history"] if a.history else [])
        result["tokio"] = bench(env, a.bin, rows, EVAL / "commits-tokio" / "dev.jsonl",
                                repo_dir=repos / "tokio", name="tokio")
    subprocess.run([str(Path(a.bin) / "patina"), "daemon", "stop"], env=env, capture_output=True)
    Path(a.out).write_text(json.dumps(result, indent=1))
    table(result)


def more_queries(home, clone, name):
    """swebench-more's questions of one repository whose base commit the clone holds whole (the
    astropy snapshot lacks a few large blobs: those instances are left out, and counted)."""
    owner = {"xarray": "pydata/xarray", "astropy": "astropy/astropy"}[name]
    lines = [json.loads(l) for l in (EVAL / "swebench-more" / "dev.jsonl").read_text().splitlines() if l.strip()]
    kept = []
    for q in lines:
        if q["repo"] != owner:
            continue
        whole = subprocess.run(["git", "-C", str(clone), "archive", "--format=tar", q["commit"]],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        if whole:
            kept.append(q)
    total = sum(q["repo"] == owner for q in lines)
    if len(kept) < total:
        print(f"more-{name}: {len(kept)} of {total} questions (the other base commits lack blobs "
              f"in the clone)", file=sys.stderr)
    out = home / f"more-{name}.jsonl"
    out.write_text("".join(json.dumps(q) + "\n" for q in kept))
    return out


def table(result, base=None):
    print(f"{'set':<9} {'oracles':<36} {'R@1':>6} {'R@5':>6} {'MRR@10':>7} {'nDCG@10':>8}"
          + ("   base MRR  won lost" if base else ""))
    for name, rows in result.items():
        for oracles, row in rows.items():
            f = row["figures"]
            line = (f"{name:<9} {oracles:<36} {f['recall@1']:>6.3f} {f['recall@5']:>6.3f} "
                    f"{f['mrr@10']:>7.3f} {f['ndcg@10']:>8.3f}")
            b = (base or {}).get(name, {}).get(oracles)
            if b:
                won = lost = 0
                for qid, q in row["queries"].items():
                    old = b["queries"].get(qid)
                    if old is None:
                        continue
                    d = rr(q) - rr(old)
                    won += d > 1e-9
                    lost += d < -1e-9
                line += f"   {b['figures']['mrr@10']:>8.3f} {won:>4} {lost:>4}"
            print(line)


def rr(q):
    rank = q.get("rank")
    return 0.0 if not rank or rank > 10 else 1.0 / rank


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--home", required=True)
    r.add_argument("--repos", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--bin", default=str(HERE / ".." / "target" / "release"))
    r.add_argument("--sets", default="cosqa,own,pytest",
                   help="comma-separated: cosqa, own, langs, new, heldout, pytest, tokio, more, or one set of own/langs by name")
    r.add_argument("--config")
    r.add_argument("--history", action="store_true")
    r.add_argument("--no-model", action="store_true")
    r.add_argument("--default-only", action="store_true", help="measure the default oracles only "
                   "(no single-oracle rows): a quicker run when comparing settings of the fusion")
    r.add_argument("--fresh-ms", type=int, help="how long `patina bench` waits for a checkout's index "
                   "and embeddings (its default: 600000); raise it on a loaded machine")
    r.add_argument("--features", metavar="DIR", help="write each set's ranking features "
                   "(`patina bench retrieval --features`) to DIR/SET.jsonl: bench/learn_rank.py's data")
    d = sub.add_parser("diff")
    d.add_argument("base")
    d.add_argument("new")
    d.add_argument("--first-ten", action="store_true", help="instead of figures: per set and row, "
                   "the questions whose first ten files are the same, in the same order (a change "
                   "meant to leave retrieval as it was is checked with this); exit 1 on any other")
    a = p.parse_args()
    if a.cmd == "run":
        run(a)
    elif a.first_ten:
        sys.exit(same_first_ten(json.loads(Path(a.base).read_text()), json.loads(Path(a.new).read_text())))
    else:
        table(json.loads(Path(a.new).read_text()), json.loads(Path(a.base).read_text()))


def same_first_ten(base, new):
    """Prints, per set and row both runs have, how many questions got the same first ten files in
    the same order, and the first question of each row that did not; returns 1 when any differ
    (or a question, row or set is in one run only), else 0."""
    differ = 0
    for name in sorted(set(base) | set(new)):
        if name not in base or name not in new:
            print(f"{name:<12} only in {'the new run' if name in new else 'the base run'}")
            differ = 1
            continue
        for row in sorted(set(base[name]) | set(new[name])):
            b, n = base[name].get(row), new[name].get(row)
            if b is None or n is None:
                print(f"{name:<12} {row:<36} only in {'the new run' if b is None else 'the base run'}")
                differ = 1
                continue
            ids = sorted(set(b["queries"]) | set(n["queries"]))
            files = lambda q: [h["path"] for h in (q or {}).get("hits", [])][:10]
            other = [i for i in ids if i not in b["queries"] or i not in n["queries"]
                     or files(b["queries"][i]) != files(n["queries"][i])]
            line = f"{name:<12} {row:<36} {len(ids) - len(other):>5} of {len(ids):>5} the same"
            if other:
                q = other[0]
                line += (f"; first other: {q}: {files(b['queries'].get(q))[:3]} -> "
                         f"{files(n['queries'].get(q))[:3]}")
                differ = 1
            print(line)
    return differ


if __name__ == "__main__":
    main()
