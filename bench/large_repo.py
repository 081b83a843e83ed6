#!/usr/bin/env python3
"""Patina on one real large repository: what a user meets from `patina add` to a drained backlog.

Two steps. `prepare` makes the repository from git directories (e.g. snapshots brought with the
`fetch` tool): one source gives that repository as it is (with its history); several give one
monorepo with each source's tree side by side under its own folder. Blobs a snapshot lacks (its
largest files may be absent) are left out of the tree, so the checkout is whole. With `--old REV`
a second branch holds the first source at REV: the far branch switch.

    bench/large_repo.py prepare --source /work/.mirror/denoland+deno/repo --out /work/large/deno \\
        --old v2.0.0
    bench/large_repo.py prepare --source A --source B ... --out /work/large/tree --old v2.0.0

`measure` starts a daemon in a fresh home (the model from where `scripts/setup-model` put it, or
none with --no-model), adds the repository and reports, with the release build:
- time until a lexical and a symbol query first answer (the round commits every 2,000 files)
  and until the round is over (every file indexed lexically, symbols and graph facts with it);
- time until every backlog chunk has a static vector, and until every chunk has the model's
  (with --model-timeout it stops waiting, and reports how far the model got and its ETA);
- the ETAs `patina status` showed on the way, against the times measured;
- disk of the state against the source; peak RSS while indexing; RSS just after the pass and
  idle (no request for `--idle` s: what a daemon in the background of a working day holds), and
  the first hybrid answer after idle (it loads the query session again);
- `patina q` p50/p95 whole-process, lexical and hybrid, identifier and question queries;
- save -> searchable; the far branch switch (with --old at prepare): until lexically fresh,
  until fully embedded, and how many chunks the model embedded for it (cache hits excluded);
- `patina rm`: RSS and disk after.
With the model, also (issue 65): `--coverage-at 600,1800,3600` asks the tree's questions
(`questions/tree-coverage.txt`) at those times and counts how many of the semantic oracle's first
ten hits the model has embedded (its report's `static_hits` are the rest); `--switch-during S`
switches branches there and back S seconds after `add`, while the pass runs; RSS, vectors, the
backlog and the index build under way are sampled every 20 s.

    bench/large_repo.py measure --repo /work/large/deno --work /work/large/deno-run \\
        --bin target/release [--no-model] [--precision int8] [--model-timeout 3600] [--json OUT]

A model pass longer than the machine stays up (the 100k-file tree's: hours) goes on with
`--resume` on the same `--work`: the run saves its marks to `progress.json` every 30 s; a resumed
run starts the daemon on the same state and its clock goes on from the run's saved time (the
downtime left out, each resumption listed in the result).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time

import common
from common import models_dir, pct, rss_of

OLD_BRANCH, NEW_BRANCH = "patina-bench/old", "patina-bench/new"
IDENTIFIERS = ["main", "Error", "parse", "handler", "config"]
QUESTIONS = ["how are command line flags parsed", "where is the configuration file loaded",
             "retry a failed request", "how are permissions checked before reading a file"]


def git(cwd, *args, input=None):
    r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, input=input, check=True)
    return r.stdout


def drop_missing(repo):
    """Remove from the index every path whose blob the object store lacks; how many."""
    staged = git(repo, "ls-files", "-s", "-z").split(b"\0")
    entries = [e.split(b"\t", 1) for e in staged if e]
    shas = b"\n".join(e[0].split()[1] for e in entries) + b"\n"
    checks = git(repo, "cat-file", "--batch-check", input=shas).splitlines()
    missing = [e[1] for e, c in zip(entries, checks) if c.endswith(b"missing")]
    if missing:
        git(repo, "rm", "--cached", "-q", "--pathspec-from-file=-", "--pathspec-file-nul",
            input=b"\0".join(missing) + b"\0")
    return len(missing)


def commit_index(repo, message, parents=()):
    tree = git(repo, "write-tree").decode().strip()
    args = ["commit-tree", tree, "-m", message]
    for p in parents:
        args += ["-p", p]
    env_args = ["-c", "user.name=patina-bench", "-c", "user.email=bench@localhost"]
    return git(repo, *env_args, *args).decode().strip()


def prepare(args):
    out = os.path.abspath(args.out)
    if os.path.exists(out):
        raise SystemExit(f"{out} exists; remove it first")
    sources = [os.path.abspath(s) for s in args.source]
    if len(sources) == 1:
        # One repository, with its history: a clone, then commits without the absent blobs.
        git(os.path.dirname(out), "clone", "-q", "--no-checkout", sources[0], out)
        branches = [(NEW_BRANCH, "HEAD")] + ([(OLD_BRANCH, args.old)] if args.old else [])
        for branch, rev in branches:
            commit = git(out, "rev-parse", f"{rev}^{{commit}}").decode().strip()
            git(out, "read-tree", commit)
            n = drop_missing(out)
            c = commit_index(out, f"{rev} without {n} blobs the snapshot lacks", [commit])
            git(out, "update-ref", f"refs/heads/{branch}", c)
            print(f"{branch}: {rev} ({n} absent blobs left out)", file=sys.stderr)
    else:
        # A monorepo: each source's tree under its own folder, objects shared by alternates.
        os.makedirs(out)
        git(out, "init", "-q")
        objects = [os.path.join(s, "objects") if os.path.isdir(os.path.join(s, "objects"))
                   else os.path.join(s, ".git", "objects") for s in sources]
        with open(os.path.join(out, ".git", "objects", "info", "alternates"), "w") as f:
            f.write("\n".join(objects) + "\n")

        def tree_with(first_rev):
            git(out, "read-tree", "--empty")
            for i, s in enumerate(sources):
                name = os.path.basename(os.path.dirname(s) if s.endswith("/repo") else s)
                name = name.split("+")[-1]
                rev = first_rev if i == 0 else "HEAD"
                commit = git(s, "rev-parse", f"{rev}^{{commit}}").decode().strip()
                git(out, "read-tree", f"--prefix={name}/", commit)
            return drop_missing(out)

        n = tree_with("HEAD")
        c = commit_index(out, f"{len(sources)} repositories side by side ({n} absent blobs left out)")
        git(out, "update-ref", f"refs/heads/{NEW_BRANCH}", c)
        if args.old:
            n = tree_with(args.old)
            c2 = commit_index(out, f"the first repository at {args.old}", [c])
            git(out, "update-ref", f"refs/heads/{OLD_BRANCH}", c2)
    git(out, "checkout", "-q", "-f", NEW_BRANCH)
    files = len(git(out, "ls-files", "-z").split(b"\0")) - 1
    size = int(subprocess.run(["du", "-sb", "--exclude=.git", out], capture_output=True,
                              text=True).stdout.split()[0])
    print(f"{out}: {files} files, {size / 2**20:.0f} MiB of source on {NEW_BRANCH}")



def du(path):
    r = subprocess.run(["du", "-sb", path], capture_output=True, text=True)
    return int(r.stdout.split()[0]) if r.returncode == 0 else 0


class Patina(common.Patina):
    def repo(self):
        return self.status()["repos"][0]


class Sampler(threading.Thread):
    """Reads the daemon's RSS every 200 ms: the peak while indexing and embedding."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.stop = pid, 0, False

    def run(self):
        while not self.stop:
            self.peak = max(self.peak, rss_of(self.pid))
            time.sleep(0.2)


