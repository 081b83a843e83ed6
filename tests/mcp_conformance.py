#!/usr/bin/env python3
"""MCP conformance of the real `patina-mcp` binary, driven by the official MCP Python SDK client.

    python3 tests/mcp_conformance.py --shim target/debug/patina-mcp --home PATINA_HOME --repo REPO

PATINA_HOME must hold a running daemon (its pid in patinad.lock) with REPO — the fixture repository
of tests/util/fixtures.rs — registered and indexed. `cargo test --workspace` runs this through
tests/mcp.rs, which sets all of that up; the SDK (PyPI package `mcp`, the version pinned in
.ci/run) must be importable: `.ci/run` installs it into target/pydeps, which tests/mcp.rs puts on
PYTHONPATH.

Checks: the handshake on every supported protocol version (and the counter-offer for an
unsupported one), tools/list against each version's schema (the SDK validates every result
against the negotiated revision), every tool called on the fixture with its content checked,
errors (unknown tool, bad arguments, path escapes), and session notes surviving a daemon crash
(SIGKILL) to be returned by a later query. Exit status 0 = all passed.
"""

import argparse
import asyncio
import json
import os
import re
import signal
import sys
import time
import xml.etree.ElementTree as ET

INSTALL_HINT = (
    "the official MCP Python SDK is not installed: run "
    "`python3 -m pip install --target target/pydeps 'mcp==2.3.0'` (what .ci/run does) "
    "or `python3 -m pip install 'mcp==2.3.0'`"
)

try:
    import mcp.client.session as sdk_session
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
except ImportError as e:  # a failure, not a skip: CI must install the SDK
    sys.exit(f"FAIL: {INSTALL_HINT} ({e})")

try:
    from mcp.shared.exceptions import MCPError as SdkError  # mcp 2.x
except ImportError:  # mcp 1.x
    from mcp.shared.exceptions import McpError as SdkError

SUPPORTED = ["2024-11-05", "2025-03-26", "2025-06-18"]
TOOLS = {
    "patina_query",
    "patina_context",
    "get_file",
    "explore_structure",
    "list_repos",
    "patina_history",
    "related_files",
    "patina_session_start",
    "patina_session_note",
    "patina_session_end",
    "find_references",
    "call_graph",
    "definition",
    "patina_feedback",
    "repo_map",
}
NOTE = (
    "We chose sled as the metadata storage engine because it is embedded, crash-safe and "
    "needs no C++ toolchain (RocksDB did)."
)

checks = 0


def check(cond, what, detail=None):
    global checks
    checks += 1
    if not cond:
        extra = f"\n--- detail ---\n{detail}" if detail is not None else ""
        # Fail at once: raised inside the SDK's task groups, an error can wait on the shim.
        print(f"FAIL: {what}{extra}", file=sys.stderr, flush=True)
        os._exit(1)


def offer(version):
    """Make the SDK offer `version` in its next initialize."""
    for name in ("LATEST_HANDSHAKE_VERSION", "LATEST_PROTOCOL_VERSION"):
        if hasattr(sdk_session, name):
            setattr(sdk_session, name, version)
    types = getattr(sdk_session, "types", None)
    if types is not None and hasattr(types, "LATEST_PROTOCOL_VERSION") and not hasattr(
        sdk_session, "LATEST_HANDSHAKE_VERSION"
    ):
        types.LATEST_PROTOCOL_VERSION = version


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


class Shim:
    """One `patina-mcp` process and an initialised SDK session with it."""

    def __init__(self, args, version):
        self.args, self.version = args, version

    async def __aenter__(self):
        env = {
            "PATINA_HOME": self.args.home,
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/tmp"),
        }
        params = StdioServerParameters(command=self.args.shim, args=[], env=env, cwd=self.args.repo)
        self._errlog = open(os.path.join(self.args.home, "mcp-shim-stderr.log"), "a")
        self._transport = stdio_client(params, errlog=self._errlog)
        read, write = await self._transport.__aenter__()
        self._session = ClientSession(read, write)
        self.s = await self._session.__aenter__()
        offer(self.version)
        self.init = await self.s.initialize()
        return self

    async def __aexit__(self, *exc):
        await self._session.__aexit__(*exc)
        await self._transport.__aexit__(*exc)
        self._errlog.close()

    async def call(self, name, args=None, ok=True):
        r = await self.s.call_tool(name, args or {})
        if ok:
            check(not r.is_error, f"{name}({args}) succeeds", text_of(r))
        return r


def daemon_pid(home):
    try:
        return int(open(os.path.join(home, "patinad.lock")).read().strip())
    except (OSError, ValueError):
        return None


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                return False
    except OSError:
        pass
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def line_of(path, needle):
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if needle in line:
                return i
    raise AssertionError(f"{path} has no line containing {needle!r}")


