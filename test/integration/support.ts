// Helpers for suites that run inside VS Code against the emulator the harness started.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { GatewayImagesApi } from '../../src/extension';

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string; publisher: string };
export const EXTENSION_ID = `${manifest.publisher}.${manifest.name}`;

export interface EmulatorInfo {
  url: string;
  keys: Record<'unlimited' | 'budget' | 'expiringSoon' | 'expired' | 'revoked' | 'lowBudget', string>;
}

export function emulator(): EmulatorInfo {
  const url = process.env.GATEWAY_IMAGES_TEST_EMULATOR_URL;
  const keys = process.env.GATEWAY_IMAGES_TEST_KEYS;
  assert.ok(url && keys, 'the harness did not pass the emulator (GATEWAY_IMAGES_TEST_EMULATOR_URL)');
  return { url, keys: JSON.parse(keys) };
}

export async function admin<T = unknown>(method: string, route: string, body?: unknown): Promise<T> {
  const response = await fetch(`${emulator().url}/__emulator/${route}`, {
    method,
    headers: body === undefined ? undefined : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.ok(response.ok, `emulator admin ${method} ${route} answered ${response.status}`);
  return (await response.json()) as T;
}

export interface RecordedRequest {
  method: string;
  path: string;
  status: number;
  paid: boolean;
  reservedRub: number;
  chargedRub: number;
}

export async function paidRequests(): Promise<RecordedRequest[]> {
  const log = await admin<{ requests: RecordedRequest[] }>('GET', 'requests');
  return log.requests.filter((r) => r.paid);
}

export async function api(): Promise<GatewayImagesApi> {
  const extension = vscode.extensions.getExtension<GatewayImagesApi>(EXTENSION_ID);
  assert.ok(extension, `${EXTENSION_ID} is not loaded`);
  return extension.activate();
}

/** Points the extension at the emulator with the given key (through the real commands). */
export async function useKey(key: string): Promise<void> {
  await vscode.workspace.getConfiguration('gatewayImages').update('baseUrl', emulator().url, vscode.ConfigurationTarget.Global);
  await vscode.commands.executeCommand('gatewayImages.setApiKey', key);
  await (await api()).refreshAccount();
}

/** The usual start of a suite: a fresh emulator, no cost dialog, no editors opened, and a key in use. */
export async function prepareSuite(key: keyof EmulatorInfo['keys'] = 'unlimited'): Promise<void> {
  await admin('POST', 'reset');
  const config = vscode.workspace.getConfiguration('gatewayImages');
  await config.update('confirmCostAbove', 1000, vscode.ConfigurationTarget.Global);
  await config.update('openAfterGenerate', false, vscode.ConfigurationTarget.Global);
  await useKey(emulator().keys[key]);
}

export function workspaceRoot(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'the test workspace has no folder');
  return folder.uri.fsPath;
}

/** Rejection of a promise, for assertions on typed errors. */
export async function rejectionOf(promise: Thenable<unknown>): Promise<Error & { kind?: string; reason?: string; field?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { kind?: string };
  }
  assert.fail('expected a rejection');
}

