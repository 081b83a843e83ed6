"""Drive `patina-lsp` with a real LSP client library (pygls 2 / lsprotocol, pinned by .ci/run into
target/pydeps), the way an editor does: initialize (the workspace folder, a git repository not yet
registered, is registered and its indexing reported as $/progress), window/showMessage when semantic
search is off, workspace/symbol, definition, references, hover, an unsaved edit (didChange) found by
the next search before it is saved, a save (didSave) read from disk at once, patina/search with
ranges and provenance, executeCommand, a malformed frame and an unknown method answered with errors
while the server keeps serving, shutdown and exit.

Usage: lsp_protocol.py --lsp PATH --repo PATH   (PATINA_HOME etc. come from the environment)
Prints "N checks passed" and exits 0, or fails with an AssertionError.
"""

import argparse
import asyncio
import pathlib
import re

from lsprotocol import types as t
from pygls.exceptions import JsonRpcMethodNotFound
from pygls.lsp.client import LanguageClient

CHECKS = 0


def check(cond, what):
    """A check that cannot vanish: raised explicitly, not with `assert` (gone under `python3 -O`)."""
    global CHECKS
    if not cond:
        raise AssertionError(what)
    CHECKS += 1


def plain(x):
    """Answers of custom methods arrive as pygls' named tuples: back to dicts and lists."""
    if hasattr(x, "_asdict"):
        return {k: plain(v) for k, v in x._asdict().items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    return x


def uri_of(path: pathlib.Path) -> str:
    return path.resolve().as_uri()


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lsp", required=True)
    ap.add_argument("--repo", required=True)
    args = ap.parse_args()
    repo = pathlib.Path(args.repo).resolve()

    client = LanguageClient("patina-lsp-protocol-test", "1")
    messages: list = []
    progress: list = []
    raw: list = []
    ended = asyncio.Event()

    @client.feature(t.WINDOW_SHOW_MESSAGE)
    def show_message(params: t.ShowMessageParams) -> None:
        messages.append(params)

    @client.feature(t.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def create_progress(params: t.WorkDoneProgressCreateParams) -> None:
        return None

    @client.feature(t.PROGRESS)
    def on_progress(params: t.ProgressParams) -> None:
        progress.append(params.value)
        kind = params.value.get("kind") if isinstance(params.value, dict) else getattr(params.value, "kind", None)
        if kind == "end":
            ended.set()

    # Every message the client reads, to see the error answers to frames that had no id.
    handle = client.protocol.handle_message

    def record(message):
        raw.append(message)
        return handle(message)

    client.protocol.handle_message = record

    await client.start_io(args.lsp)
    result = await client.initialize_async(
        t.InitializeParams(
            capabilities=t.ClientCapabilities(window=t.WindowClientCapabilities(work_done_progress=True)),
            workspace_folders=[t.WorkspaceFolder(uri=uri_of(repo), name=repo.name)],
        )
    )
    caps = result.capabilities
    check(caps.workspace_symbol_provider, "workspace/symbol is offered")
    check(caps.definition_provider and caps.references_provider and caps.hover_provider, "navigation is offered")
    check(
        set(caps.execute_command_provider.commands) == {"patina.search", "patina.context", "patina.related"},
        f"the patina commands are offered: {caps.execute_command_provider}",
    )
    check(result.server_info.name == "patina-lsp", "server info")
    client.initialized(t.InitializedParams())

    # The workspace folder is registered and indexed, reported as $/progress begin ... end.
    await asyncio.wait_for(ended.wait(), 120)
    kinds = [p.get("kind") if isinstance(p, dict) else p.kind for p in progress]
    check(kinds[0] == "begin" and kinds[-1] == "end", f"indexing progress begins and ends: {kinds}")
    # The daemon of this test runs without the model: the user is told, with the fix.
    for _ in range(100):
        if messages:
            break
        await asyncio.sleep(0.05)
    check(
        any("patina model install" in m.message and m.type == t.MessageType.Warning for m in messages),
        f"semantic search off is shown with its fix: {messages}",
    )

    # workspace/symbol: the definition first, with its container and a range on its lines.
    symbols = await client.workspace_symbol_async(t.WorkspaceSymbolParams(query="parse_args"))
    check(symbols, "workspace/symbol finds parse_args")
    first = symbols[0]
    check(first.name == "parse_args" and first.kind == t.SymbolKind.Function, f"the function first: {first}")
    check(first.location.uri == uri_of(repo / "src/args.rs"), f"in src/args.rs: {first.location.uri}")
    check(first.location.range.start.line == 11, f"on line 12 (0-based 11): {first.location.range}")
    check(first.container_name, "with a container name")
    methods = await client.workspace_symbol_async(t.WorkspaceSymbolParams(query="HttpClient get"))
    check(
        any(s.name == "get" and s.container_name == "HttpClient" for s in methods),
        f"a method's container is its type: {[(s.name, s.container_name) for s in methods]}",
    )

    # Definition and references from a call site in src/main.rs (`args::parse_args(&argv)`).
    main_rs = repo / "src/main.rs"
    main_text = main_rs.read_text()
    call_line = next(i for i, l in enumerate(main_text.splitlines()) if "let opts = args::parse_args" in l)
    col = main_text.splitlines()[call_line].index("parse_args") + 3
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=uri_of(main_rs), language_id="rust", version=1, text=main_text)
        )
    )
    pos = t.TextDocumentPositionParams(
        text_document=t.TextDocumentIdentifier(uri=uri_of(main_rs)),
        position=t.Position(line=call_line, character=col),
    )
    defs = await client.text_document_definition_async(
        t.DefinitionParams(text_document=pos.text_document, position=pos.position)
    )
    check(defs and defs[0].uri == uri_of(repo / "src/args.rs"), f"definition in src/args.rs: {defs}")
    check(defs[0].range.start.line == 11, f"definition on line 12: {defs[0].range}")
    refs = await client.text_document_references_async(
        t.ReferenceParams(
            context=t.ReferenceContext(include_declaration=False),
            text_document=pos.text_document,
            position=pos.position,
        )
    )
    ref_sites = {(r.uri, r.range.start.line) for r in refs}
    check((uri_of(main_rs), call_line) in ref_sites, f"the call site is a reference: {ref_sites}")
    check(
        sum(1 for u, _ in ref_sites if u == uri_of(main_rs)) >= 3,
        f"all three calls in src/main.rs: {ref_sites}",
    )

    # Hover: signature and doc comment of the definition.
    hover = await client.text_document_hover_async(t.HoverParams(text_document=pos.text_document, position=pos.position))
    value = hover.contents.value
    check("pub fn parse_args(args: &[String]) -> Options" in value, f"hover shows the signature: {value}")
    check("Turn `--key=value` pairs and `-v` into [`Options`]." in value, f"and the doc comment: {value}")
    check(
        re.search(r"last changed \d{4}-\d{2}-\d{2} by .+ in [0-9a-f]{10}: ", value) is not None,
        f"and the commit that last changed the definition's lines (blame): {value}",
    )

    # An unsaved edit is found by the next search, before it is saved.
    args_rs = repo / "src/args.rs"
    args_uri = uri_of(args_rs)
    before = args_rs.read_text()
    client.text_document_did_open(t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=args_uri, language_id="rust", version=1, text=before)
        ))
    gone = await client.workspace_symbol_async(t.WorkspaceSymbolParams(query="quokka_unsaved_helper"))
    check(not any(s.name == "quokka_unsaved_helper" for s in gone), "not there before the edit")
    edited = before + "\n/// Added in the editor, not saved.\npub fn quokka_unsaved_helper() -> u32 {\n    7\n}\n"
    client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=args_uri, version=2),
            content_changes=[t.TextDocumentContentChangeWholeDocument(text=edited)],
        )
    )
    found = await client.workspace_symbol_async(t.WorkspaceSymbolParams(query="quokka_unsaved_helper"))
    hit = next((s for s in found if s.name == "quokka_unsaved_helper"), None)
    check(hit is not None and hit.location.uri == args_uri, f"the unsaved function is found: {found}")
    check(hit.location.range.start.line == before.count("\n") + 2, f"on its buffer line: {hit.location.range}")
    check(args_rs.read_text() == before, "the file on disk is untouched")

    # Saving another text: the disk is read at once (no watcher delay), the overlay is gone.
    saved = before + "\npub fn quokka_saved_helper() {}\n"
    args_rs.write_text(saved)
    client.text_document_did_save(t.DidSaveTextDocumentParams(text_document=t.TextDocumentIdentifier(uri=args_uri)))
    after = await client.workspace_symbol_async(t.WorkspaceSymbolParams(query="quokka_saved_helper quokka_unsaved_helper"))
    names = {s.name for s in after}
    check("quokka_saved_helper" in names, f"the saved function is found: {names}")
    check("quokka_unsaved_helper" not in names, f"the discarded buffer text is not: {names}")

    # patina/search: hits with LSP ranges and the oracles that found them.
    res = await client.protocol.send_request_async("patina/search", {"query": "parse_args", "limit": 5})
    res = plain(res)
    hits = res["hits"]
    check(hits and hits[0]["uri"] == uri_of(repo / "src/args.rs"), f"patina/search top hit: {hits[:1]}")
    check(hits[0]["range"]["start"]["line"] == 11, f"with an LSP range: {hits[0]['range']}")
    oracles = {p["oracle"] for p in hits[0]["provenance"]}
    check({"lexical", "symbol"} <= oracles, f"and its provenance: {oracles}")
    check(res["freshness"] and "fresh" in res["freshness"][0], f"freshness: {res['freshness']}")

    # patina/status: the workspace's repository and how fresh it is.
    st = plain(await client.protocol.send_request_async("patina/status", {}))
    check(
        [r["root"] for r in st["repos"]] == [str(repo)] and st["repos"][0]["files"] > 0,
        f"patina/status reports the workspace repository: {st}",
    )
    # The test daemon runs without the model: the flag says so, beside the words for a person.
    check(st["semanticOn"] is False and st["semantic"], f"and semantic search: {st}")

    # executeCommand.
    cmd = await client.workspace_execute_command_async(t.ExecuteCommandParams(command="patina.search", arguments=["HttpClient"]))
    cmd = plain(cmd)
    check(any(h["path"] == "src/http.rs" for h in cmd["hits"]), "patina.search runs a search")
    ctx = await client.workspace_execute_command_async(t.ExecuteCommandParams(command="patina.context", arguments=["parse_args", 800]))
    ctx = plain(ctx)
    check("parse_args" in ctx["text"] and ctx["items"], "patina.context renders context")
    rel = await client.workspace_execute_command_async(t.ExecuteCommandParams(command="patina.related", arguments=[args_uri]))
    rel = plain(rel)
    check(rel["path"] == "src/args.rs" and "files" in rel, f"patina.related answers for the file: {rel}")

    # Bad input: an unknown method, then a malformed frame; the server keeps serving.
    try:
        await client.protocol.send_request_async("patina/noSuchMethod", {})
        check(False, "an unknown method must fail")
    except JsonRpcMethodNotFound as e:
        check(True, f"unknown method: {e}")
    writer = client._server.stdin
    writer.write(b"Content-Length: 17\r\n\r\n{not json at all}")
    writer.write(b"Content-Length: nope\r\n\r\n")
    await writer.drain()
    again = await client.workspace_symbol_async(t.WorkspaceSymbolParams(query="HttpClient"))
    check(again, "the server still serves after malformed frames")
    errors = [m for m in raw if getattr(m, "id", "x") is None and getattr(m, "error", None) is not None]
    codes = [e.error.code for e in errors]
    check(codes.count(-32700) == 2, f"each malformed frame gets a parse error: {codes}")

    await client.shutdown_async(None)
    client.exit(None)
    server = client._server
    code = await asyncio.wait_for(server.wait(), 10)
    check(code == 0, f"exit after shutdown exits 0: {code}")
    await client.stop()
    print(f"{CHECKS} checks passed")


if __name__ == "__main__":
    asyncio.run(main())