async def handshakes(args):
    for version in SUPPORTED:
        async with Shim(args, version) as shim:
            check(shim.init.protocol_version == version, f"{version}: the server accepts it", shim.init)
            check(shim.init.server_info.name == "patina-mcp", f"{version}: server name", shim.init)
            check(shim.init.capabilities.tools is not None, f"{version}: tools capability")
            await shim.s.send_ping()
            tools = (await shim.s.list_tools()).tools
            check({t.name for t in tools} == TOOLS, f"{version}: the tool list", [t.name for t in tools])
            for t in tools:
                check("Use it" in t.description and "\n" not in t.description,
                      f"{version}: {t.name} says in one line when to use it", t.description)
                check(t.input_schema.get("type") == "object", f"{version}: {t.name} input schema")
                structured = version >= "2025-06-18"
                check(
                    (t.output_schema is not None) == structured,
                    f"{version}: {t.name} has an output schema exactly from 2025-06-18",
                    t.output_schema,
                )
            r = await shim.call("patina_query", {"query": "parse_args"})
            check("src/args.rs:" in text_of(r), f"{version}: query text names the definition", text_of(r))
            check(
                (r.structured_content is not None) == (version >= "2025-06-18"),
                f"{version}: structuredContent exactly from 2025-06-18",
                r.structured_content,
            )
            print(f"ok handshake {version}")
    # A version the server does not speak: it answers with its newest, which the SDK accepts.
    async with Shim(args, "2025-11-25") as shim:
        check(shim.init.protocol_version == "2025-06-18", "counter-offer of the newest supported version")
        print("ok counter-offer 2025-11-25 -> 2025-06-18")


