#!/usr/bin/env python3
"""The symlink race, at full speed: a file of a registered repository is replaced, by rename, with
a regular file and then with a symlink to a file outside the repository, as fast as a loop can,
while clients read it every way an answer can: MCP `get_file`, `patina_query` with previews
(snippets), `patina_context`, `patina q -C` (lines around hits), and the indexer (the watcher
re-reads every rename). Counts the answers, and the answers holding the outside file's bytes,
which must be none. Exits 1 if any outside byte was served.

    python3 bench/symlink_race.py [--bin target/release] [--seconds 60]

Prints one JSON object: calls, refused and leaked answers per reader, and the swaps made.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Patina  # noqa: E402

SECRET = "zebraquasarsecret"


class Mcp:
    """One `patina-mcp` over stdio (newline-delimited JSON-RPC)."""

    def __init__(self, exe, env, cwd):
        self.p = subprocess.Popen([exe], env=env, cwd=cwd, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.next = 1
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "symlink-race", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()

    def request(self, method, params):
        i = self.next
        self.next += 1
        self.send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("patina-mcp exited")
            m = json.loads(line)
            if m.get("id") == i:
                return m

    def tool(self, name, args):
        return self.request("tools/call", {"name": name, "arguments": args})

    def close(self):
        self.p.kill()
        self.p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="target/release", help="directory of patina, patinad, patina-mcp")
    ap.add_argument("--seconds", type=float, default=60.0)
    a = ap.parse_args()
    bin_dir = os.path.abspath(a.bin)
    for exe in ("patina", "patinad", "patina-mcp"):
        if not os.access(os.path.join(bin_dir, exe), os.X_OK):
            sys.exit(f"symlink_race: no {exe} in {bin_dir} (build with `cargo build --release`)")
    with tempfile.TemporaryDirectory(prefix="prace") as tmp:
        tmp = Path(tmp)
        home, repo, outside = tmp / "home", tmp / "repo", tmp / "outside"
        for d in (home, repo / "src", outside):
            d.mkdir(parents=True)
        (outside / "secret.txt").write_text(f"{SECRET}: words from outside the repository\n")
        (repo / "race.rs").write_text("pub fn regular_race() { let racing_marker = 1; }\n")
        (repo / "src" / "lib.rs").write_text("pub fn ordinary() { racing_marker(); }\n")
        git = lambda *args: subprocess.run(["git", "-C", str(repo), *args], check=True,
                                           capture_output=True)
        git("init", "-q")
        git("add", ".")
        git("-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init")
        patina = Patina(bin_dir, str(home), model=False)
        patina.env["PATINA_DAEMON_BIN"] = os.path.join(bin_dir, "patinad")
        patina.run("add", str(repo))
        stop = threading.Event()
        counts = {}
        lock = threading.Lock()

        def tally(reader, text, ok):
            with lock:
                c = counts.setdefault(reader, {"calls": 0, "refused": 0, "leaked": 0})
                c["calls"] += 1
                c["refused"] += 0 if ok else 1
                c["leaked"] += 1 if SECRET in text else 0

        swaps = [0]

        def swapper():
            while not stop.is_set():
                (repo / ".swap-file").write_text("pub fn regular_race() { let racing_marker = 1; }\n")
                os.rename(repo / ".swap-file", repo / "race.rs")
                try:
                    os.unlink(repo / ".swap-link")
                except FileNotFoundError:
                    pass
                os.symlink(outside / "secret.txt", repo / ".swap-link")
                os.rename(repo / ".swap-link", repo / "race.rs")
                swaps[0] += 1

        def mcp_reader(reader, tool, args):
            m = Mcp(os.path.join(bin_dir, "patina-mcp"), patina.env, str(repo))
            try:
                while not stop.is_set():
                    r = m.tool(tool, args)
                    result = r.get("result", {})
                    tally(reader, json.dumps(r), not result.get("isError", True))
            finally:
                m.close()

        def cli_reader():
            while not stop.is_set():
                p = patina.run("q", "racing_marker", "-C", "2", "--fresh=200", cwd=str(repo),
                               check=False)
                tally("q -C", p.stdout + p.stderr, p.returncode == 0)

        threads = [threading.Thread(target=swapper)]
        threads += [
            threading.Thread(target=mcp_reader, args=("get_file", "get_file", {"path": "race.rs"})),
            threading.Thread(target=mcp_reader, args=("snippets", "patina_query",
                             {"query": "racing_marker regular_race", "preview": True})),
            threading.Thread(target=mcp_reader, args=("context", "patina_context",
                             {"query": "racing_marker regular_race"})),
            threading.Thread(target=cli_reader),
        ]
        for t in threads:
            t.start()
        time.sleep(a.seconds)
        stop.set()
        for t in threads:
            t.join()
        # What the indexer took in over all those renames: hits for the outside file's word (the
        # summary line repeats the query, so only hits count).
        p = patina.run("q", SECRET, "--json", "--fresh", cwd=str(repo), check=False)
        hits = [line for line in p.stdout.splitlines() if '"type":"hit"' in line.replace(" ", "")]
        tally("index", "\n".join(hits), p.returncode in (0, 1))
        patina.run("daemon", "stop", check=False)
        leaked = sum(c["leaked"] for c in counts.values())
        print(json.dumps({"seconds": a.seconds, "swaps": swaps[0], "readers": counts,
                          "outside_answers": leaked}, indent=1))
        sys.exit(1 if leaked else 0)


if __name__ == "__main__":
    main()
