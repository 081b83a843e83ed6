// VS Code for real, for tests/editors.rs: code-server (VS Code in a browser, from npm) with the
// extension packaged from editors/vscode installed, driven by headless Chromium (playwright-core).
//
//   node tests/vscode_e2e.cjs --npm DIR --vsix FILE --lsp PATINA-LSP --repo REPO --query Q
//        --expect-path REL --expect-line N --work DIR --screenshot FILE
//
// Installs the .vsix with `code-server --install-extension`, starts code-server on the repository
// with `patina.serverPath` set, opens it in Chromium and checks, printing one `ok …` line each:
// the Patina status bar item reports the index fresh; `Patina: Search` from the command palette
// lists a hit for the query at REL:N; accepting it opens REL with the cursor on line N. Any failure
// saves a screenshot and exits 1. Environment (PATINA_HOME) passes to code-server and so to
// patina-lsp.
'use strict';
const { spawn, execFileSync } = require('child_process');
const fs = require('fs');
const net = require('net');
const path = require('path');

const args = {};
for (let i = 2; i < process.argv.length; i += 2) {
  args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
}
const { chromium } = require(path.join(args.npm, 'node_modules/playwright-core'));
const codeServer = path.join(args.npm, 'node_modules/.bin/code-server');
const STEP_MS = 120000; // generous: two shared cores, a cold code-server

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function main() {
  const work = args.work;
  const userData = path.join(work, 'user-data');
  const extensions = path.join(work, 'extensions');
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  fs.writeFileSync(
    path.join(userData, 'User', 'settings.json'),
    JSON.stringify({
      'patina.serverPath': args.lsp,
      'workbench.startupEditor': 'none',
      'security.workspace.trust.enabled': false,
      'telemetry.telemetryLevel': 'off',
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'workbench.enableExperiments': false,
      'window.commandCenter': false,
    }),
  );
  const common = ['--user-data-dir', userData, '--extensions-dir', extensions];
  const installed = execFileSync(codeServer, [...common, '--install-extension', args.vsix], {
    encoding: 'utf8',
  });
  console.log(installed.trim());
  const listed = execFileSync(codeServer, [...common, '--list-extensions', '--show-versions'], {
    encoding: 'utf8',
  });
  if (!/^patina-dev\.patina@/m.test(listed)) {
    throw new Error(`the extension is not installed: ${listed}`);
  }
  console.log(`ok installed ${listed.trim()}`);

  const port = await freePort();
  const server = spawn(
    codeServer,
    [
      ...common,
      '--auth', 'none',
      '--bind-addr', `127.0.0.1:${port}`,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      args.repo,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  let serverLog = '';
  server.stdout.on('data', (d) => (serverLog += d));
  server.stderr.on('data', (d) => (serverLog += d));
  const browser = await chromium.launch({
    executablePath: process.env.PATINA_CHROMIUM || '/usr/bin/chromium',
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(STEP_MS);
  try {
    // code-server answers once it listens.
    const deadline = Date.now() + STEP_MS;
    for (;;) {
      try {
        await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(args.repo)}`);
        break;
      } catch (e) {
        if (Date.now() > deadline) throw new Error(`code-server did not answer: ${e}\n${serverLog}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    await page.locator('.monaco-workbench').waitFor();
    console.log('ok workbench');

    // The extension's status bar item: the index is fresh (its tooltip names the repository).
    const status = page.locator('.statusbar-item', { hasText: 'Patina:' });
    await status.first().waitFor();
    console.log(`ok status ${(await status.first().innerText()).trim()}`);
    await page.locator('.statusbar-item', { hasText: 'Patina: fresh' }).waitFor();
    console.log('ok status fresh');

    // Patina: Search from the command palette.
    await page.locator('.monaco-workbench').click({ position: { x: 700, y: 400 } });
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill('>Patina: Search');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Patina: Search' }).first().waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget input[placeholder*="Patina"]').waitFor();
    await page.keyboard.type(args.query);
    const where = `${args['expect-path']}:${args['expect-line']}`;
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: where });
    await row.first().waitFor();
    const rows = await page.locator('.quick-input-list .monaco-list-row').allInnerTexts();
    console.log(`ok search ${rows.length} hits, first: ${rows[0].replace(/\s+/g, ' ')}`);
    if (!rows[0].includes(where)) {
      throw new Error(`the first hit is not ${where}: ${rows.join(' | ')}`);
    }
    await page.keyboard.press('Enter');

    // The file opens with the cursor on the hit's line.
    const base = path.basename(args['expect-path']);
    await page.locator('.tab.active', { hasText: base }).waitFor();
    const line = page.locator('.statusbar-item', { hasText: `Ln ${args['expect-line']},` });
    await line.first().waitFor();
    console.log(`ok opened ${base} at ${(await line.first().innerText()).trim()}`);
  } catch (e) {
    await page.screenshot({ path: args.screenshot, fullPage: true }).catch(() => {});
    console.log(`FAILED: ${e.message}\nscreenshot: ${args.screenshot}\n--- code-server ---\n${serverLog}`);
    process.exitCode = 1;
  } finally {
    await browser.close();
    try {
      process.kill(-server.pid, 'SIGTERM');
    } catch (_) {}
  }
}

main().catch((e) => {
  console.log(`FAILED: ${e.stack || e}`);
  process.exit(1);
});