async def every_tool(args):
    repo = args.repo
    async with Shim(args, "2025-06-18") as shim:
        # list_repos
        r = await shim.call("list_repos")
        repos = r.structured_content["repos"]
        mine = [x for x in repos if x["root"] == repo]
        check(len(mine) == 1, "list_repos lists the fixture", repos)
        check(mine[0]["files"] >= 10 and mine[0]["chunks"] >= 10, "with file and chunk counts", mine[0])
        check(mine[0].get("languages", {}).get("rust", 0) >= 3, "and languages", mine[0])
        check(repo in text_of(r), "list_repos text names the root", text_of(r))
        print("ok list_repos")

        # patina_query: an identifier finds its definition first, with provenance and freshness.
        def_line = line_of(os.path.join(repo, "src/args.rs"), "pub fn parse_args")
        r = await shim.call("patina_query", {"query": "parse_args", "limit": 5})
        res = r.structured_content["results"]
        check(len(res) >= 2, "several results", res)
        top = res[0]
        check(top["path"] == "src/args.rs" and top["start_line"] <= def_line <= top["end_line"],
              "the definition comes first", top)
        check(top["ref"] == f"src/args.rs:{top['start_line']}-{top['end_line']}", "ref is path:start-end", top)
        check(top["symbol"] == "parse_args" and top["kind"] == "function", "symbol and kind", top)
        check(any(o["oracle"] == "symbol" for o in top["oracles"]), "provenance names the oracles", top)
        check(isinstance(top["score"], float) and top["score"] > 0, "a score", top)
        check(len(r.structured_content["freshness"]) >= 1, "the freshness watermark", r.structured_content)
        check(top["ref"] in text_of(r), "the text names the ref", text_of(r))
        check("preview" not in top, "no preview unless asked", top)

        r = await shim.call("patina_query", {"query": "HttpClient", "preview": True, "limit": 3})
        check(all("preview" in h for h in r.structured_content["results"]), "previews when asked",
              r.structured_content)
        check(all(len(l) <= 161 for h in r.structured_content["results"] for l in h["preview"].splitlines()),
              "previews are truncated")

        r = await shim.call("patina_query", {"query": "parse_args", "path": "*.py"})
        check(r.structured_content["results"] and all(h["path"].endswith(".py")
              for h in r.structured_content["results"]), "path glob", r.structured_content)

        r = await shim.call("patina_query", {"query": "parse_args", "level": "file", "limit": 10})
        paths = [h["path"] for h in r.structured_content["results"]]
        check(len(paths) == len(set(paths)) and len(paths) >= 3, "level file: one result per file", paths)

        r = await shim.call("patina_query", {"query": "parse_args HttpClient", "level": "module"})
        mods = r.structured_content["results"]
        check(mods and all(h["kind"] == "module" or h["kind"] == "repo" for h in mods), "level module", mods)
        check(any(h["path"] == "src" for h in mods), "the src directory is a module hit", mods)
        check(all(h.get("matches", 0) >= 1 and h.get("best") for h in mods if h["kind"] == "module"),
              "module hits count their chunks and name the best", mods)

        r = await shim.call("patina_query", {"query": "parse_args", "level": "repo"})
        reps = r.structured_content["results"]
        check(len(reps) == 1 and reps[0]["kind"] == "repo" and "repo_root" not in reps[0]
              and r.structured_content["repos"][0]["root"] == repo, "level repo", r.structured_content)

        r = await shim.call("patina_query", {"query": "parse_args configuration", "level": "doc"})
        docs = r.structured_content["results"]
        check(docs and all(h["path"].endswith(".md") or h["kind"] == "note" for h in docs), "level doc", docs)
        print("ok patina_query (levels, glob, preview, provenance, freshness)")

        # patina_context: XML (valid, attributed, no overlapping ranges), Markdown, JSON, budget.
        r = await shim.call("patina_context", {"query": "HttpClient get post request", "budget": 1500})
        xml = r.content[0].text
        root = ET.fromstring(xml)
        check(root.tag == "context", "xml context", xml)
        sources = root.findall("source")
        check(sources and any(s.get("ref", "").startswith("src/http.rs:") for s in sources),
              "the http client is in the context", xml)
        spans = {}
        for s in sources:
            m = re.fullmatch(r"(.+):(\d+)-(\d+)", s.get("ref"))
            check(m is not None, "every source is attributed path:start-end", s.attrib)
            path, a, b = m.group(1), int(m.group(2)), int(m.group(3))
            for (x, y) in spans.get(path, []):
                check(b < x or a > y, f"no overlapping ranges of {path}", xml)
            spans.setdefault(path, []).append((a, b))
            lines = open(os.path.join(repo, path)).read().splitlines()[a - 1:b]
            if s.get("truncated") != "true":
                check((s.text or "").strip("\n") == "\n".join(lines), f"{path}:{a}-{b} is the file's text", s.text)
        sc = r.structured_content
        check(sc["used_tokens"] <= sc["budget_tokens"] == 1500, "within the budget", sc)
        check(len(sc["items"]) == len(sources), "items list what the text holds", sc)
        check(len(xml) / 4 <= 1500 + 8, "budget ≈ chars/4", len(xml))

        r = await shim.call("patina_context", {"topic": "HttpClient", "format": "markdown", "budget": 800})
        md = r.content[0].text
        check("## src/http.rs:" in md and "```rust" in md, "markdown context", md)
        r = await shim.call("patina_context", {"query": "HttpClient", "format": "json", "budget": 800})
        doc = json.loads(r.content[0].text)
        check(doc["items"] and doc["items"][0]["text"], "json context", doc)
        r = await shim.call("patina_context", {"query": "parse_args", "budget": 100})
        check(r.structured_content["used_tokens"] <= 100, "a tiny budget is honoured", r.structured_content)
        print("ok patina_context (xml, markdown, json, budget, dedupe, attribution)")

        # get_file
        text = open(os.path.join(repo, "src/args.rs")).read()
        r = await shim.call("get_file", {"path": "src/args.rs"})
        f = r.structured_content
        check(f["code"] == "\n".join(text.splitlines()), "whole file", f)
        check((f["language"], f["total_lines"], f["truncated"]) == ("rust", len(text.splitlines()), False),
              "language, total lines, not truncated", f)
        r = await shim.call("get_file", {"repo": repo, "path": "src/args.rs",
                                         "start_line": def_line, "end_line": def_line + 1})
        f = r.structured_content
        check(f["code"] == "\n".join(text.splitlines()[def_line - 1:def_line + 1]), "a line range", f)
        check(f"{def_line:>6}\tpub fn parse_args" in text_of(r), "the text numbers the lines", text_of(r))
        print("ok get_file")

        # explore_structure
        r = await shim.call("explore_structure", {})
        st = r.structured_content
        dirs = {d["path"] for d in st["dirs"]}
        check({"src", "app", "web", "native"} <= dirs, "directories", dirs)
        keys = {(k["path"], k["role"]) for k in st["key_files"]}
        check(("README.md", "readme") in keys and ("src/main.rs", "entry_point") in keys, "key files", keys)
        files = {x["path"]: x for x in st["files"]}
        check(files["src/args.rs"]["language"] == "rust" and files["src/args.rs"]["lines"] == len(text.splitlines()),
              "files with language and line counts", files.get("src/args.rs"))
        check(st["total_files"] >= 13 and st["languages"].get("python") == 2, "totals", st)
        r = await shim.call("explore_structure", {"path": "app", "glob": "*.py"})
        check({x["path"] for x in r.structured_content["files"]} == {"app/cli.py", "app/models.py"},
              "a subdirectory with a glob", r.structured_content)
        print("ok explore_structure")

        # Errors an agent can act on.
        r = await shim.call("get_file", {"repo": repo}, ok=False)
        check(r.is_error and "path" in text_of(r), "missing argument is a tool error naming it", text_of(r))
        r = await shim.call("patina_query", {"query": "x", "limit": "many"}, ok=False)
        check(r.is_error and "limit" in text_of(r), "wrong argument type is a tool error naming it", text_of(r))
        for bad in ["../../etc/passwd", "/etc/passwd", ".git/config"]:
            r = await shim.call("get_file", {"repo": repo, "path": bad}, ok=False)
            check(r.is_error and "root:" not in text_of(r), f"get_file refuses {bad}", text_of(r))
        try:
            await shim.s.call_tool("no_such_tool", {})
            check(False, "an unknown tool is a protocol error")
        except SdkError as e:
            check("no_such_tool" in str(e), "the error names the tool", e)
        print("ok errors")


