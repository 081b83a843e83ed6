#!/usr/bin/env python3
"""Side by side with ck (issue 15 item 5): the measuring half of bench/peers.sh (run that).

Not part of CI. Reads CK_BIN, CK_COMMIT, CK_LD_LIBRARY_PATH, CK_XDG_CACHE_HOME, PATINA_BIN,
PEERS_MODEL and PEERS_SEM_REASON from peers.sh; prints Markdown tables, and writes the raw figures
to WORK/peers-results.json.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import patina_env, pct, proc_status_bytes  # noqa: E402

# Five identifiers (present in the repository) and five questions per repository; a generic list
# for any other repository.
QUERIES = {
    "flask": ["url_for", "send_file", "register_blueprint", "SecureCookieSessionInterface",
              "before_request", "how are sessions signed", "where is the request context pushed",
              "load configuration from environment variables", "error handler registration",
              "how are static files served"],
    "cobra": ["ExecuteC", "PersistentPreRun", "MarkFlagRequired", "GenBashCompletion",
              "SetHelpTemplate", "how are flags parsed", "where are shell completions generated",
              "find the subcommand to run from the arguments", "suggestions for mistyped commands",
              "how is the usage message printed"],
    "ripgrep": ["SearcherBuilder", "search_path", "GlobSetBuilder", "BinaryDetection",
                "LineBuffer", "how are binary files detected", "where are gitignore rules applied",
                "print results as json", "memory map the file for searching",
                "parallel directory traversal"],
}
GENERIC = ["main", "config", "parse", "error", "test", "how are errors handled",
           "where is configuration loaded", "command line arguments", "read a file",
           "how are tests organised"]


def log(msg):
    print(f"peers: {msg}", file=sys.stderr, flush=True)



def run_rss(cmd, env, cwd=None):
    """Whole-process wall time (ms), the child's own max RSS (MiB, from wait4), exit code, stdout,
    stderr. Output goes to temporary files (no pipe to fill while we wait)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        ms = (time.perf_counter() - t0) * 1000
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return ms, ru.ru_maxrss / 1024, p.returncode, out.read(), err.read()


def run(cmd, env, cwd=None):
    ms, _, rc, out, err = run_rss(cmd, env, cwd)
    return ms, out, err, rc


def clone(src, dst):
    if os.path.exists(dst):
        shutil.rmtree(dst)
    subprocess.run(["git", "clone", "-q", src, dst], check=True)


def proc_mib(pid, key):
    b = proc_status_bytes(pid, key)
    return None if b is None else b / (1024 * 1024)


def summary(times):
    return {"p50_ms": round(statistics.median(times), 1), "p95_ms": round(pct(times, 0.95), 1),
            "runs": len(times)}


def bench_queries(cmd_for, queries, runs, env, cwd, rss=False):
    """The warm-up (first ask of each query) is timed apart: Patina's daemon keeps an LRU of query
    embeddings, so only a first ask pays for embedding the query; ck embeds it in every process."""
    times, rsses, fails, first = [], [], 0, []
    for q in queries:  # warm-up (page cache, ck's lazily rebuilt tantivy index)
        first.append(run(cmd_for(q), env, cwd)[0])
    for q in queries:
        for _ in range(runs):
            if rss:
                ms, mib, rc, _, _ = run_rss(cmd_for(q), env, cwd)
                rsses.append(mib)
            else:
                ms, _, _, rc = run(cmd_for(q), env, cwd)
            times.append(ms)
            fails += rc not in (0, 1)
    out = summary(times)
    out["failed_runs"] = fails
    out["first_ask"] = summary(first)
    if rss:
        out["query_rss_mib"] = round(statistics.median(rsses), 1)
    return out


# --- Patina ---------------------------------------------------------------------------------


def patina_status(patina, env):
    r = subprocess.run([patina, "status", "--json"], env=env, capture_output=True)
    return json.loads(r.stdout) if r.returncode == 0 else None


def start_daemon(patina, env):
    subprocess.run([patina, "daemon", "start"], env=env, check=True, capture_output=True)
    deadline = time.time() + 60
    while (st := patina_status(patina, env)) is None:
        if time.time() > deadline:
            sys.exit("peers: patinad did not come up")
        time.sleep(0.2)
    return st["daemon"]["pid"]


