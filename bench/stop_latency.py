#!/usr/bin/env python3
"""How fast `patina daemon stop` ends a daemon that is embedding, and `patina rm` cancels a round.

The suite checks the behaviours ("stop ends the daemon while embedding", "rm cancels the round")
with generous deadlines; the figures themselves are measured here, on a release build:

    bench/stop_latency.py [--bin target/release] [--files 3000] [--runs 5]

Each run makes a fresh PATINA_HOME with the installed model linked in, adds a generated Python
repository of FILES modules with `--no-wait`, and
  * stop: waits until the model is embedding (a backlog > 0 and some vectors computed), then times
    `patina daemon stop` until the process is gone;
  * rm:   restarts, adds a second copy with `--no-wait`, waits until its round is under way
    (files indexed > 0, indexing), then times `patina rm` until it returns.
Prints the median and the worst of each, in ms, and one JSON line.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import models_dir


def generated_repo(root: Path, files: int) -> None:
    (root / "pkg").mkdir(parents=True)
    for f in range(files):
        body = "".join(
            f"def velocity_{f}_{d}(value):\n    \"\"\"Return the velocity of value {d}.\"\"\"\n"
            f"    return value * {d} + {f}\n\n\n"
            for d in range(5)
        )
        (root / "pkg" / f"m{f}.py").write_text(body)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=b", "-c", "user.email=b@b",
                                                 "commit", "-qm", "generated"]):
        subprocess.run(["git", *args], cwd=root, check=True)


class Patina:
    def __init__(self, binary: Path, home: Path):
        self.binary, self.home = binary, home
        self.env = {**os.environ, "PATINA_HOME": str(home), "PATINA_DAEMON_BIN": str(binary / "patinad")}
        self.env.pop("PATINA_SOCKET", None)

    def run(self, *args: str) -> str:
        r = subprocess.run([str(self.binary / "patina"), *args], env=self.env, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"stop_latency: patina {' '.join(args)} failed ({r.returncode}): {r.stderr[-2000:]}")
        return r.stdout

    def repo(self, root: Path) -> dict:
        repos = json.loads(self.run("status", "--json"))["repos"]
        return next(r for r in repos if r["root"] == str(root))

    def pid(self) -> int:
        return int(json.loads(self.run("status", "--json"))["daemon"]["pid"])


def wait(what: str, cond, limit: float = 600.0) -> None:
    end = time.monotonic() + limit
    while not cond():
        if time.monotonic() > end:
            sys.exit(f"stop_latency: timed out waiting until {what}")
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text()


def one_run(binary: Path, files: int, repos: Path) -> tuple[float, float]:
    home = Path(tempfile.mkdtemp(prefix="pstop"))
    try:
        (home / "models").mkdir()
        model = models_dir() / "all-MiniLM-L6-v2"
        if not (model / "MANIFEST.json").is_file():
            sys.exit(f"stop_latency: no model at {model}; run scripts/setup-model")
        (home / "models" / "all-MiniLM-L6-v2").symlink_to(model)
        p = Patina(binary, home)
        first, second = repos / "a", repos / "b"
        p.run("add", "--no-wait", str(first))
        wait("the model is embedding", lambda: (lambda r: r["embed_backlog"] > 0 and r["vectors"] > 0)(p.repo(first)))
        pid = p.pid()
        t = time.monotonic()
        p.run("daemon", "stop")
        wait("the daemon is gone", lambda: not alive(pid), 120)
        stop_ms = (time.monotonic() - t) * 1000

        p.run("add", "--no-wait", str(second))
        wait("the round is under way", lambda: (lambda r: r["indexing"] and r["files"] > 0)(p.repo(second)))
        t = time.monotonic()
        p.run("rm", str(second))
        rm_ms = (time.monotonic() - t) * 1000
        p.run("daemon", "stop")
        return stop_ms, rm_ms
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="target/release", type=Path)
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pstop-repos") as d:
        repos = Path(d)
        for name in ("a", "b"):
            generated_repo(repos / name, args.files)
        stops, rms = [], []
        for i in range(args.runs):
            s, r = one_run(args.bin.resolve(), args.files, repos)
            print(f"run {i + 1}: stop {s:.0f} ms, rm {r:.0f} ms", file=sys.stderr)
            stops.append(s)
            rms.append(r)
    out = {"files": args.files, "runs": args.runs,
           "stop_while_embedding_ms": {"median": round(statistics.median(stops)), "max": round(max(stops))},
           "rm_during_round_ms": {"median": round(statistics.median(rms)), "max": round(max(rms))}}
    print(f"daemon stop while embedding: median {out['stop_while_embedding_ms']['median']} ms, "
          f"worst {out['stop_while_embedding_ms']['max']} ms")
    print(f"rm during a round: median {out['rm_during_round_ms']['median']} ms, "
          f"worst {out['rm_during_round_ms']['max']} ms")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
