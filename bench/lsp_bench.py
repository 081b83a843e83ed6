#!/usr/bin/env python3
"""`patina-lsp` figures: binary size, process start → `initialize` result, and `workspace/symbol`
latency over a real repository, against a warm daemon.

With PATINA_MODEL_DIR set (semantic search on) the symbol queries start once every chunk is
embedded. Uses a fresh PATINA_HOME (--home, default a temporary directory): the first server started
registers the repository (its workspace folder) and the benchmark waits for the indexing to end
($/progress). Then:
  - start: N fresh `patina-lsp` processes, each timed from spawn to the `initialize` result
    (process creation, runtime start, framing, answering); `/bin/true` spawn+reap as a baseline;
  - symbols: one server, the queries below in rounds, each `workspace/symbol` timed round trip;
    the daemon's own time (`tookUs` of the same query through `patina/search`) alongside.

    bench/lsp_bench.py --lsp target/release/patina-lsp --daemon target/debug/patinad \
        --repo CLONE [--runs 50] [--rounds 5] [--json]
"""

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from common import patina_env, pct

QUERIES = [
    "spawn_blocking", "JoinHandle", "block_on", "Runtime builder", "TcpListener bind",
    "mpsc channel", "Semaphore acquire", "select", "interval tick", "Notify notified",
    "AsyncRead", "poll_read", "oneshot", "RwLock", "timeout", "LocalSet", "yield_now",
    "Barrier wait", "broadcast", "unconstrained",
]



class Server:
    def __init__(self, lsp, env, cwd):
        self.p = subprocess.Popen([lsp], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        self.next = 1

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def read(self):
        length = None
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit("patina-lsp closed its output")
            line = line.strip()
            if not line:
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.p.stdout.read(length))

    def request(self, method, params):
        rid = self.next
        self.next += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            m = self.read()
            if m.get("id") == rid and "method" not in m:
                if "error" in m:
                    sys.exit(f"{method} failed: {m['error']}")
                return m["result"]
            if "method" in m and "id" in m:  # a request of the server (progress tokens)
                self.send({"jsonrpc": "2.0", "id": m["id"], "result": None})

    def close(self):
        self.request("shutdown", None)
        self.send({"jsonrpc": "2.0", "method": "exit"})
        self.p.wait(10)


def init_params(repo, progress):
    return {"processId": os.getpid(), "rootUri": pathlib.Path(repo).resolve().as_uri(),
            "capabilities": {"window": {"workDoneProgress": progress}}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lsp", default="target/release/patina-lsp")
    ap.add_argument("--daemon", default="target/debug/patinad")
    ap.add_argument("--repo", required=True)
    ap.add_argument("--home")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    home = a.home or tempfile.mkdtemp(prefix="plb", dir="/tmp")
    os.makedirs(home, exist_ok=True)
    env = patina_env(home, PATINA_DAEMON_BIN=os.path.abspath(a.daemon))
    env.pop("PATINA_SOCKET", None)
    lsp = os.path.abspath(a.lsp)
    out = {"binary_bytes": os.path.getsize(lsp)}
    stripped = os.path.join(home, "patina-lsp.stripped")
    if shutil.which("strip"):
        subprocess.run(["strip", "-o", stripped, lsp], check=True)
        out["stripped_bytes"] = os.path.getsize(stripped)

    # Register and index the repository (and leave the daemon warm).
    s = Server(lsp, env, home)
    s.request("initialize", init_params(a.repo, True))
    t0 = time.perf_counter()
    s.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    while True:
        m = s.read()
        if "id" in m and "method" in m:
            s.send({"jsonrpc": "2.0", "id": m["id"], "result": None})
        elif m.get("method") == "$/progress" and m["params"]["value"]["kind"] == "end":
            break
    out["index_s"] = round(time.perf_counter() - t0, 1)
    status = s.request("patina/status", {})
    out["semantic"] = status["semantic"].split(";")[0]
    if not status["semantic"].startswith("off"):
        # Semantic search on: wait until every chunk is embedded (hybrid answers from then on).
        while s.request("patina/status", {})["repos"][0]["embedBacklog"] > 0:
            time.sleep(1)
        out["embedded_s"] = round(time.perf_counter() - t0, 1)

    symbol_ms, daemon_ms, hits = [], [], []
    for q in QUERIES:  # warm-up
        s.request("workspace/symbol", {"query": q})
    for _ in range(a.rounds):
        for q in QUERIES:
            t = time.perf_counter()
            r = s.request("workspace/symbol", {"query": q})
            symbol_ms.append((time.perf_counter() - t) * 1000)
            hits.append(len(r))
            d = s.request("patina/search", {"query": q, "limit": 50, "snippetLines": 12})
            daemon_ms.append(d["tookUs"] / 1000)
    s.close()
    out["symbol_p50_ms"] = round(statistics.median(symbol_ms), 2)
    out["symbol_p95_ms"] = round(pct(symbol_ms, 0.95), 2)
    out["daemon_p50_ms"] = round(statistics.median(daemon_ms), 2)
    out["symbols_per_answer_p50"] = statistics.median(hits)

    start_ms, true_ms = [], []
    for _ in range(a.runs):
        t = time.perf_counter()
        s = Server(lsp, env, home)
        s.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init_params(a.repo, False)})
        m = s.read()
        start_ms.append((time.perf_counter() - t) * 1000)
        assert m["result"]["serverInfo"]["name"] == "patina-lsp", m
        s.close()
        t = time.perf_counter()
        subprocess.run(["/bin/true"])
        true_ms.append((time.perf_counter() - t) * 1000)
    out["start_init_p50_ms"] = round(statistics.median(start_ms), 2)
    out["start_init_p95_ms"] = round(pct(start_ms, 0.95), 2)
    out["bin_true_p50_ms"] = round(statistics.median(true_ms), 2)

    # Stop the daemon this benchmark started.
    subprocess.run([os.path.join(os.path.dirname(os.path.abspath(a.daemon)), "patina"), "daemon", "stop"],
                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if a.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k:24} {v}")


if __name__ == "__main__":
    main()