def wait_idle(patina, env, limit=600):
    """Until every repository is indexed at HEAD with no chunk or message backlog."""
    deadline = time.time() + limit
    while time.time() < deadline:
        st = patina_status(patina, env)
        if st and st["repos"] and all(not r["indexing"] and not r["embed_backlog"]
                                      and not r.get("message_backlog") and r["freshness"]["fresh"]
                                      for r in st["repos"]):
            return
        time.sleep(0.5)


def bench_patina(name, src, work, runs, queries):
    patina = os.path.join(os.environ["PATINA_BIN"], "patina")
    sem_reason = os.environ.get("PEERS_SEM_REASON", "")
    home = os.path.join(work, "state", name)
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    env = patina_env(home,
                     PATINA_MODEL_DIR=os.environ["PEERS_MODEL"] if not sem_reason else "/nonexistent")
    repo = os.path.join(work, "repos", name + "-patina")
    clone(src, repo)
    res = {"tool": "patina"}
    # ck has no answer cache: Patina's query cache is off for the timed rows (it would serve the
    # repeated runs), and measured apart at the end.
    config = os.path.join(home, "config.toml")
    with open(config, "w") as f:
        f.write("[cache]\nentries = 0\n")
    pid = start_daemon(patina, env)
    res["semantic"] = patina_status(patina, env)["daemon"].get("semantic", "")
    try:
        t0 = time.perf_counter()
        r = subprocess.run([patina, "add", repo], env=env, capture_output=True, text=True)
        res["lexical_s"] = round(time.perf_counter() - t0, 2)
        if r.returncode != 0:
            sys.exit(f"peers: patina add failed: {r.stderr}")
        t_sem = t_msg = None
        deadline = time.time() + 7200
        while time.time() < deadline:
            st = patina_status(patina, env)
            rp = st["repos"][0] if st and st["repos"] else None
            if rp and not rp["indexing"]:
                now = time.perf_counter() - t0
                if t_sem is None and rp["embed_backlog"] == 0:
                    t_sem = now
                if t_sem is not None and rp.get("message_backlog", 0) == 0:
                    t_msg = now
                    break
            time.sleep(0.25)
        res["files"], res["chunks"], res["vectors"] = rp["files"], rp["chunks"], rp["vectors"]
        if st["daemon"].get("semantic_on"):
            res["semantic_s"] = round(t_sem, 1) if t_sem is not None else None
            res["messages_s"] = round(t_msg, 1) if t_msg is not None else None
        else:
            res["semantic_s"] = None
            res["semantic_note"] = st["daemon"].get("semantic", "semantic off")
        time.sleep(3)
        res["idle_rss_mib"] = round(proc_mib(pid, "VmRSS"), 1)
        res["peak_rss_mib"] = round(proc_mib(pid, "VmHWM"), 1)
        res["modes"] = {}
        log(f"{name}: patina queries")
        res["modes"]["hybrid (default)"] = bench_queries(
            lambda q: [patina, "q", q, "-n", "10"], queries, runs, env, repo)
        res["modes"]["lexical"] = bench_queries(
            lambda q: [patina, "q", q, "-n", "10", "--oracle", "lexical"], queries, runs, env, repo)
        res["client_rss_mib"] = round(run_rss([patina, "q", queries[5], "-n", "10"], env, repo)[1], 1)
        res["rss_after_queries_mib"] = round(proc_mib(pid, "VmRSS"), 1)
        _, out, _, _ = run([patina, "q", queries[5], "-n", "10", "--json"], env, repo)
        assert json.loads(out.splitlines()[-1]).get("cached") is not True, "the query cache answered with entries = 0"
        # The same queries repeated with the query cache on (the default): a restarted daemon.
        subprocess.run([patina, "daemon", "stop"], env=env, capture_output=True)
        os.remove(config)
        start_daemon(patina, env)
        wait_idle(patina, env)
        res["modes"]["hybrid, repeated (query cache on)"] = bench_queries(
            lambda q: [patina, "q", q, "-n", "10"], queries, runs, env, repo)
        _, out, _, _ = run([patina, "q", queries[5], "-n", "10", "--json"], env, repo)
        res["cache_served"] = json.loads(out.splitlines()[-1]).get("cached") is True
    finally:
        subprocess.run([patina, "daemon", "stop"], env=env, capture_output=True)
    return res


