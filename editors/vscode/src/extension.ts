// Patina for VS Code: starts `patina-lsp` (definitions, references, hovers and workspace symbols
// then come from the warm Patina daemon) and adds "Patina: Search" (a quick pick that previews
// each hit as it is selected), a results tree in the explorer, the freshness of the index in the
// status bar, and "Patina: Context" / "Patina: Files Changed Together".
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from 'vscode-languageclient/node';

/** One `patina/search` hit (see lsp/src/methods.rs). */
interface Hit {
  uri: string | null;
  range: { start: { line: number; character: number }; end: { line: number; character: number } } | null;
  path: string;
  name: string;
  kind: string;
  container: string;
  score: number;
  provenance: { oracle: string; rank: number; score: number }[];
  snippet: string;
}

interface SearchResult {
  hits: Hit[];
  notices: string[];
  freshness: { repo: string; fresh: boolean; indexing: boolean; pendingFiles: number; embedBacklog: number }[];
}

interface Status {
  repos: { name: string; fresh: boolean; indexing: boolean; pendingFiles: number; embedBacklog: number; files: number }[];
  semantic: string;
  semanticOn: boolean;
}

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration('patina');
  const serverOptions: ServerOptions = {
    command: config.get<string>('serverPath', 'patina-lsp'),
    transport: TransportKind.stdio,
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }],
    initializationOptions: { register: config.get<boolean>('register', true) },
  };
  client = new LanguageClient('patina', 'Patina', serverOptions, clientOptions);
  await client.start();

  const results = new ResultsProvider();
  context.subscriptions.push(vscode.window.registerTreeDataProvider('patinaResults', results));

  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  status.command = 'patina.searchQuickPick';
  status.show();
  context.subscriptions.push(status);
  const refresh = async () => showStatus(status);
  await refresh();
  const timer = setInterval(refresh, 15000);
  context.subscriptions.push({ dispose: () => clearInterval(timer) });
  context.subscriptions.push(vscode.workspace.onDidSaveTextDocument(refresh));

  context.subscriptions.push(
    vscode.commands.registerCommand('patina.searchQuickPick', () => searchQuickPick(results)),
    vscode.commands.registerCommand('patina.showContext', showContext),
    vscode.commands.registerCommand('patina.showRelated', showRelated),
    vscode.commands.registerCommand('patina.openHit', openHit),
  );
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}

async function search(query: string): Promise<SearchResult> {
  const limit = vscode.workspace.getConfiguration('patina').get<number>('limit', 30);
  return client!.sendRequest<SearchResult>('patina/search', { query, limit, snippetLines: 3 });
}

async function showStatus(item: vscode.StatusBarItem): Promise<void> {
  try {
    const s = await client!.sendRequest<Status>('patina/status', {});
    const stale = s.repos.filter((r) => !r.fresh);
    const indexing = s.repos.some((r) => r.indexing);
    const semanticOff = !s.semanticOn;
    item.text = indexing
      ? '$(sync~spin) Patina: indexing'
      : stale.length > 0
        ? `$(warning) Patina: ${stale.reduce((n, r) => n + Math.max(r.pendingFiles, 0), 0)} pending`
        : '$(check) Patina: fresh';
    item.tooltip = [
      ...s.repos.map((r) => `${r.name}: ${r.files} files, ${r.fresh ? 'fresh' : `${r.pendingFiles} files pending, ${r.embedBacklog} chunks to embed`}`),
      `semantic search: ${s.semantic}`,
    ].join('\n');
    item.backgroundColor = semanticOff ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  } catch (e) {
    item.text = '$(error) Patina';
    item.tooltip = String(e);
  }
}

interface HitItem extends vscode.QuickPickItem {
  hit: Hit;
}

function location(hit: Hit): vscode.Location | undefined {
  if (!hit.uri || !hit.range) {
    return undefined;
  }
  const r = hit.range;
  return new vscode.Location(
    vscode.Uri.parse(hit.uri),
    new vscode.Range(r.start.line, r.start.character, r.start.line, r.start.character),
  );
}