/** Emulator images decoded from a direct call with the same seed (the emulator is deterministic). */
export async function emulatorImages(key: string, request: Record<string, unknown>): Promise<Buffer[]> {
  const response = await fetch(`${emulator().url}/v1/images/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(request),
  });
  assert.strictEqual(response.status, 200);
  const body = (await response.json()) as { data: { b64_json: string }[] };
  return body.data.map((d) => Buffer.from(d.b64_json, 'base64'));
}

export async function closeAllEditors(): Promise<void> {
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
}

/** Polls until `condition` holds; returns how long it took. */
export async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<number> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) assert.fail(`${what} not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - started;
}

/** The tabs of the Image Studio webview panel. */
export function studioTabs(): vscode.Tab[] {
  return vscode.window.tabGroups.all
    .flatMap((group) => group.tabs)
    .filter((tab) => tab.input instanceof vscode.TabInputWebview && tab.label === 'Image Studio');
}

/** The emulator's account balance, read through its admin API. */
export async function emulatorBalance(): Promise<number> {
  return (await admin<{ balance: number }>('GET', 'state')).balance;
}

export interface UiRecord {
  kind: 'info' | 'warning' | 'error' | 'progress' | 'progress-report' | 'quick-pick' | 'webview-html' | 'webview-message';
  text: string;
  items: string[];
}

export interface UiCapture {
  readonly records: UiRecord[];
  /** Webview panels the extension created while capturing. */
  readonly panels: vscode.WebviewPanel[];
  /** Whether the extension's calls reached the wrappers (the same vscode API object). */
  readonly sawExtensionCall: boolean;
  restore(): void;
}

/**
 * Wraps vscode.window's notification, progress, quick pick and webview functions to record what
 * the extension shows. The test and the extension under development get the same vscode API
 * object (the extension host hands one object per extension, found by file path, and the tests
 * live inside the extension's folder), so these wrappers see the extension's own calls.
 * Quick picks resolve to undefined at once (nothing is picked); notifications are still shown.
 */
export function captureUi(): UiCapture {
  const records: UiRecord[] = [];
  const panels: vscode.WebviewPanel[] = [];
  const window = vscode.window as unknown as Record<string, unknown>;
  const originals = new Map<string, unknown>();
  const state = { saw: false };
  const itemText = (item: unknown) => (typeof item === 'string' ? item : JSON.stringify(item));
  const replace = (name: string, make: (original: (...args: unknown[]) => unknown) => (...args: unknown[]) => unknown) => {
    const original = window[name] as (...args: unknown[]) => unknown;
    originals.set(name, original);
    window[name] = make(original.bind(vscode.window));
  };
  for (const [name, kind] of [
    ['showInformationMessage', 'info'],
    ['showWarningMessage', 'warning'],
    ['showErrorMessage', 'error'],
  ] as const) {
    replace(name, (original) => (...args) => {
      state.saw = true;
      const [text, ...rest] = args;
      records.push({ kind, text: String(text), items: rest.map(itemText) });
      return original(...args);
    });
  }
  replace('withProgress', (original) => (options, task) => {
    state.saw = true;
    records.push({ kind: 'progress', text: String((options as { title?: string }).title ?? ''), items: [] });
    const wrapped = (progress: vscode.Progress<{ message?: string }>, token: vscode.CancellationToken) =>
      (task as (p: vscode.Progress<{ message?: string }>, t: vscode.CancellationToken) => unknown)(
        {
          report: (value) => {
            records.push({ kind: 'progress-report', text: String(value.message ?? ''), items: [] });
            progress.report(value);
          },
        },
        token,
      );
    return original(options, wrapped);
  });
  replace('showQuickPick', () => async (items) => {
    state.saw = true;
    const resolved = (await items) as unknown[];
    records.push({ kind: 'quick-pick', text: '', items: resolved.map(itemText) });
    return undefined;
  });
  replace('createWebviewPanel', (original) => (...args) => {
    state.saw = true;
    const panel = original(...args) as vscode.WebviewPanel;
    panels.push(panel);
    const webview = panel.webview as unknown as { postMessage: (m: unknown) => Thenable<boolean> };
    const post = webview.postMessage.bind(panel.webview);
    webview.postMessage = (message: unknown) => {
      records.push({ kind: 'webview-message', text: JSON.stringify(message), items: [] });
      return post(message);
    };
    return panel;
  });
  return {
    records,
    panels,
    get sawExtensionCall() {
      return state.saw;
    },
    restore() {
      for (const [name, original] of originals) window[name] = original;
    },
  };
}

/**
 * The harness's temp root (home, user-data, chromium-profile, workspace, tmp): HOME is
 * <root>/home in the extension host (test/harness/launch.ts).
 */
export function harnessRoot(): string {
  const home = process.env.HOME ?? '';
  const root = path.dirname(home);
  assert.ok(fs.existsSync(path.join(root, 'user-data', 'User', 'settings.json')), `no harness user-data dir next to HOME (${home})`);
  return root;
}

/** What the extension wrote to its "Gateway Images" log so far (the files under the harness's logs folder). */
export function extensionLogText(): string {
  const logs = path.join(harnessRoot(), 'user-data', 'logs');
  const files = fs.existsSync(logs) ? (fs.readdirSync(logs, { recursive: true }) as string[]) : [];
  return files
    .filter((file) => file.endsWith('Gateway Images.log'))
    .map((file) => fs.readFileSync(path.join(logs, file), 'utf8'))
    .join('\n');
}

/** The user's own spending limits, and the values a hostile workspace sets for the same settings. */
const USER_LIMITS = { confirmCostAbove: 0, 'mcp.maxCostPerCall': 7, 'mcp.maxCostPerSession': 70 };
export const WORKSPACE_LIMITS = {
  'gatewayImages.confirmCostAbove': 100_000,
  'gatewayImages.mcp.maxCostPerCall': 100_000,
  'gatewayImages.mcp.maxCostPerSession': 100_000,
};

/**
 * With WORKSPACE_LIMITS in the workspace settings (already read by VS Code), the user's limits
 * hold: a generation asks first (the user's confirmCostAbove 0; the dialog is answered "no", so
 * nothing is sent), the MCP server gets the user's caps, and the log names every ignored value.
 */
export async function assertUserSpendingLimitsHold(): Promise<void> {
  const config = vscode.workspace.getConfiguration('gatewayImages');
  for (const [name, value] of Object.entries(USER_LIMITS)) await config.update(name, value, vscode.ConfigurationTarget.Global);
  const window = vscode.window as unknown as Record<string, unknown>;
  const showWarningMessage = window.showWarningMessage;
  const asked: string[] = [];
  window.showWarningMessage = (message: unknown) => {
    asked.push(String(message));
    return Promise.resolve(undefined);
  };
  try {
    const paidBefore = (await paidRequests()).length;
    const error = await rejectionOf(vscode.commands.executeCommand('gatewayImages.generate', { model: 'sketch-mini', prompt: 'Workspace limits' }));
    assert.strictEqual(error.kind, 'cancelled', `${error.name}: ${error.message}`);
    assert.strictEqual(asked.length, 1, 'the cost was not confirmed first: the workspace turned confirmation off');
    assert.strictEqual((await paidRequests()).length, paidBefore, 'a paid request was sent');

    const [definition] = await (await api()).mcp.definitions();
    assert.ok(definition, 'no MCP server definition');
    assert.strictEqual(definition.env.GATEWAY_IMAGES_MAX_COST_PER_CALL, '7');
    assert.strictEqual(definition.env.GATEWAY_IMAGES_MAX_COST_PER_SESSION, '70');

    for (const name of Object.keys(WORKSPACE_LIMITS)) {
      await waitUntil(() => new RegExp(`${name.replace(/\./g, '\\.')}.*ignored`).test(extensionLogText()), 10_000, `the log says ${name} is ignored`);
    }
  } finally {
    window.showWarningMessage = showWarningMessage;
    await config.update('confirmCostAbove', 1000, vscode.ConfigurationTarget.Global);
    await config.update('mcp.maxCostPerCall', undefined, vscode.ConfigurationTarget.Global);
    await config.update('mcp.maxCostPerSession', undefined, vscode.ConfigurationTarget.Global);
  }
}

/** Whether `candidate` is `folder` or inside it. */
export function isInsideFolder(folder: string, candidate: string): boolean {
  const relative = path.relative(folder, candidate);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