# --- ck -------------------------------------------------------------------------------------


def bench_ck(name, src, work, runs, queries):
    ck = os.environ["CK_BIN"]
    sem_reason = os.environ.get("PEERS_SEM_REASON", "")
    env = dict(os.environ, NO_COLOR="1", XDG_CACHE_HOME=os.environ["CK_XDG_CACHE_HOME"],
               LD_LIBRARY_PATH=os.environ["CK_LD_LIBRARY_PATH"],
               HF_ENDPOINT="http://127.0.0.1:9")  # closed port: a download attempt fails at once
    repo = os.path.join(work, "repos", name + "-ck")
    clone(src, repo)
    res = {"tool": "ck"}

    def fresh():
        for p in (".ck", ".ckignore"):
            path = os.path.join(repo, p)
            if os.path.isdir(path):
                shutil.rmtree(path)
            elif os.path.exists(path):
                os.remove(path)

    # Cold lexical: the first --lex builds chunk sidecars (no embeddings) and the tantivy index.
    fresh()
    ms, mib, rc, _, err = run_rss([ck, "--lex", "--topk", "10", queries[0], "."], env, repo)
    res["lexical_s"], res["lexical_rss_mib"] = round(ms / 1000, 2), round(mib, 1)
    if rc not in (0, 1):
        res["lexical_error"] = err.decode(errors="replace")[-400:]
    # Cold semantic: a fresh clone state, `ck --index --model minilm` (embeds every chunk).
    fresh()
    if not sem_reason:
        ms, mib, rc, out, err = run_rss([ck, "--index", "--model", "minilm", "."], env, repo)
        if rc == 0:
            res["semantic_s"], res["semantic_rss_mib"] = round(ms / 1000, 1), round(mib, 1)
        else:
            sem_reason = "ck --index --model minilm failed: " + err.decode(errors="replace").strip()[-400:]
    if sem_reason:
        res["semantic_s"] = None
        res["semantic_note"] = sem_reason
        log(f"{name}: ck semantic not measured: {sem_reason}")
        # ck's --lex needs an index; rebuild the lexical-only one for the query runs.
        run([ck, "--lex", "--topk", "10", queries[0], "."], env, repo)
    r = subprocess.run([ck, "--status-json", "."], env=env, cwd=repo, capture_output=True, text=True)
    try:
        res["status"] = json.loads(r.stdout)
    except ValueError:
        res["status"] = r.stdout[-400:]
    log(f"{name}: ck queries")
    res["modes"] = {}
    res["modes"]["regex (-F)"] = bench_queries(lambda q: [ck, "-n", "-F", q, "."], queries, runs, env, repo, rss=True)
    res["modes"]["lexical (--lex)"] = bench_queries(
        lambda q: [ck, "--lex", "--topk", "10", q, "."], queries, runs, env, repo, rss=True)
    if not sem_reason:
        res["modes"]["semantic (--sem)"] = bench_queries(
            lambda q: [ck, "--sem", "--topk", "10", q, "."], queries, runs, env, repo, rss=True)
        res["modes"]["hybrid (--hybrid)"] = bench_queries(
            lambda q: [ck, "--hybrid", "--topk", "10", q, "."], queries, runs, env, repo, rss=True)
    return res


# --- report ---------------------------------------------------------------------------------


def fmt(v, unit=""):
    return "—" if v is None else f"{v}{unit}"


