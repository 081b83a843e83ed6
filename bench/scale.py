#!/usr/bin/env python3
"""Patina at scale: register enough repositories to hold N chunks and measure what a user meets.

Real repositories (git directories given with --source; e.g. snapshots brought with `fetch`) are
cloned as they are; when they hold fewer than --chunks chunks, *variants* are added to reach the
size: clones, committed with a mark of their own so each variant is its own repository. With
`--mark line` (the default) every text file gets a variant line at the top: each file's first chunk
is new text and must be embedded, the rest are the original's. With `--mark file` every directory
gets a small file of its own instead and the original files stay as they are: the lexical index
holds every copy, and the embedding cache, which is keyed by content, gives the copies the
original's vectors (as it does for a worktree or a second clone), so a run with the model
reaches 1M chunks without embedding 1M texts.

Reported (JSON with --json, else a table):
- cold index time (first `add` to every repository indexed; with the model, also to every chunk
  embedded), chunks, on-disk size of the state root, idle RSS of the daemon;
- `patina q` whole-process p50/p95 for lexical, symbol and (with the model) hybrid, over identifier
  and question queries, with --all (every repository searched);
- save → searchable: a new function written into one repository until `patina q` finds it;
- a branch switch of 1,000 files: checkout of a branch that changed 1,000 files until the
  repository is fresh again, and back.

    bench/scale.py --chunks 100000 --work /tmp/scale --source /work/repos/tokio --source ... \\
        [--bin target/release] [--mark line|file] [--model [--precision int8]] [--settle 330] [--restart 420]
        [--rm-all] [--json]

With --model the model is taken from where `scripts/setup-model` installs it ($PATINA_MODEL_DIR's
parent, else $XDG_DATA_HOME/patina/models).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

from common import Patina, models_dir, pct, rss_of

QUERIES = {
    "identifier": ["spawn_blocking", "parse_args", "HttpClient", "Config", "read_to_end"],
    "question": ["how are flags parsed", "where is the configuration loaded",
                 "retry a failed request with backoff", "how does the scheduler wake a task"],
}
TEXT_EXT = {".rs", ".py", ".go", ".js", ".ts", ".tsx", ".java", ".c", ".h", ".cc", ".cpp",
            ".hpp", ".md", ".rst", ".txt", ".toml", ".json", ".yml", ".yaml"}
COMMENT = {".rs": "//", ".go": "//", ".js": "//", ".ts": "//", ".tsx": "//", ".java": "//",
           ".c": "//", ".h": "//", ".cc": "//", ".cpp": "//", ".hpp": "//", ".py": "#",
           ".toml": "#", ".yml": "#", ".yaml": "#"}



def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def make_variant(src, dst, k, mark):
    git(os.path.dirname(dst), "clone", "-q", src, dst)
    if k == 0:
        return
    for root, dirs, files in os.walk(dst):
        dirs[:] = [d for d in dirs if d != ".git"]
        if mark == "file":
            if any(os.path.splitext(f)[1] in TEXT_EXT for f in files):
                name = os.path.basename(root) or "root"
                with open(os.path.join(root, f"VARIANT_{k}.md"), "w", encoding="utf-8") as fh:
                    fh.write(f"# Variant {k} of {name}\n\nThis directory is copy {k} of the original.\n")
            continue
        for f in files:
            ext = os.path.splitext(f)[1]
            if ext not in TEXT_EXT:
                continue
            p = os.path.join(root, f)
            try:
                text = open(p, encoding="utf-8").read()
            except (UnicodeDecodeError, OSError):
                continue
            mark = COMMENT.get(ext)
            head = f"{mark} variant {k} of this file\n" if mark else f"variant {k}\n\n"
            open(p, "w", encoding="utf-8").write(head + text)
    git(dst, "add", "-A")
    git(dst, "-c", "user.name=scale", "-c", "user.email=scale@localhost", "commit", "-qm",
        f"variant {k}")


def wait_indexed(p, want_embedded, timeout=7200):
    t0 = time.time()
    while time.time() - t0 < timeout:
        repos = p.status()["repos"]
        busy = any(r["indexing"] or (r.get("freshness") or {}).get("pending_files", 0) for r in repos)
        backlog = sum(r["embed_backlog"] for r in repos)
        if not busy and (not want_embedded or backlog == 0):
            return repos
        time.sleep(1)
    raise SystemExit("indexing did not finish in time")


def query_latency(p, oracle, runs, cwd):
    out = {}
    for kind, qs in QUERIES.items():
        times = []
        for q in qs:
            p.run("q", q, "--all", "-n", "10", "--oracle", oracle, cwd=cwd, check=False)  # warm
            for _ in range(runs):
                t0 = time.perf_counter()
                p.run("q", q, "--all", "-n", "10", "--oracle", oracle, cwd=cwd, check=False)
                times.append((time.perf_counter() - t0) * 1000)
        out[kind] = {"p50_ms": round(pct(times, 0.5), 1), "p95_ms": round(pct(times, 0.95), 1)}
    return out


def save_to_searchable(p, repo, cwd):
    name = f"scale_probe_{int(time.time() * 1000)}"
    path = os.path.join(repo, f"{name}.py")
    t0 = time.perf_counter()
    open(path, "w").write(f"def {name}():\n    return 42\n")
    while time.perf_counter() - t0 < 30:
        r = p.run("q", name, "--all", "-n", "1", "--oracle", "lexical", cwd=cwd, check=False)
        if name in r.stdout:
            ms = (time.perf_counter() - t0) * 1000
            os.remove(path)
            return round(ms, 1)
        time.sleep(0.02)
    os.remove(path)
    return None


def branch_switch(p, repo, n_files=1000):
    files = []
    for root, dirs, fs in os.walk(repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        files += [os.path.join(root, f) for f in fs if f.endswith((".rs", ".py", ".go", ".js", ".ts"))]
    files = sorted(files)[:n_files]
    git(repo, "checkout", "-qb", "scale-switch")
    for i, f in enumerate(files):
        with open(f, "a") as fh:
            fh.write(f"\n// scale switch {i}\n")
    git(repo, "-c", "user.name=scale", "-c", "user.email=scale@localhost", "commit", "-qam", "switch")
    git(repo, "checkout", "-q", "-")
    wait_indexed(p, False)

    def timed(target):
        t0 = time.perf_counter()
        git(repo, "checkout", "-q", target)
        time.sleep(0.05)
        while True:
            r = [x for x in p.status()["repos"] if os.path.realpath(x["root"]) == os.path.realpath(repo)][0]
            f = r.get("freshness") or {}
            if f.get("fresh") or (not r["indexing"] and f.get("pending_files", 0) == 0
                                  and f.get("indexed_commit") == f.get("head_commit")):
                return round((time.perf_counter() - t0) * 1000, 1)
            time.sleep(0.05)

    there = timed("scale-switch")
    back = timed("-")
    return {"files": len(files), "to_branch_ms": there, "back_ms": back}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--work", required=True, help="scratch dir: clones and PATINA_HOME")
    ap.add_argument("--source", action="append", required=True, help="a git repository (repeat)")
    ap.add_argument("--bin", default="target/release")
    ap.add_argument("--mark", choices=["line", "file"], default="line",
                    help="how a variant differs from its original (see above)")
    ap.add_argument("--model", action="store_true", help="semantic search on (default: lexical)")
    ap.add_argument("--precision", choices=["fp32", "int8"], default=None,
                    help="with --model: [semantic] precision (default: the daemon's)")
    ap.add_argument("--restart", type=int, default=0,
                    help="then restart the daemon and read its RSS after this many idle seconds "
                         "(the state as a daemon meets it the next morning; the histories its "
                         "catch-up rounds load leave memory after 5 unused minutes: 420 shows that)")
    ap.add_argument("--runs", type=int, default=5, help="runs per query")
    ap.add_argument("--settle", type=int, default=0,
                    help="then idle this many seconds and read RSS again (the daemon drops graphs "
                         "and histories unused for 5 minutes: 330 shows that)")
    ap.add_argument("--rm-all", action="store_true",
                    help="last, remove every repository and report how much of what they added "
                         "the daemon gave back")
    ap.add_argument("--seed-state",
                    help="copy this state directory (a stopped daemon's $PATINA_HOME/state) into the "
                         "new home first: its embedding cache spares computing the same vectors again")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    work = os.path.abspath(args.work)
    home, repos_dir = os.path.join(work, "home"), os.path.join(work, "repos")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(home)
    os.makedirs(repos_dir)
    if args.seed_state:
        shutil.copytree(args.seed_state, os.path.join(home, "state"))
    if args.model:
        os.symlink(models_dir(), os.path.join(home, "models"))
        if args.precision:
            with open(os.path.join(home, "config.toml"), "w") as f:
                f.write(f'[semantic]\nprecision = "{args.precision}"\n')
    p = Patina(args.bin, home, args.model)
    p.run("daemon", "start")
    pid = p.status()["daemon"]["pid"]
    time.sleep(2)
    start_rss = rss_of(pid)

    t0 = time.time()
    registered, chunks, k = [], 0, 0
    while chunks < args.chunks:
        for src in args.source:
            dst = os.path.join(repos_dir, f"{os.path.basename(os.path.abspath(src))}-v{k}")
            make_variant(os.path.abspath(src), dst, k, args.mark)
            p.run("add", "--no-wait", dst)
            registered.append(dst)
        repos = wait_indexed(p, False)
        chunks = sum(r["chunks"] for r in repos)
        print(f"scale: {len(registered)} repositories, {chunks} chunks, {time.time() - t0:.0f}s",
              file=sys.stderr)
        k += 1
    lexical_s = time.time() - t0
    embedded_s = None
    if args.model:
        wait_indexed(p, True)
        embedded_s = time.time() - t0
    time.sleep(10)
    idle_rss = rss_of(pid)
    disk = int(subprocess.run(["du", "-sb", home], capture_output=True, text=True).stdout.split()[0])

    result = {
        "repositories": len(registered), "chunks": chunks,
        "cold_index_s": round(lexical_s, 1),
        "embedded_s": round(embedded_s, 1) if embedded_s else None,
        "disk_bytes": disk, "idle_rss_bytes": idle_rss,
        "query": {o: query_latency(p, o, args.runs, work) for o in
                  (["lexical", "symbol", "lexical,symbol,semantic"] if args.model else ["lexical", "symbol"])},
        "save_to_searchable_ms": save_to_searchable(p, registered[0], work),
        "branch_switch": branch_switch(p, registered[0]),
        "rss_after_bytes": rss_of(pid),
    }
    result["rss_start_bytes"] = start_rss
    if args.settle:
        time.sleep(args.settle)
        result["rss_settled_bytes"] = rss_of(pid)
        result["settle_s"] = args.settle
    if args.restart:
        p.run("daemon", "stop", check=False)
        p.run("daemon", "start")
        pid = p.status()["daemon"]["pid"]
        wait_indexed(p, args.model)
        time.sleep(args.restart)
        result["rss_restarted_bytes"] = rss_of(pid)
        result["restart_settle_s"] = args.restart
        result["status_memory_restarted"] = p.status()["daemon"].get("memory")
    if args.rm_all:
        before = rss_of(pid)
        for dst in registered:
            p.run("rm", os.path.basename(dst))
        time.sleep(10)
        after = rss_of(pid)
        result["rss_before_rm_bytes"], result["rss_after_rm_bytes"] = before, after
        added = before - start_rss
        result["rm_returned_share"] = round((before - after) / added, 3) if added > 0 else None
    p.run("daemon", "stop", check=False)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    mib = lambda b: f"{b / 2**20:.0f} MiB"
    print(f"{result['repositories']} repositories, {result['chunks']} chunks: indexed in "
          f"{result['cold_index_s']} s" + (f", embedded in {result['embedded_s']} s" if embedded_s else ""))
    print(f"on disk {mib(disk)}, idle RSS {mib(idle_rss)} (after the queries {mib(result['rss_after_bytes'])})")
    if args.settle:
        print(f"after {args.settle} s idle: {mib(result['rss_settled_bytes'])}")
    if args.restart:
        print(f"restarted, after {args.restart} s idle: {mib(result['rss_restarted_bytes'])}")
    if args.rm_all:
        print(f"every repository removed: {mib(result['rss_before_rm_bytes'])} -> "
              f"{mib(result['rss_after_rm_bytes'])} (from {mib(start_rss)} at start: "
              f"{result['rm_returned_share']} of what they added returned)")
    for o, kinds in result["query"].items():
        for kind, v in kinds.items():
            print(f"q --oracle {o:24} {kind:10} p50 {v['p50_ms']} ms  p95 {v['p95_ms']} ms")
    print(f"save -> searchable {result['save_to_searchable_ms']} ms; branch switch {result['branch_switch']}")


if __name__ == "__main__":
    main()
