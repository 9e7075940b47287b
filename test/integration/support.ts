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