def report(results, runs):
    lines = ["| repository | tool | cold index, lexical | cold index, semantic (every chunk embedded) "
             "| peak RSS while indexing | idle RSS after indexing |",
             "|---|---|---:|---:|---:|---:|"]
    for name, r in results.items():
        p, c = r["patina"], r["ck"]
        sem = fmt(p["semantic_s"], " s")
        if p["semantic_s"]:
            sem += f" ({round(p['chunks'] / p['semantic_s'], 1)} chunks/s)"
        if p.get("messages_s") is not None:
            sem += f" (+ commit messages: {p['messages_s']} s)"
        lines.append(f"| {name} ({p['files']} files, {p['chunks']} chunks) | Patina | {p['lexical_s']} s "
                     f"| {sem} | {p['peak_rss_mib']} MiB (daemon VmHWM) | {p['idle_rss_mib']} MiB (daemon VmRSS) |")
        peak = max(v for v in (c.get("lexical_rss_mib"), c.get("semantic_rss_mib")) if v is not None)
        st = c.get("status") if isinstance(c.get("status"), dict) else {}
        size = f" ({st.get('total_files')} files, {st.get('total_chunks')} chunks)" if st else ""
        rate = (f" ({round(st['total_chunks'] / c['semantic_s'], 1)} chunks/s)"
                if c.get("semantic_s") and st.get("total_chunks") else "")
        lines.append(f"| {name}{size} | ck | {c['lexical_s']} s (first `--lex`, incl. 1 query) "
                     f"| {fmt(c['semantic_s'], ' s')}{rate} | {peak} MiB (max of the indexing processes) "
                     f"| 0 (no resident process) |")
    lines += ["", f"Queries: 10 per repository (5 identifiers, 5 questions) x {runs} runs, whole process, "
              "after one warm-up each.", "",
              "| repository | tool, mode | p50 | p95 | RSS of one query process (median) |",
              "|---|---|---:|---:|---:|"]
    for name, r in results.items():
        p, c = r["patina"], r["ck"]
        for mode, m in p["modes"].items():
            lines.append(f"| {name} | Patina `q`, {mode} | {m['p50_ms']} ms | {m['p95_ms']} ms "
                         f"| {p['client_rss_mib']} MiB client (+ daemon {p['rss_after_queries_mib']} MiB) |")
            if mode == "hybrid (default)" and m.get("first_ask"):
                f = m["first_ask"]
                lines.append(f"| {name} | Patina `q`, hybrid, first ask of each query (query embedding "
                             f"not yet cached; {f['runs']} runs) | {f['p50_ms']} ms | {f['p95_ms']} ms | as above |")
        for mode, m in c["modes"].items():
            fails = f" ({m['failed_runs']} failed)" if m["failed_runs"] else ""
            lines.append(f"| {name} | ck, {mode} | {m['p50_ms']} ms{fails} | {m['p95_ms']} ms "
                         f"| {m['query_rss_mib']} MiB |")
    notes = ["", "Patina's query cache is off (`[cache] entries = 0`) for its timed rows, as ck has none; "
             "the 'repeated' row is the default (cache on) after a daemon restart. Its daemon still keeps "
             "query embeddings (an LRU of 1024), so the timed hybrid rows reuse the vector computed at "
             "the warm-up; the 'first ask' row is that warm-up pass (one run per query), where the "
             "query is embedded. ck loads the model and embeds the query in every `--sem`/`--hybrid` process."]
    for name, r in results.items():
        for tool in ("patina", "ck"):
            if r[tool].get("semantic_note"):
                notes.append(f"- {name}, {tool}: semantic not measured: {r[tool]['semantic_note']}")
            if r[tool].get("lexical_error"):
                notes.append(f"- {name}, {tool}: lexical index error: {r[tool]['lexical_error']}")
    return "\n".join(lines + notes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("repos", nargs="+")
    args = ap.parse_args()
    os.makedirs(os.path.join(args.work, "repos"), exist_ok=True)
    results = {}
    for src in args.repos:
        src = os.path.abspath(src)
        name = os.path.basename(src.rstrip("/"))
        if name in ("repo", ".git"):  # /work/.mirror/owner+name/repo, or a .git dir
            name = os.path.basename(os.path.dirname(src.rstrip("/"))).split("+")[-1]
        queries = QUERIES.get(name, GENERIC)
        log(f"{name}: Patina")
        results[name] = {"patina": bench_patina(name, src, args.work, args.runs, queries)}
        log(f"{name}: ck")
        results[name]["ck"] = bench_ck(name, src, args.work, args.runs, queries)
        with open(os.path.join(args.work, "peers-results.json"), "w") as f:
            json.dump({"ck_commit": os.environ.get("CK_COMMIT"), "results": results}, f, indent=1)
    print(f"ck {os.environ.get('CK_COMMIT')}, Patina {os.environ['PATINA_BIN']}, model {os.environ['PEERS_MODEL']}\n")
    print(report(results, args.runs))


if __name__ == "__main__":
    main()
