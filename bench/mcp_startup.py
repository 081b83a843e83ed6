#!/usr/bin/env python3
"""Start-up latency of `patina-mcp`: process start → `initialize` response, with a warm daemon.

Starts a daemon in a fresh PATINA_HOME (through the shim itself, which starts one when none runs),
warms up, then runs `patina-mcp` as a new process N times. Each run writes an `initialize` request
to the new process and measures the wall time until the response line arrives (process creation,
runtime start, reading stdin, answering), then the time until a first tool call (`list_repos`,
which connects to the warm daemon) is answered. Also reports the binary's size and, as a
baseline, the time to spawn and reap `/bin/true`.

    bench/mcp_startup.py [--bin target/release] [--runs 50] [--json]
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from common import pct

INIT = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "bench", "version": "0"}},
}) + "\n"
INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
LIST = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "list_repos", "arguments": {}}}) + "\n"



def one_run(shim, env):
    """(ms to the initialize response, ms to the first tool answer) for a fresh process."""
    t0 = time.perf_counter()
    p = subprocess.Popen([shim], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=env, cwd=env["PATINA_HOME"])
    p.stdin.write(INIT.encode())
    p.stdin.flush()
    line = p.stdout.readline()
    t1 = time.perf_counter()
    if b'"protocolVersion":"2025-06-18"' not in line:
        sys.exit(f"unexpected initialize answer: {line!r}")
    p.stdin.write((INITIALIZED + LIST).encode())
    p.stdin.flush()
    line = p.stdout.readline()
    t2 = time.perf_counter()
    if b'"isError":false' not in line:
        sys.exit(f"list_repos failed: {line!r}")
    p.stdin.close()
    p.wait()
    return (t1 - t0) * 1000, (t2 - t0) * 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="target/release")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.runs < 30:
        sys.exit("use at least 30 runs for stable percentiles")

    shim = os.path.abspath(os.path.join(args.bin, "patina-mcp"))
    home = tempfile.mkdtemp(prefix="pmcp")
    env = {"PATINA_HOME": home, "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "HOME": os.environ.get("HOME", "/tmp")}
    try:
        one_run(shim, env)  # starts the daemon (the shim starts one when none answers)
        for _ in range(5):  # warm-up: page cache, daemon connections
            one_run(shim, env)
        init, first = [], []
        for _ in range(args.runs):
            a, b = one_run(shim, env)
            init.append(a)
            first.append(b)
        base = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            subprocess.run(["/bin/true"])
            base.append((time.perf_counter() - t0) * 1000)
    finally:
        try:
            pid = int(open(os.path.join(home, "patinad.lock")).read().strip())
            os.kill(pid, signal.SIGTERM)
        except (OSError, ValueError):
            pass

    size = os.path.getsize(shim)
    out = {
        "binary": shim,
        "binary_bytes": size,
        "runs": args.runs,
        "initialize_ms": {"p50": pct(init, 0.5), "p95": pct(init, 0.95), "mean": statistics.mean(init)},
        "first_tool_call_ms": {"p50": pct(first, 0.5), "p95": pct(first, 0.95), "mean": statistics.mean(first)},
        "spawn_true_ms": {"p50": pct(base, 0.5), "p95": pct(base, 0.95)},
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"patina-mcp {shim}: {size / 1024 / 1024:.2f} MiB ({size} bytes)")
    print(f"process start -> initialize response ({args.runs} runs, warm daemon): "
          f"p50 {out['initialize_ms']['p50']:.2f} ms, p95 {out['initialize_ms']['p95']:.2f} ms")
    print(f"process start -> first tool call answered (list_repos): "
          f"p50 {out['first_tool_call_ms']['p50']:.2f} ms, p95 {out['first_tool_call_ms']['p95']:.2f} ms")
    print(f"baseline, spawn+reap /bin/true: p50 {out['spawn_true_ms']['p50']:.2f} ms, "
          f"p95 {out['spawn_true_ms']['p95']:.2f} ms")


if __name__ == "__main__":
    main()