def answers(p, query, oracle, cwd):
    r = p.run("q", query, "-n", "1", "--oracle", oracle, "--json", cwd=cwd, check=False)
    if r.returncode != 0:
        return False
    # JSON lines: one per hit, then the summary.
    for line in reversed(r.stdout.splitlines()):
        try:
            v = json.loads(line)
        except json.JSONDecodeError:
            continue
        if v.get("type") == "summary":
            return v.get("hits", 0) > 0
    return False


def latency(p, oracle, queries, cwd, runs):
    times = []
    for q in queries:
        only = ["--oracle", oracle] if oracle else []  # None: the default, hybrid
        p.run("q", q, "-n", "10", *only, cwd=cwd, check=False)  # the first, warm
        for _ in range(runs):
            t0 = time.perf_counter()
            p.run("q", q, "-n", "10", *only, cwd=cwd, check=False)
            times.append((time.perf_counter() - t0) * 1000)
    return {"p50_ms": round(pct(times, 0.5), 1), "p95_ms": round(pct(times, 0.95), 1),
            "runs": len(times)}


def coverage(p, questions, cwd):
    """Each question's hybrid answer now: how many of the semantic oracle's first ten hits the
    model has embedded (its report's `static_hits` are those it has not), and the whole-process
    time. Asking is what a user does: the files the answers return go first in the pass after."""
    out = []
    for q in questions:
        t0 = time.perf_counter()
        r = p.run("q", q, "-n", "10", "--json", cwd=cwd, check=False)
        ms = (time.perf_counter() - t0) * 1000
        sem = None
        for line in r.stdout.splitlines():
            try:
                v = json.loads(line)
            except json.JSONDecodeError:
                continue
            if v.get("type") == "summary":
                sem = next((o for o in v.get("oracles", []) if o.get("oracle") == "semantic"), None)
        leading = min(10, sem["hits"]) if sem else 0
        static = sem.get("static_hits", 0) if sem else 0
        out.append({"q": q, "leading": leading, "static": static, "ms": round(ms, 1)})
    lead = sum(o["leading"] for o in out)
    model = sum(o["leading"] - o["static"] for o in out)
    return {"model_share": round(model / lead, 3) if lead else None, "leading": lead,
            "p50_ms": round(pct([o["ms"] for o in out], 0.5), 1),
            "max_ms": round(max((o["ms"] for o in out), default=0), 1), "questions": out}