async function openHit(hit: Hit, preview = false): Promise<void> {
  const loc = location(hit);
  if (!loc) {
    return;
  }
  const doc = await vscode.workspace.openTextDocument(loc.uri);
  await vscode.window.showTextDocument(doc, { selection: loc.range, preview, preserveFocus: preview });
}

async function searchQuickPick(results: ResultsProvider): Promise<void> {
  const pick = vscode.window.createQuickPick<HitItem>();
  pick.placeholder = 'Search the workspace with Patina (symbols, code, docs)';
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  let timer: NodeJS.Timeout | undefined;
  let generation = 0;
  pick.onDidChangeValue((value) => {
    if (timer) {
      clearTimeout(timer);
    }
    timer = setTimeout(async () => {
      const mine = ++generation;
      if (value.trim() === '') {
        pick.items = [];
        return;
      }
      pick.busy = true;
      try {
        const res = await search(value);
        if (mine !== generation) {
          return;
        }
        pick.items = res.hits.map((hit) => ({
          label: hit.name,
          description: `${hit.path}:${(hit.range?.start.line ?? 0) + 1}  ${hit.provenance.map((p) => p.oracle).join(',')}`,
          detail: hit.snippet.split('\n')[0]?.trim(),
          alwaysShow: true,
          hit,
        }));
        results.set(value, res.hits);
      } catch (e) {
        vscode.window.showErrorMessage(`Patina: ${e}`);
      } finally {
        pick.busy = false;
      }
    }, 150);
  });
  // Preview the selected hit without leaving the picker.
  pick.onDidChangeActive((items) => {
    if (items[0]) {
      void openHit(items[0].hit, true);
    }
  });
  pick.onDidAccept(() => {
    const item = pick.selectedItems[0];
    pick.hide();
    if (item) {
      void openHit(item.hit);
    }
  });
  pick.onDidHide(() => pick.dispose());
  pick.show();
}

async function showContext(): Promise<void> {
  const query = await vscode.window.showInputBox({ prompt: 'Patina: the code relevant to…' });
  if (!query) {
    return;
  }
  const res = await client!.sendRequest<{ text: string }>('workspace/executeCommand', {
    command: 'patina.context',
    arguments: [query],
  });
  const doc = await vscode.workspace.openTextDocument({ content: res.text, language: 'markdown' });
  await vscode.window.showTextDocument(doc, { preview: true });
}

async function showRelated(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== 'file') {
    vscode.window.showWarningMessage('Patina: open a file first');
    return;
  }
  const res = await client!.sendRequest<{ path: string; files: { uri: string; path: string; support: number; confidence: number }[] }>(
    'workspace/executeCommand',
    { command: 'patina.related', arguments: [editor.document.uri.toString()] },
  );
  const chosen = await vscode.window.showQuickPick(
    res.files.map((f) => ({
      label: f.path,
      description: `${f.support} commits (${Math.round(f.confidence * 100)}%)`,
      uri: f.uri,
    })),
    { placeHolder: `Files changed together with ${res.path}` },
  );
  if (chosen) {
    await vscode.window.showTextDocument(vscode.Uri.parse(chosen.uri));
  }
}

/** The last search's hits, in the explorer. */
class ResultsProvider implements vscode.TreeDataProvider<Hit> {
  private hits: Hit[] = [];
  private query = '';
  private readonly changed = new vscode.EventEmitter<Hit | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  set(query: string, hits: Hit[]): void {
    this.query = query;
    this.hits = hits;
    this.changed.fire(undefined);
  }

  getChildren(element?: Hit): Hit[] {
    return element ? [] : this.hits;
  }

  getTreeItem(hit: Hit): vscode.TreeItem {
    const item = new vscode.TreeItem(hit.name, vscode.TreeItemCollapsibleState.None);
    item.description = `${hit.path}:${(hit.range?.start.line ?? 0) + 1}`;
    item.tooltip = `${this.query}\n${hit.kind} ${hit.name} (${hit.provenance.map((p) => `${p.oracle} #${p.rank}`).join(', ')})\n\n${hit.snippet}`;
    item.command = { command: 'patina.openHit', title: 'Open', arguments: [hit] };
    return item;
  }
}