async def sessions_survive_a_crash(args):
    async with Shim(args, "2025-06-18") as shim:
        r = await shim.call("patina_session_start", {"name": "storage-decisions", "goal": "pick a metadata store"})
        check(r.structured_content["session"]["name"] == "storage-decisions"
              and r.structured_content["resumed"] is False, "session started", r.structured_content)
        r = await shim.call("patina_session_note", {"text": NOTE, "tags": ["storage"]})
        note = r.structured_content["note"]
        check(note["ref"] == "session:storage-decisions#1" and note["seq"] == 1, "note reference", note)
        check("session:storage-decisions#1" in text_of(r), "the text gives the reference", text_of(r))
        r = await shim.call("patina_query", {"query": "which storage engine do we use"})
        res = r.structured_content["results"]
        hit = [h for h in res if h["ref"] == "session:storage-decisions#1"]
        check(hit and hit[0]["kind"] == "note" and hit[0]["oracles"][0]["oracle"] == "session",
              "the note surfaces in a query about storage", res)
        check("crash-safe" in text_of(r), "with its text", text_of(r))
        r = await shim.call("patina_session_end", {"summary": "sled it is"})
        check(r.structured_content["summary"]["ref"] == "session:storage-decisions#2", "summary stored",
              r.structured_content)
        r = await shim.call("patina_session_note", {"text": "late"}, ok=False)
        check(r.is_error and "ended" in text_of(r), "an ended session takes no notes", text_of(r))
        print("ok sessions: start, note, query, end")

        # Crash the daemon: no flush, no shutdown. The shim restarts one on the next call.
        pid = daemon_pid(args.home)
        check(pid and alive(pid), "a daemon runs", pid)
        os.kill(pid, signal.SIGKILL)
        deadline = time.time() + 10
        while alive(pid) and time.time() < deadline:
            time.sleep(0.02)
        check(not alive(pid), "the daemon died")
        r = await shim.call("patina_query", {"query": "storage engine", "level": "doc"})
        res = r.structured_content["results"]
        check(any(h["ref"] == "session:storage-decisions#1" for h in res),
              "after a crash and restart, the note is still found", res)
        check(daemon_pid(args.home) not in (None, pid), "a new daemon serves", daemon_pid(args.home))
        r = await shim.call("patina_context", {"query": "why did we choose sled for storage", "budget": 2000})
        check("session:storage-decisions#1" in r.content[0].text, "notes are in assembled context too",
              r.content[0].text)
    async with Shim(args, "2025-06-18") as shim:
        r = await shim.call("patina_session_start", {"name": "storage-decisions"})
        sc = r.structured_content
        check(sc["resumed"] is True and sc["session"]["notes"] == 2 and len(sc["notes"]) == 2,
              "resuming returns the notes so far", sc)
        check(sc["session"]["ended_unix_ms"] == 0, "and reopens the session", sc)
        print("ok sessions survive a daemon crash (SIGKILL) and restart")


async def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shim", required=True)
    ap.add_argument("--home", required=True)
    ap.add_argument("--repo", required=True)
    args = ap.parse_args()
    args.shim, args.home, args.repo = (os.path.abspath(p) for p in (args.shim, args.home, args.repo))
    args.repo = os.path.realpath(args.repo)
    # Each phase gets a deadline, so a hang fails with the phase's name instead of stalling CI.
    for phase in (handshakes, every_tool, sessions_survive_a_crash):
        try:
            await asyncio.wait_for(phase(args), timeout=120)
        except asyncio.TimeoutError:
            sys.exit(f"FAIL: {phase.__name__} did not finish within 120 s")
    print(f"all {checks} checks passed")


if __name__ == "__main__":
    # Last resort against a hang that asyncio cannot cancel: dump every thread's stack and exit,
    # so the failure says where it stuck.
    import faulthandler
    faulthandler.dump_traceback_later(300, exit=True)
    try:
        asyncio.run(main())
    except AssertionError as e:
        sys.exit(f"FAIL: {e}")
