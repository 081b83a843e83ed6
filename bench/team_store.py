#!/usr/bin/env python3
"""A team's store on one node (issue 66, item 6): publish a repository's index, then let a second
daemon on a fresh state register a clone and take every vector from the store; also `--org`
question latency and the store's size.

    bench/team_store.py --repo CLONE [--bin target/release] [--work DIR] [--questions FILE]

Steps, each timed:
1. a real PostgreSQL 16 with pgvector (`tests/pg_server.py`, the pinned pgserver wheel in
   target/pydeps), roles `publisher`, `team_backend` and `dev`;
2. daemon A (fresh home, the model) registers CLONE and embeds it (the cost the store saves);
3. A publishes it (`patina publish --reader team_backend`): wall time, what was sent, the store's
   size on disk afterwards;
4. daemon B (fresh home, the model, role `dev`) registers a second clone at the same commit:
   the time until every chunk has its vector, and how many it computed itself (should be 0);
5. daemon C (fresh home, the model, role `dev`) with a one-file repository of its own asks each
   question with `--org`: whole-process wall time and the daemon's own time.

Prints one JSON object. Nothing is fitted: the questions are generic (any code base answers them).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Patina, models_dir  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REMOTE = "https://git.example.com/bench/published.git"
QUESTIONS = [
    "how are errors reported to the caller",
    "where is the configuration read",
    "how is a connection opened and closed",
    "what runs when the program starts",
    "how are tests set up",
    "where are timeouts handled",
    "how is input parsed",
    "how does it log what it does",
    "what happens on shutdown",
    "how are threads or tasks started",
    "where is memory allocated for buffers",
    "how are options validated",
]


def pg_start(work):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "target" / "pydeps"))
    out = subprocess.run([sys.executable, str(ROOT / "tests" / "pg_server.py"), str(work / "pg")],
                         env=env, capture_output=True, text=True, check=True)
    info = json.loads(out.stdout.strip().splitlines()[-1])
    psql = ROOT / "target" / "pydeps" / "pgserver" / "pginstall" / "bin" / "psql"

    def sql(text, user="postgres"):
        r = subprocess.run([str(psql), "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h",
                            info["socket_dir"], "-p", str(info["port"]), "-U", user, "-d",
                            "postgres", "-c", text], capture_output=True, text=True, check=True)
        return r.stdout.strip()

    def url(user):
        return f"host={info['socket_dir']} port={info['port']} user={user} dbname=postgres"
    return info, sql, url


def daemon_home(work, name, url):
    home = work / name
    home.mkdir()
    (home / "models").mkdir()
    (home / "models" / "all-MiniLM-L6-v2").symlink_to(models_dir() / "all-MiniLM-L6-v2")
    (home / "config.toml").write_text(
        f'[daemon]\nmemory_mb = 4096\n\n[team]\nurl = "{url}"\ntimeout_ms = 5000\n')
    return home


def wait_embedded(p, root, limit=7200):
    t0 = time.time()
    while time.time() - t0 < limit:
        for r in p.status()["repos"]:
            if r["root"] == str(root) and not r.get("indexing") and r["chunks"] > 0 \
                    and r.get("embed_backlog", 0) == 0 and r.get("vectors", 0) == r["chunks"]:
                return time.time() - t0, r
        time.sleep(1)
    raise SystemExit(f"{root} not embedded within {limit} s")


def clone(src, into):
    subprocess.run(["git", "clone", "-q", "--shared", str(src), str(into)], check=True)
    head = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    subprocess.run(["git", "-C", str(into), "checkout", "-q", head], check=True)
    subprocess.run(["git", "-C", str(into), "remote", "set-url", "origin", REMOTE], check=True)
    return Path(os.path.realpath(into))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--bin", default=str(ROOT / "target" / "release"))
    ap.add_argument("--work", default="")
    ap.add_argument("--questions", default="")
    args = ap.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="team-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    questions = (Path(args.questions).read_text().split("\n") if args.questions else QUESTIONS)
    questions = [q for q in questions if q.strip()]
    info, sql, url = pg_start(work)
    sql("CREATE ROLE publisher LOGIN; GRANT CREATE ON DATABASE postgres TO publisher;"
        " CREATE ROLE team_backend; CREATE ROLE dev LOGIN IN ROLE team_backend;")
    out = {"repo": args.repo}
    daemons = []
    try:
        src = clone(args.repo, work / "a-clone")
        a = Patina(args.bin, daemon_home(work, "a", url("publisher")), True)
        daemons.append(a)
        a.run("add", str(src))
        took, r = wait_embedded(a, src)
        out["chunks"] = r["chunks"]
        out["files"] = r["files"]
        out["a_embed_s"] = round(took, 1)
        t0 = time.time()
        pub = json.loads(a.run("publish", str(src), "--reader", "team_backend", "--json").stdout)
        out["publish_s"] = round(time.time() - t0, 2)
        out["publish"] = pub
        t0 = time.time()
        again = json.loads(a.run("publish", str(src), "--reader", "team_backend", "--json").stdout)
        out["publish_again_s"] = round(time.time() - t0, 2)
        out["publish_again_already"] = again["already"]
        out["store_bytes"] = int(sql("SELECT pg_database_size('postgres')"))
        out["store_tables_bytes"] = {
            t: int(sql(f"SELECT pg_total_relation_size('patina.{t}')"))
            for t in ["chunks", "vectors", "files", "commit_files"]}
        listed = subprocess.run(["git", "-C", str(src), "ls-files", "-z"], capture_output=True,
                                check=True).stdout.decode(errors="replace").split("\0")
        out["source_bytes"] = sum((src / f).stat().st_size for f in listed
                                  if f and (src / f).is_file() and not (src / f).is_symlink())
        a.run("daemon", "stop", check=False)

        b_src = clone(args.repo, work / "b-clone")
        b = Patina(args.bin, daemon_home(work, "b", url("dev")), True)
        daemons.append(b)
        t0 = time.time()
        b.run("add", str(b_src))
        took, r = wait_embedded(b, b_src)
        out["b_all_vectors_s"] = round(time.time() - t0, 1)
        d = b.status()["daemon"]
        out["b_computed"] = d["embeddings_computed"]
        out["b_from_team"] = d["team"]["embeddings_from_team"]
        b.run("daemon", "stop", check=False)

        own = work / "c-own"
        own.mkdir()
        (own / "notes.md").write_text("# Notes\n\nNothing about the published code.\n")
        for cmd in (["init", "-q"], ["add", "."], ["-c", "user.name=b", "-c", "user.email=b@b",
                                                      "commit", "-qm", "notes"]):
            subprocess.run(["git", "-C", str(own), *cmd], check=True)
        c = Patina(args.bin, daemon_home(work, "c", url("dev")), True)
        daemons.append(c)
        c.run("add", str(own))
        wait_embedded(c, own.resolve())
        walls, tooks, found = [], [], 0
        for q in questions:
            t0 = time.time()
            res = c.run("q", "--org", q, "--json", cwd=str(own), check=False)
            walls.append((time.time() - t0) * 1000)
            lines = [json.loads(x) for x in res.stdout.splitlines() if x.strip()]
            summary = lines[-1] if lines else {}
            tooks.append(summary.get("took_us", 0) / 1000)
            found += sum(1 for h in lines[:-1] if h.get("published"))
        out["org_questions"] = len(questions)
        out["org_wall_ms_median"] = round(statistics.median(walls), 1)
        out["org_wall_ms_max"] = round(max(walls), 1)
        out["org_daemon_ms_median"] = round(statistics.median(tooks), 1)
        out["org_published_hits"] = found
    finally:
        for p in daemons:
            p.run("daemon", "stop", check=False)
        try:
            os.kill(int(info["pid"]), 3)
        except OSError:
            pass
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
