// The API key never leaks: every flow and error path runs with a random SENTINEL key, then the
// sentinel is searched for in everything the extension wrote or showed. Runs inside VS Code.
//
// Where the key legitimately lives: code-server keeps SecretStorage in the browser's localStorage
// (key "secrets.provider" under <root>/chromium-profile/Default/Local Storage/leveldb), sealed with
// AES-GCM by a key minted by the server (LocalStorageSecretStorageProvider). Sealed, it holds no
// plain copy of the key, so nothing is excluded from the search: the whole harness root (home,
// user-data with logs, settings and globalStorage, the browser profile with IndexedDB state and
// localStorage, tmp, extensions, the workspace) is searched as bytes.
import * as assert from 'assert';
import { randomBytes } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { admin, captureUi, closeAllEditors, emulatorBalance, harnessRoot, paidRequests, type UiCapture, waitUntil, workspaceRoot } from './support';

const HEX = randomBytes(12).toString('hex');
const SENTINEL = `gw-SENTINEL-${HEX}`;
const INVALID = `${SENTINEL}-invalid`;
const EXPIRED = `${SENTINEL}-expired`;

interface Hit {
  where: string;
  needle: string;
}

describe('The API key never leaks (sentinel key)', function () {
  this.timeout(180_000);
  let ui: UiCapture;
  const rejections: { flow: string; error: unknown }[] = [];
  const texts: { where: string; text: string }[] = [];
  const hits: Hit[] = [];
  const searched = { files: 0, bytes: 0, texts: 0 };
  let searchRan = false;

  /** Runs one flow; a rejection is kept (its message is searched), not failed on. */
  async function flow(name: string, run: () => Thenable<unknown> | Promise<unknown>): Promise<unknown> {
    try {
      return await run();
    } catch (error) {
      rejections.push({ flow: name, error });
      return undefined;
    }
  }

  before(async () => {
    await admin('POST', 'reset');
    await admin('POST', 'keys', { key: SENTINEL, like: 'unlimited' });
    await admin('POST', 'keys', { key: EXPIRED, like: 'expired' });
    const config = vscode.workspace.getConfiguration('gatewayImages');
    await config.update('confirmCostAbove', 1000, vscode.ConfigurationTarget.Global);
    await config.update('openAfterGenerate', false, vscode.ConfigurationTarget.Global);
    // Trace for every logger, the extension's "Gateway Images" channel included: the command
    // VS Code keeps for extension tests (it works only in an extension test run).
    await vscode.commands.executeCommand('_extensionTests.setLogLevel', 'trace');
    await waitUntil(() => vscode.env.logLevel === vscode.LogLevel.Trace, 5_000, 'log level trace');
    ui = captureUi();
  });

  after(async () => {
    ui?.restore();
    await vscode.commands.executeCommand('_extensionTests.setLogLevel', 'info').then(undefined, () => undefined);
    await vscode.workspace.getConfiguration('gatewayImages').update('editTransport', undefined, vscode.ConfigurationTarget.Global);
    console.log(`      searched ${searched.files} files (${(searched.bytes / 1e6).toFixed(1)} MB) and ${searched.texts} texts`);
    for (const hit of hits) console.log(`      HIT ${hit.needle.length > 12 ? 'full' : 'partial'} sentinel in ${hit.where}`);
    // Reversed, so that the harness output (the relayed workbench log) can be searched for HEX.
    console.log(`      sentinel hex reversed: ${[...HEX].reverse().join('')}`);
    console.log(`      sentinel-key hits: ${searchRan ? hits.length : 'not searched'}`);
  });

  afterEach(closeAllEditors);

  it('runs every flow and error path with the sentinel key', async () => {
    // Key: valid, invalid, expired, then valid again.
    const signedIn = await flow('set key (valid)', () => vscode.commands.executeCommand<{ email: string }>('gatewayImages.setApiKey', SENTINEL));
    assert.deepStrictEqual(signedIn, { email: 'demo@example.com' }, 'the sentinel key was not accepted');
    assert.ok(ui.sawExtensionCall, "the extension's notifications did not reach the wrappers: not the same vscode API object");
    await flow('set key (invalid)', () => vscode.commands.executeCommand('gatewayImages.setApiKey', INVALID));
    await flow('set key (expired)', () => vscode.commands.executeCommand('gatewayImages.setApiKey', EXPIRED));
    await flow('clear key', () => vscode.commands.executeCommand('gatewayImages.clearApiKey'));
    await flow('generate without key', () => vscode.commands.executeCommand('gatewayImages.generate', { model: 'sketch-mini', prompt: 'No key' }));
    await flow('set key again', () => vscode.commands.executeCommand('gatewayImages.setApiKey', SENTINEL));

    // Account, catalog, menus.
    await flow('refresh account', () => vscode.commands.executeCommand('gatewayImages.refreshAccount'));
    await flow('show account', () => vscode.commands.executeCommand('gatewayImages.showAccount'));
    const accountDoc = await flow('account document', () => vscode.workspace.openTextDocument(vscode.Uri.parse('gateway-images:/Account.md')));
    if (accountDoc) texts.push({ where: 'account document', text: (accountDoc as vscode.TextDocument).getText() });
    await flow('browse models', () => vscode.commands.executeCommand('gatewayImages.browseModels'));
    await flow('status menu', () => vscode.commands.executeCommand('gatewayImages.statusMenu'));

    // Generation: success, local refusals, gateway refusal.
    const ok = await flow('generate', () =>
      vscode.commands.executeCommand('gatewayImages.generate', { model: 'sketch-mini', prompt: 'Sentinel success', seed: 3 }),
    );
    assert.ok(ok, `the generation failed: ${String(rejections.at(-1)?.error)}`);
    await flow('validation error', () => vscode.commands.executeCommand('gatewayImages.generate', { model: 'aurora-1', prompt: 'x', size: '1024х1024' }));
    await flow('unknown model', () => vscode.commands.executeCommand('gatewayImages.generate', { model: 'provider/aurora-1', prompt: 'x' }));
    await admin('POST', 'state', { balance: 3 });
    await vscode.commands.executeCommand('gatewayImages.refreshAccount');
    await flow('cannot afford (local)', () => vscode.commands.executeCommand('gatewayImages.generate', { model: 'lumen-xl', prompt: 'Too expensive', n: 2 }));
    await admin('POST', 'state', { balance: 5000 });
    await vscode.commands.executeCommand('gatewayImages.refreshAccount');
    // The gateway refuses for the key's budget: a budget that looks short only warns, so the request
    // goes and the gateway refuses, whatever figures a refresh still in flight brings (a balance set
    // below the extension's figures raced a reconcile of the job before).
    await admin('POST', 'state', { keyBudgets: { [SENTINEL]: 0.5 } });
    await flow('insufficient funds (gateway)', () =>
      vscode.commands.executeCommand('gatewayImages.generate', { model: 'sketch-mini', prompt: 'Gateway refuses' }),
    );
    // A budget that grew lifts the gateway's refusal.
    await admin('POST', 'state', { keyBudgets: { [SENTINEL]: 100_000 } });
    await vscode.commands.executeCommand('gatewayImages.refreshAccount');

    // Every server fault.
    for (const fault of ['html-500', 'html-502', 'rate-limit', 'drop-mid-body', 'kill', 'invalid-base64']) {
      await admin('POST', 'faults', { fault });
      await flow(`fault ${fault}`, () => vscode.commands.executeCommand('gatewayImages.generate', { model: 'sketch-mini', prompt: `Fault ${fault}` }));
      await admin('DELETE', 'faults');
    }

    // Editing by both transports.
    const sample = path.join(workspaceRoot(), 'images', 'sample.png');
    for (const transport of ['input_references', 'multipart']) {
      await vscode.workspace.getConfiguration('gatewayImages').update('editTransport', transport, vscode.ConfigurationTarget.Global);
      const edited = await flow(`edit (${transport})`, () =>
        vscode.commands.executeCommand('gatewayImages.editImage', { images: [vscode.Uri.file(sample)], model: 'aurora-1', prompt: 'Sentinel edit' }),
      );
      assert.ok(edited, `edit by ${transport} failed: ${String(rejections.at(-1)?.error)}`);
    }

    // The studio: its HTML, what the host posts, what the page posts.
    await flow('open studio', () => vscode.commands.executeCommand('gatewayImages.openStudio'));
    await waitUntil(() => ui.panels.length > 0, 10_000, 'the studio panel');
    const panel = ui.panels[0]!;
    const fromPage: unknown[] = [];
    const sub = panel.webview.onDidReceiveMessage((m) => fromPage.push(m));
    await waitUntil(() => ui.records.some((r) => r.kind === 'webview-message' && r.text.includes('"account"')), 15_000, 'the studio account message');
    // The page is live once it asked for an evaluation of its form (the host's answer is recorded).
    await waitUntil(() => ui.records.some((r) => r.kind === 'webview-message' && r.text.includes('"type":"evaluation"')), 15_000, 'the studio form evaluated');
    texts.push({ where: 'studio HTML', text: panel.webview.html });
    sub.dispose();
    for (const m of fromPage) texts.push({ where: 'studio page -> host message', text: JSON.stringify(m) });
    panel.dispose();

    // The flows really ran: the paid ones reached the gateway.
    assert.ok((await paidRequests()).length >= 9, 'too few paid requests reached the emulator');
    const kinds = rejections.map((r) => `${r.flow}: ${(r.error as { kind?: string }).kind}`);
    for (const expected of [
      'set key (invalid): authentication',
      'set key (expired): authentication',
      'validation error: validation',
      'cannot afford (local): cannot-afford',
      'insufficient funds (gateway): insufficient-funds',
    ]) {
      assert.ok(kinds.includes(expected), `missing ${expected}; got ${kinds.join(', ')}`);
    }
    for (const fault of ['html-500', 'html-502', 'rate-limit', 'drop-mid-body', 'kill', 'invalid-base64']) {
      assert.ok(
        rejections.some((r) => r.flow === `fault ${fault}`),
        `fault ${fault} did not fail the generation`,
      );
    }
    await waitUntil(
      async () => (await vscode.commands.executeCommand<{ balance?: number }>('gatewayImages.refreshAccount'))?.balance === (await emulatorBalance()),
      5_000,
      'account reconciled',
    );
  });

  it('finds the sentinel nowhere: log, errors, notifications, studio, settings, state, workspace', async () => {
    const root = harnessRoot();
    const userData = path.join(root, 'user-data');

    // The extension's log file exists and has been flushed (it has the last request), at trace level.
    const logs = listFiles(path.join(userData, 'logs')).filter((f) => /Gateway Images\.log$/.test(f));
    assert.ok(logs.length > 0, `no "Gateway Images" log file under ${userData}/logs`);
    await waitUntil(() => logs.some((f) => fs.readFileSync(f, 'utf8').includes('/v1/images/edits 200')), 15_000, 'the extension log flushed');
    console.log(`      extension log: ${path.relative(root, logs[0]!)} (${fs.statSync(logs[0]!).size} bytes)`);

    const needles = [HEX, HEX.slice(0, 8), HEX.slice(-8)];
    const textNeedles = (text: string) => needles.filter((n) => text.includes(n));

    // The outcome-unknown notices come after their balance check (showError.ts): wait for them, then read.
    await waitUntil(
      () => ui.records.some((r) => r.kind === 'warning' && /may have been charged/.test(r.text)),
      15_000,
      'the outcome-unknown notification of a charged broken request',
    );
    // Texts shown or thrown.
    for (const r of ui.records) texts.push({ where: `ui ${r.kind}`, text: [r.text, ...r.items].join('\n') });
    for (const { flow, error } of rejections) {
      const e = error as Error;
      texts.push({ where: `rejection of ${flow}`, text: [String(e), e?.message, e?.stack, safeJson(e)].join('\n') });
    }
    assert.ok(
      ui.records.some((r) => r.kind === 'webview-message'),
      'no studio message was recorded',
    );
    for (const { where, text } of texts) for (const needle of textNeedles(text)) hits.push({ where, needle });
    searched.texts = texts.length;

    // Every file of the harness root, as bytes (UTF-8/Latin-1 and UTF-16LE); the workspace too
    // when it lives elsewhere.
    const roots = [root];
    if (!workspaceRoot().startsWith(root + path.sep)) roots.push(workspaceRoot());
    const byteNeedles = [Buffer.from(HEX, 'latin1'), Buffer.from(HEX, 'utf16le')];
    const partial = [HEX.slice(0, 8), HEX.slice(-8)].map((s) => Buffer.from(s, 'latin1'));
    for (const dir of roots) {
      for (const file of listFiles(dir)) {
        let bytes: Buffer;
        try {
          bytes = fs.readFileSync(file);
        } catch {
          continue; // vanished (a lock or a journal) or unreadable
        }
        searched.files += 1;
        searched.bytes += bytes.length;
        for (const needle of byteNeedles) if (bytes.includes(needle)) hits.push({ where: path.relative(root, file), needle: HEX });
        // Partial needles only in text-like files (logs, settings, workspace): binary stores would give chance matches.
        if (/\.(log|json|txt|md)$/i.test(file) || file.startsWith(workspaceRoot())) {
          for (const needle of partial) if (bytes.includes(needle)) hits.push({ where: path.relative(root, file), needle: needle.toString() });
        }
      }
    }
    searchRan = true;

    // Where the secret is kept: sealed localStorage entry (informative: the browser flushes lazily).
    const localStorageDir = path.join(root, 'chromium-profile', 'Default', 'Local Storage');
    const holdsSecrets = () => listFiles(localStorageDir).some((f) => readOrEmpty(f).includes(Buffer.from('secrets.provider', 'latin1')));
    const sealed = await waitUntil(holdsSecrets, 5_000, 'the secret store on disk').then(
      () => true,
      () => false,
    );
    console.log(
      `      secret store: localStorage "secrets.provider" (AES-GCM sealed) ${sealed ? 'on disk' : 'not flushed to disk yet'} under ${path.relative(root, localStorageDir)}`,
    );
    if (sealed) {
      // Searched again now that it is on disk: still no plain copy of the key in it.
      for (const file of listFiles(localStorageDir))
        if (readOrEmpty(file).includes(Buffer.from(HEX, 'latin1'))) hits.push({ where: path.relative(root, file), needle: HEX });
    }
    for (const settings of ['User', 'Machine']) {
      assert.ok(fs.existsSync(path.join(userData, settings, 'settings.json')), `${settings} settings.json was searched`);
    }

    assert.strictEqual(hits.length, 0, `the sentinel key leaked: ${hits.map((h) => h.where).join('; ')}`);
  });
});

function listFiles(dir: string): string[] {
  const out: string[] = [];
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(full));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

function readOrEmpty(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch {
    return Buffer.alloc(0);
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, Object.getOwnPropertyNames(value ?? {}));
  } catch {
    return '';
  }
}