def switch_during(p, repo, sampler, timeout, log):
    """The far branch switch there and back while the model's pass runs: until each side is
    lexically fresh (the pass goes on meanwhile), the peak RSS over both."""
    out = {"changed_files": len(git(repo, "diff", "--name-only", "-z", NEW_BRANCH, OLD_BRANCH)
                                .split(b"\0")) - 1}
    peak_before = sampler.peak
    sampler.peak = 0
    for label, branch in (("there", OLD_BRANCH), ("back", NEW_BRANCH)):
        t2 = time.time()
        git(repo, "checkout", "-q", "-f", branch)
        head = git(repo, "rev-parse", "HEAD").decode().strip()
        fresh = None
        while time.time() - t2 < timeout:
            r = p.repo()
            f = r.get("freshness") or {}
            if not r["indexing"] and f.get("indexed_commit") == head and f.get("pending_files", 1) == 0:
                fresh = time.time() - t2
                break
            time.sleep(0.25)
        r = p.repo()
        out[label] = {"lexically_fresh_s": round(fresh, 1) if fresh else None,
                      "embed_backlog_after": r["embed_backlog"], "chunks_after": r["chunks"]}
        log(f"switch during the pass, {label}: lexically fresh in {fresh}s, "
            f"{r['embed_backlog']} waiting")
    out["peak_rss_bytes"] = sampler.peak
    sampler.peak = max(peak_before, sampler.peak)
    return out


def stage_etas(r):
    """The ETAs status shows now, in seconds."""
    out = {}
    prog = r.get("progress") or {}
    if prog.get("eta_ms") is not None:
        out["round"] = prog["eta_ms"] / 1000
    for k in ("static_eta", "embed_eta"):
        s = r.get(k) or {}
        if s.get("eta_ms") is not None:
            out[k.replace("_eta", "")] = s["eta_ms"] / 1000
    return out


