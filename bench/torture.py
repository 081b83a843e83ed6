#!/usr/bin/env python3
"""Crash and load torture (issue 16): kill -9 at random moments, then check that nothing was lost.

Part 1, N rounds; each round kills the daemon with SIGKILL at a random moment during one of
  index     `patina add` of a fresh copy of the fixture repository,
  checkout  a storm of `git checkout` between two branches that differ in a third of the files,
  notes     session notes written through `patina-mcp` (each acknowledged note counted),
  embed     (with --model) the embedding backlog of a batch of edited files draining,
then lets the next client start a daemon again, waits until the index is fresh and checks:
  - `patina repair --check`: the index is consistent with itself and the disk;
  - it equals a from-scratch index of the same files (a second daemon, its own PATINA_HOME, the
    same repository path: same files, chunks and chunk-id digest); with the model, every chunk
    has a vector once the backlog drained;
  - every acknowledged session note is still there (the session's note count).
Part 2: C concurrent clients x Q mixed queries (`patina q`, whole process: identifiers, questions,
file level, single oracles) against the warm daemon while a writer edits files underneath;
errors (any exit code but 0, or 1 = no hits) and latency p50/p99, both whole-process (C processes
competing for the machine's cores) and as the daemon measured each answer (`took_us`).
`--rounds 0` runs the load part alone; `--client mcp` makes each client one persistent
`patina-mcp` process (a query is a JSON-RPC round trip, as for an agent); `--client grpc` runs
`patina bench load` (each client its own connection to the socket, in one process).

    bench/torture.py --bin target/release --work /tmp/torture [--rounds 50] [--clients 64]
                     [--queries 500] [--model] [--seed 1] [--json]

The fixture is generated (no fetched code). Figures go to bench/RESULTS.md with the command.
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import model_dir, patina_env, pct  # noqa: E402

WORDS = ["parse", "render", "cache", "token", "stream", "buffer", "retry", "socket", "config",
         "schedule", "encode", "decode", "index", "merge", "filter", "report", "session", "vector"]



def git(root, *args, check=True):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t",
                           "-c", "commit.gpgsign=false", *args],
                          cwd=root, capture_output=True, text=True, check=check)


def module(i, variant):
    """A small Python module and a Rust file with their own vocabulary."""
    a, b = WORDS[i % len(WORDS)], WORDS[(i * 7 + 3) % len(WORDS)]
    py = (f'"""{a} and {b} helpers, module {i} ({variant})."""\n\n'
          f"def {a}_{b}_{i}(items, limit={i % 9 + 1}):\n"
          f'    """Return the {a}d items up to limit ({variant})."""\n'
          f"    out = []\n    for x in items:\n        if len(out) >= limit:\n            break\n"
          f"        out.append(x)\n    return out\n\n\n"
          f"class {a.title()}{b.title()}{i}:\n    def run(self, data):\n"
          f"        return {a}_{b}_{i}(data)\n")
    rs = (f"/// {a} {b} in Rust, file {i} ({variant}).\n"
          f"pub fn {b}_{a}_{i}(input: &[u8]) -> usize {{\n"
          f"    input.iter().filter(|b| **b == {i % 256}).count() + {len(variant)}\n}}\n")
    return py, rs


def make_fixture(root, files):
    """A git repository with `files` modules per language on `main`, and a branch `alt` where a
    third of them differ."""
    os.makedirs(root)
    git(root, "init", "-q", "-b", "main")
    for i in range(files):
        py, rs = module(i, "main")
        d = os.path.join(root, f"pkg{i % 10}")
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, f"m{i}.py"), "w").write(py)
        open(os.path.join(d, f"m{i}.rs"), "w").write(rs)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "fixture")
    git(root, "checkout", "-qb", "alt")
    for i in range(0, files, 3):
        py, rs = module(i, "alternative")
        open(os.path.join(root, f"pkg{i % 10}", f"m{i}.py"), "w").write(py)
        open(os.path.join(root, f"pkg{i % 10}", f"m{i}.rs"), "w").write(rs)
    git(root, "commit", "-qam", "alt")
    git(root, "checkout", "-q", "main")


class Patina:
    def __init__(self, bin_dir, home, model):
        self.bin = os.path.abspath(bin_dir)
        self.home = home
        os.makedirs(home, exist_ok=True)
        self.env = patina_env(home)
        if not model:
            self.env["PATINA_MODEL_DIR"] = os.path.join(home, "no-model")
        elif not os.environ.get("PATINA_MODEL_DIR"):
            # PATINA_HOME moves the data dir: point at the model `scripts/setup-model` installed.
            self.env["PATINA_MODEL_DIR"] = str(model_dir())

    def run(self, *args, timeout=600, check=True):
        p = subprocess.run([os.path.join(self.bin, "patina"), *args], env=self.env,
                           capture_output=True, text=True, timeout=timeout)
        if check and p.returncode not in (0, 1):
            raise RuntimeError(f"patina {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
        return p

    def status(self):
        return json.loads(self.run("status", "--json").stdout)

    def pid(self):
        try:
            return self.status()["daemon"]["pid"]
        except Exception:
            return None

    def repo(self, root):
        for r in self.status().get("repos", []):
            if r["root"] == root:
                return r
        return None

    def fresh(self, root, timeout=120):
        """Start a daemon if none runs and wait until `root` is indexed at HEAD with nothing
        pending (and no embedding backlog)."""
        deadline = time.time() + timeout
        while True:
            p = self.run("q", "fresh", "--repo", root, "--fresh", "--json", "-n", "1", check=False)
            r = self.repo(root)
            f = (r or {}).get("freshness") or {}
            if r and f.get("fresh") and not r.get("indexing"):
                return r
            if time.time() > deadline:
                raise RuntimeError(f"{root} not fresh after {timeout}s: {p.stderr.strip()} {f}")
            time.sleep(0.2)

    def kill9(self):
        pid = self.pid()
        if pid:
            os.kill(pid, signal.SIGKILL)
            deadline = time.time() + 10
            while time.time() < deadline:
                try:
                    os.kill(pid, 0)
                    time.sleep(0.02)
                except ProcessLookupError:
                    break
        return pid

    def stop(self):
        self.run("daemon", "stop", check=False)


class Mcp:
    """A patina-mcp process speaking JSON-RPC lines on stdio."""

    def __init__(self, patina):
        self.p = subprocess.Popen([os.path.join(patina.bin, "patina-mcp")], env=patina.env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.id = 0
        self.call_raw("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "torture", "version": "1"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")

    def call_raw(self, method, params):
        self.id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method,
                                       "params": params}) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("patina-mcp closed its output")
        return json.loads(line)

    def tool(self, name, args):
        r = self.call_raw("tools/call", {"name": name, "arguments": args})
        res = r.get("result") or {}
        if "error" in r or res.get("isError"):
            return None
        return res.get("structuredContent") or {}

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=10)
        except Exception:
            self.p.kill()


def compare_with_scratch(bin_dir, work, root, model, tortured):
    """Index `root` from scratch in its own PATINA_HOME and compare what the two daemons hold."""
    ref_home = os.path.join(work, "ref-home")
    shutil.rmtree(ref_home, ignore_errors=True)
    # Without the model: files, chunks and chunk ids do not depend on it (vectors are checked
    # on the tortured daemon itself).
    ref = Patina(bin_dir, ref_home, False)
    try:
        ref.run("add", root)
        r = ref.fresh(root)
    finally:
        ref.stop()
    keys = ("files", "chunks", "chunk_digest")
    diff = {k: (tortured.get(k), r.get(k)) for k in keys if tortured.get(k) != r.get(k)}
    return diff


def kill_round(n, kind, args, p, root, state):
    rnd = state["rng"]
    acked_before = state["notes_acked"]
    if kind == "index":
        # A fresh copy of the fixture at a path of its own: a first full index, killed.
        copy = os.path.join(args.work, f"copy{n}")
        shutil.copytree(state["fixture"], copy, symlinks=True)
        proc = subprocess.Popen([os.path.join(p.bin, "patina"), "add", copy], env=p.env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # At a random moment of the time a first index takes (measured at set-up).
        time.sleep(rnd.uniform(0.02, max(0.05, state["index_s"])))
        p.kill9()
        proc.wait(timeout=60)
        # Registered or not before the kill: adding again either registers it or finds it.
        p.run("add", copy, "--no-wait", check=False)
        target = copy
    elif kind == "checkout":
        stop = threading.Event()

        def storm():
            branch = "alt"
            while not stop.is_set():
                git(root, "checkout", "-qf", branch, check=False)
                branch = "main" if branch == "alt" else "alt"
                time.sleep(rnd.uniform(0.0, 0.15))
        t = threading.Thread(target=storm)
        t.start()
        time.sleep(rnd.uniform(0.3, 2.0))
        p.kill9()
        time.sleep(rnd.uniform(0.0, 0.5))
        stop.set()
        t.join()
        target = root
    elif kind == "notes":
        mcp = Mcp(p)
        started = mcp.tool("patina_session_start", {"name": "torture", "repo": root})
        if started is None:
            raise RuntimeError("patina_session_start failed")
        stop_at = time.time() + rnd.uniform(0.2, 1.5)
        killer = threading.Timer(max(0.0, stop_at - time.time()), p.kill9)
        killer.start()
        i = 0
        while True:
            i += 1
            r = mcp.tool("patina_session_note", {"text": f"round {n} note {i}: {rnd.random()}",
                                                 "session": "torture"})
            if r is None:
                break  # the daemon is gone: this note was not acknowledged
            state["notes_acked"] += 1
            if time.time() > stop_at + 0.5:
                break  # a client reconnected to a restarted daemon: enough
        killer.join()
        mcp.close()
        target = root
    elif kind == "embed":
        # Edit a batch of files so that their chunks wait to be embedded, then kill mid-backlog.
        for i in rnd.sample(range(state["files"]), min(60, state["files"])):
            path = os.path.join(root, f"pkg{i % 10}", f"m{i}.py")
            with open(path, "a") as f:
                f.write(f"\n\ndef extra_{n}_{i}():\n    return '{WORDS[(n + i) % len(WORDS)]} {n}'\n")
        time.sleep(rnd.uniform(0.3, 3.0))
        p.kill9()
        target = root
    else:
        raise ValueError(kind)

    # Recovery: the next client starts a daemon; wait until fresh, then check.
    t0 = time.time()
    info = p.fresh(target, timeout=300)
    recovery = time.time() - t0
    check = p.run("repair", "--check", "--json", check=False)
    consistent = check.returncode == 0 and all(x.get("consistent") for x in json.loads(check.stdout or "[]"))
    diff = compare_with_scratch(args.bin, args.work, target, args.model, info)
    vectors_ok = True
    if args.model:
        vectors_ok = info.get("vectors") == info.get("chunks") and info.get("embed_backlog") == 0
    notes_now = None
    if state["notes_acked"]:
        mcp = Mcp(p)
        s = mcp.tool("patina_session_start", {"name": "torture"})
        mcp.close()
        notes_now = (s or {}).get("session", {}).get("notes")
    lost = max(0, state["notes_acked"] - (notes_now or 0)) if state["notes_acked"] else 0
    if kind == "index":
        p.run("rm", target, check=False)
        shutil.rmtree(target, ignore_errors=True)
    return {"round": n, "kind": kind, "consistent": consistent, "mismatch": diff,
            "vectors_ok": vectors_ok, "notes_acked": state["notes_acked"],
            "notes_acked_this_round": state["notes_acked"] - acked_before,
            "notes_present": notes_now, "notes_lost": lost, "recovery_s": round(recovery, 2)}


def load(args, p, root, rnd):
    """C clients x Q queries while a writer edits files."""
    if args.client == "grpc":
        # `patina bench load`: C connections held by one process, a file rewritten every 100 ms.
        out = p.run("bench", "load", "--repo", root, "--clients", str(args.clients),
                    "--queries", str(args.queries), "--edit",
                    os.path.join(root, "pkg0", "edited.py"), "--json", check=False)
        try:
            v = json.loads(out.stdout)
        except ValueError:
            raise RuntimeError(f"patina bench load: {out.stderr.strip()}")
        try:
            os.remove(os.path.join(root, "pkg0", "edited.py"))
        except FileNotFoundError:
            pass
        v["client"] = "grpc"
        v["load_average"] = os.getloadavg()
        return v
    queries = [
        ["q", "parse_token_3"], ["q", "how are items limited"], ["q", "RenderCache12", "--oracle", "symbol"],
        ["q", "retry socket", "--oracle", "lexical"], ["q", "which module encodes vectors", "--files"],
        ["q", "schedule", "-n", "3"], ["q", "merge filter report"],
    ]
    lat, server, errors = [], [], []
    lock = threading.Lock()
    stop = threading.Event()

    def writer():
        i = 0
        while not stop.is_set():
            path = os.path.join(root, "pkg0", "edited.py")
            with open(path, "w") as f:
                f.write(f"def edited_{i}():\n    return {i}\n")
            i += 1
            time.sleep(0.1)

    def mcp_client(c):
        # One persistent patina-mcp process per client, as an agent has: a query is one
        # JSON-RPC round trip, not a process start.
        r = random.Random(args.seed * 1000 + c)
        mcp = Mcp(p)
        try:
            for _ in range(args.queries):
                q = r.choice(queries)
                a = {"query": q[1], "repo": root}
                if "--files" in q:
                    a["level"] = "file"
                t0 = time.perf_counter()
                try:
                    res = mcp.call_raw("tools/call", {"name": "patina_query", "arguments": a})
                    ok = "result" in res and not res["result"].get("isError")
                    why = json.dumps(res)[:200]
                except Exception as e:
                    ok, why = False, str(e)
                dt = (time.perf_counter() - t0) * 1000
                with lock:
                    lat.append(dt)
                    if not ok:
                        errors.append(why)
        finally:
            mcp.close()

    def client(c):
        if args.client == "mcp":
            return mcp_client(c)
        r = random.Random(args.seed * 1000 + c)
        for _ in range(args.queries):
            q = r.choice(queries)
            t0 = time.perf_counter()
            proc = subprocess.run([os.path.join(p.bin, "patina"), *q, "--repo", root, "--json"],
                                  env=p.env, capture_output=True, text=True)
            dt = (time.perf_counter() - t0) * 1000
            took = None
            try:
                last = json.loads(proc.stdout.strip().splitlines()[-1])
                took = last.get("took_us", 0) / 1000 if last.get("type") == "summary" else None
            except (ValueError, IndexError):
                pass
            with lock:
                lat.append(dt)
                if took is not None:
                    server.append(took)
                if proc.returncode not in (0, 1):
                    errors.append(proc.stderr.strip()[:200])
    w = threading.Thread(target=writer)
    w.start()
    threads = [threading.Thread(target=client, args=(c,)) for c in range(args.clients)]
    t0 = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    w.join()
    try:
        os.remove(os.path.join(root, "pkg0", "edited.py"))
    except FileNotFoundError:
        pass
    return {"client": args.client, "clients": args.clients, "queries_each": args.queries,
            "queries": len(lat),
            "errors": len(errors), "error_examples": errors[:5], "wall_s": round(time.time() - t0, 1),
            "p50_ms": round(pct(lat, 0.5), 1), "p99_ms": round(pct(lat, 0.99), 1),
            "daemon_p50_ms": round(pct(server, 0.5), 1), "daemon_p99_ms": round(pct(server, 0.99), 1),
            "load_average": os.getloadavg()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="target/release")
    ap.add_argument("--work", required=True, help="scratch dir (deleted first)")
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--files", type=int, default=150, help="modules per language in the fixture")
    ap.add_argument("--model", action="store_true", help="semantic search on (adds embed rounds)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--client", choices=["shell", "mcp", "grpc"], default="shell",
                    help="load clients: a `patina q` process per query, one patina-mcp each, or "
                         "one connection each (`patina bench load`)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    args.work = os.path.abspath(args.work)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    rnd = random.Random(args.seed)
    fixture = os.path.join(args.work, "fixture")
    make_fixture(fixture, args.files)
    root = os.path.join(args.work, "repo")
    shutil.copytree(fixture, root, symlinks=True)
    p = Patina(args.bin, os.path.join(args.work, "home"), args.model)
    t0 = time.time()
    p.run("add", root)
    index_s = time.time() - t0
    p.fresh(root, timeout=600)
    state = {"rng": rnd, "notes_acked": 0, "fixture": fixture, "files": args.files,
             "index_s": index_s}
    kinds = ["index", "checkout", "notes"] + (["embed"] if args.model else [])
    rounds = []
    try:
        for n in range(args.rounds):
            r = kill_round(n, kinds[n % len(kinds)], args, p, root, state)
            rounds.append(r)
            print(json.dumps(r), file=sys.stderr, flush=True)
        load_result = load(args, p, root, rnd) if args.clients and args.queries else None
    finally:
        p.stop()
    summary = {
        "rounds": len(rounds),
        "by_kind": {k: sum(1 for r in rounds if r["kind"] == k) for k in kinds},
        "corrupt": sum(1 for r in rounds if not r["consistent"]),
        "mismatches": sum(1 for r in rounds if r["mismatch"]),
        "vector_gaps": sum(1 for r in rounds if not r["vectors_ok"]),
        "notes_acknowledged": state["notes_acked"],
        "notes_lost": max((r["notes_lost"] for r in rounds), default=0),
        "recovery_s_p50": pct([r["recovery_s"] for r in rounds], 0.5),
        "recovery_s_max": max((r["recovery_s"] for r in rounds), default=0),
        "load": load_result,
        "failed_rounds": [r for r in rounds if not r["consistent"] or r["mismatch"]
                          or not r["vectors_ok"] or r["notes_lost"]],
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        for k, v in summary.items():
            if k != "failed_rounds":
                print(f"{k:20} {v}")
        for r in summary["failed_rounds"]:
            print("FAILED", json.dumps(r))
    sys.exit(1 if summary["failed_rounds"] or (load_result and load_result["errors"]) else 0)


if __name__ == "__main__":
    main()