def measure(args):
    repo = os.path.abspath(args.repo)
    work = os.path.abspath(args.work)
    home = os.path.join(work, "home")
    progress_file = os.path.join(work, "progress.json")
    model = not args.no_model
    log = lambda m: print(f"[{time.strftime('%H:%M:%S')}] {m}", file=sys.stderr, flush=True)
    if args.resume:
        # A run stopped before the model's pass ended (the machine went down): the clock goes on
        # from the time the run had spent, the time the daemon was down left out.
        with open(progress_file) as f:
            progress = json.load(f)
        res, marks, etas = progress["res"], progress["marks"], progress["etas"]
        res.setdefault("resumed", []).append({"at_s": round(progress["elapsed_s"], 1),
                                              "wall": time.strftime("%Y-%m-%dT%H:%M:%S")})
        p = Patina(args.bin, home, model)
        p.run("daemon", "start")
        pid = p.status()["daemon"]["pid"]
        sampler = Sampler(pid)
        sampler.peak = progress.get("peak_rss_bytes", 0)
        sampler.start()
        t0 = time.time() - progress["elapsed_s"]
        add = None
        log(f"resumed at {progress['elapsed_s']:.0f} s of the run")
    else:
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(home)
        if model:
            os.symlink(models_dir(), os.path.join(home, "models"))
        if args.precision:
            with open(os.path.join(home, "config.toml"), "w") as f:
                f.write(f'[semantic]\nprecision = "{args.precision}"\n')
        p = Patina(args.bin, home, model)
        git(repo, "checkout", "-q", "-f", NEW_BRANCH)
        files = len(git(repo, "ls-files", "-z").split(b"\0")) - 1
        source = int(subprocess.run(["du", "-sb", "--exclude=.git", repo], capture_output=True,
                                    text=True).stdout.split()[0])
        res = {"repo": repo, "files": files, "source_bytes": source, "model": model,
               "precision": args.precision or "fp32"}

        p.run("daemon", "start")
        pid = p.status()["daemon"]["pid"]
        time.sleep(2)
        res["rss_start_bytes"] = rss_of(pid)
        sampler = Sampler(pid)
        sampler.start()

        t0 = time.time()
        add = subprocess.Popen([p.exe, "add", repo], env=p.env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        marks, etas = {}, []
        # Probe once `add` has registered the repository: a `patina q` inside an unregistered
        # one registers it itself and waits for the whole round, which is not the first answer.
        while not p.status()["repos"] and add.poll() is None:
            time.sleep(0.05)
    source = res["source_bytes"]
    ident = args.probe or IDENTIFIERS[0]
    checkpoints = sorted(float(x) for x in args.coverage_at.split(",")) if args.coverage_at else []
    questions = []
    if checkpoints:
        with open(args.questions) as f:
            questions = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    res.setdefault("coverage", [])
    res.setdefault("samples", [])
    sampled = 0.0
    added = lambda: add is None or add.poll() is not None
    saved = 0.0
    while True:
        # Each mark is the moment its probe returned (a probe may wait for the round).
        if "lexical_first_s" not in marks and answers(p, ident, "lexical", repo):
            marks["lexical_first_s"] = time.time() - t0
        if "symbol_first_s" not in marks and answers(p, ident, "symbol", repo):
            marks["symbol_first_s"] = time.time() - t0
        el = time.time() - t0
        try:
            r = p.repo()
        except (json.JSONDecodeError, IndexError, subprocess.CalledProcessError):
            time.sleep(0.5)
            continue
        e = stage_etas(r)
        if e:
            etas.append({"t": round(el, 1), **e})
        if time.time() - sampled >= 20:
            # RSS, vectors, backlog and the index build under way (status names it), every 20 s.
            mem = (p.status()["daemon"].get("memory") or {}) if model else {}
            res["samples"].append({"t": round(el), "rss": rss_of(pid), "vectors": r["vectors"],
                                   "backlog": r["embed_backlog"],
                                   "build": (r.get("embed_eta") or {}).get("waiting"),
                                   "memory": mem})
            sampled = time.time()
        done = {c["at_s"] for c in res["coverage"]}
        due = [c for c in checkpoints if c not in done and el >= c]
        if model and due and "round_s" in marks:
            c = coverage(p, questions, repo)
            c.update({"at_s": due[0], "asked_s": round(el), "vectors": r["vectors"],
                      "backlog": r["embed_backlog"]})
            res["coverage"].append(c)
            log(f"coverage at {due[0]:.0f}s: model share {c['model_share']}, p50 {c['p50_ms']} ms")
        if model and args.switch_during and "switch_during" not in res and "round_s" in marks \
                and el >= args.switch_during and r["embed_backlog"] > 0:
            res["switch_during"] = {"at_s": round(el), **switch_during(
                p, repo, sampler, args.switch_timeout, log)}
        if time.time() - saved > 30:
            # What a resumed run needs, should this one be stopped before the pass ends.
            with open(progress_file + ".tmp", "w") as f:
                json.dump({"res": res, "marks": marks, "etas": etas, "elapsed_s": el,
                           "peak_rss_bytes": sampler.peak}, f)
            os.replace(progress_file + ".tmp", progress_file)
            saved = time.time()
        if "round_s" not in marks and added() and not r["indexing"]:
            marks["round_s"] = el
            marks["round_daemon_ms"] = r.get("last_index_ms")
            marks["chunks"] = r["chunks"]
            log(f"round over: {r['chunks']} chunks, {r['files']} files")
        if "round_s" in marks:
            if "static_s" not in marks and model and (
                    r["embed_backlog"] == 0 or r["static_vectors"] >= r["embed_backlog"]
                    or not r.get("static_eta")):
                marks["static_s"] = el
                marks["static_held"] = r["static_vectors"]
                log(f"static pass over: {r['static_vectors']} static, {r['embed_backlog']} waiting")
            if not model or r["embed_backlog"] == 0:
                marks["model_s"] = el if model else None
                break
            if args.model_timeout and el > args.model_timeout:
                marks["model_stopped_s"] = el
                marks["model_left"] = r["embed_backlog"]
                marks["model_eta_then_s"] = (r.get("embed_eta") or {}).get("eta_ms", 0) / 1000
                log(f"stopped waiting for the model: {r['embed_backlog']} left")
                break
            if len(etas) % 60 == 1:
                log(f"{r['vectors']} vectors, {r['embed_backlog']} waiting, etas {e}")
        time.sleep(0.5)
    if add is not None:
        out, err = add.communicate()
        res["add_stderr_head"] = err.splitlines()[:3]
    res.update({k: (round(v, 1) if isinstance(v, float) else v) for k, v in marks.items()})
    res["eta_samples"] = etas[:: max(1, len(etas) // 40)]
    res["peak_rss_bytes"] = sampler.peak
    # Idle as the daemon sees it: no request at all (a `status` is one), so only /proc is read.
    # The bulk session leaves `bulk_idle` after the pass (20 s at the default budget); the query
    # session, graphs and histories after 5 unused minutes; then, if the heap holds much it does
    # not use, the daemon restarts in place. RSS is sampled every 5 s until `--idle` has passed.
    sampler.stop = True
    drained = time.time()
    idle_curve = []
    while time.time() - drained < args.idle:
        time.sleep(5)
        idle_curve.append((round(time.time() - drained), rss_of(pid)))
    res["idle_curve"] = idle_curve[:: max(1, len(idle_curve) // 30)]
    res["drained_rss_bytes"] = next((r for t, r in idle_curve if t >= args.settle), 0)
    res["idle_rss_bytes"] = rss_of(pid)
    res["idle_after_s"] = round(time.time() - drained)
    state = os.path.join(home, "state")
    res["state_bytes"] = du(state)
    res["disk_ratio"] = round(res["state_bytes"] / source, 2)
    st = p.status()
    res["status_memory"] = st["daemon"].get("memory")
    # The first answers after idle load the query session again: what the first user pays.
    t_first = time.perf_counter()
    p.run("q", QUESTIONS[0], "-n", "10", cwd=repo, check=False)
    res["first_hybrid_after_idle_ms"] = round((time.perf_counter() - t_first) * 1000, 1)
    res["query"] = {
        "lexical_identifier": latency(p, "lexical", IDENTIFIERS, repo, args.runs),
        "lexical_question": latency(p, "lexical", QUESTIONS, repo, args.runs),
        "hybrid_identifier": latency(p, None, IDENTIFIERS, repo, args.runs),
        "hybrid_question": latency(p, None, QUESTIONS, repo, args.runs),
    }
    res["rss_after_queries_bytes"] = rss_of(pid)
    sampler = Sampler(pid)
    sampler.start()

    # Save -> searchable: a new function in a new file until a lexical query finds it.
    name = f"patina_probe_{int(time.time() * 1000)}"
    path = os.path.join(repo, f"{name}.py")
    t1 = time.perf_counter()
    with open(path, "w") as f:
        f.write(f"def {name}():\n    return 42\n")
    while time.perf_counter() - t1 < 60:
        if name in p.run("q", name, "-n", "1", "--oracle", "lexical", cwd=repo, check=False).stdout:
            res["save_to_searchable_ms"] = round((time.perf_counter() - t1) * 1000, 1)
            break
        time.sleep(0.02)
    os.remove(path)
    time.sleep(2)

    # The far branch switch: until lexically fresh, until embedded; embeddings computed for it.
    has_old = subprocess.run(["git", "rev-parse", "-q", "--verify", OLD_BRANCH], cwd=repo,
                             capture_output=True).returncode == 0
    if has_old:
        changed = len(git(repo, "diff", "--name-only", "-z", NEW_BRANCH, OLD_BRANCH)
                      .split(b"\0")) - 1
        res["switch"] = {"changed_files": changed}
        for label, branch in (("there", OLD_BRANCH), ("back", NEW_BRANCH)):
            before = p.status()["daemon"]["embeddings_computed"]
            sampler.peak = 0
            t2 = time.time()
            git(repo, "checkout", "-q", "-f", branch)
            head = git(repo, "rev-parse", "HEAD").decode().strip()
            lexical = None
            while time.time() - t2 < args.switch_timeout:
                r = p.repo()
                f = r.get("freshness") or {}
                if lexical is None and not r["indexing"] and f.get("indexed_commit") == head \
                        and f.get("pending_files", 1) == 0:
                    lexical = time.time() - t2
                    log(f"switch {label}: lexically fresh in {lexical:.1f}s, "
                        f"{r['embed_backlog']} to embed")
                # After a model pass that was not waited for, the switch is timed lexically.
                if lexical is not None and (not model or r["embed_backlog"] == 0
                                            or "model_stopped_s" in marks):
                    break
                time.sleep(0.25)
            embedded = time.time() - t2 if lexical is not None else None
            after = p.status()["daemon"]["embeddings_computed"]
            res["switch"][label] = {
                "lexically_fresh_s": round(lexical, 1) if lexical else None,
                "embedded_s": round(embedded, 1) if (embedded and model
                                                     and "model_stopped_s" not in marks) else None,
                "embed_backlog_after": p.repo()["embed_backlog"],
                "embeddings_computed": after - before,
                "chunks_after": p.repo()["chunks"],
                "peak_rss_bytes": sampler.peak,
            }
    sampler.stop = True

    # rm: memory and disk back.
    before_rm = rss_of(pid)
    p.run("rm", repo)
    # The sessions a switch loaded leave after their idle times; freed memory settles in seconds.
    time.sleep(max(args.settle, 90))
    res["rm"] = {"rss_before_bytes": before_rm, "rss_after_bytes": rss_of(pid),
                 "state_after_bytes": du(state)}
    p.run("daemon", "stop", check=False)
    text = json.dumps(res, indent=2)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("prepare")
    a.add_argument("--source", action="append", required=True, help="a git directory (repeat)")
    a.add_argument("--out", required=True)
    a.add_argument("--old", help="a revision of the first source for the far branch switch")
    m = sub.add_parser("measure")
    m.add_argument("--repo", required=True, help="made by `prepare`")
    m.add_argument("--work", required=True, help="scratch dir for PATINA_HOME (emptied)")
    m.add_argument("--resume", action="store_true",
                   help="go on with a run in --work that was stopped (its progress.json)")
    m.add_argument("--bin", default="target/release")
    m.add_argument("--no-model", action="store_true")
    m.add_argument("--precision", choices=["fp32", "int8"],
                   help="the model's `[semantic] precision` (default: the daemon's, fp32)")
    m.add_argument("--model-timeout", type=float, default=0,
                   help="stop waiting for the model's pass after this many seconds from add")
    m.add_argument("--switch-timeout", type=float, default=7200)
    m.add_argument("--probe", help="identifier whose first answer marks lexical/symbol search "
                                   "(default: main)")
    m.add_argument("--runs", type=int, default=5)
    m.add_argument("--settle", type=float, default=15,
                   help="seconds after the pass drained for `drained_rss`, and after `rm`")
    m.add_argument("--idle", type=float, default=390,
                   help="seconds without a request after the pass before `idle_rss` is read "
                        "(the daemon releases what is unused after 300 s)")
    m.add_argument("--coverage-at", help="seconds from add (comma-separated) at which to ask "
                   "--questions and count the semantic hits the model has embedded")
    m.add_argument("--questions", default=os.path.join(os.path.dirname(__file__), "questions",
                                                        "tree-coverage.txt"))
    m.add_argument("--switch-during", type=float, default=0,
                   help="seconds from add at which to switch branches there and back while the "
                        "model's pass runs (and then go on)")
    m.add_argument("--json", help="also write the result here")
    args = ap.parse_args()
    prepare(args) if args.cmd == "prepare" else measure(args)


if __name__ == "__main__":
    main()
