// Typed access to the extension's settings, aware of Workspace Trust and of what only the user may set.
import * as vscode from 'vscode';
import { type AlertSettings, cleanThresholds } from '../core/money/alerts';
import type { CapLimits } from '../core/money/spendingCap';
import type { EditTransport } from '../jobs/jobTypes';

export const SECTION = 'gatewayImages';

/**
 * Settings that guard the user's money (scope `application` in package.json): what a confirmation,
 * a warning (the money alerts too), a request's deadline or the agents' caps allow; and whether the user's text goes to a
 * language model provider. A cloned repository must not change them, so only the user's own value
 * counts, the same in every window (see docs/configuration.md).
 */
export const USER_ONLY_SETTINGS = [
  'confirmCostAbove',
  'lowBalanceWarning',
  'requestTimeoutSeconds',
  'mcp.maxCostPerCall',
  'mcp.maxCostPerSession',
  'writePromptWithLanguageModel',
  'alerts.budgetThresholds',
  'alerts.runwayDays',
  'alerts.dailySpend',
] as const;
export type UserOnlySetting = (typeof USER_ONLY_SETTINGS)[number];
/** The user-only settings that are amounts or durations (writePromptWithLanguageModel is read by commands/images/writePrompt.ts). */
type UserOnlyNumber = Exclude<UserOnlySetting, 'writePromptWithLanguageModel' | 'alerts.budgetThresholds'>;

/**
 * A setting only the user may set: the value in the user's settings, else the default. A
 * workspace's value is never used, whatever VS Code does with it; the log says when a workspace
 * sets one (ignoredSettings.ts).
 */
export function readUserSetting(name: UserOnlyNumber): number {
  const inspected = vscode.workspace.getConfiguration(SECTION).inspect<unknown>(name);
  const value = inspected?.globalValue;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : (inspected?.defaultValue as number);
}

/** The spending caps of agents (the MCP server, the chat tool): only the user's values. */
export function readAgentCaps(): CapLimits {
  return { maxCostPerCall: readUserSetting('mcp.maxCostPerCall'), maxCostPerSession: readUserSetting('mcp.maxCostPerSession') };
}

/** The money alerts (core/money/alerts.ts): only the user's values. */
export function readAlertSettings(): AlertSettings {
  const inspected = vscode.workspace.getConfiguration(SECTION).inspect<unknown>('alerts.budgetThresholds');
  const value = inspected?.globalValue;
  const thresholds = Array.isArray(value) ? value : Array.isArray(inspected?.defaultValue) ? inspected.defaultValue : [];
  return {
    budgetThresholds: cleanThresholds(thresholds as unknown[]),
    runwayDays: readUserSetting('alerts.runwayDays'),
    dailySpend: readUserSetting('alerts.dailySpend'),
  };
}

export interface ExtensionSettings {
  baseUrl: string;
  confirmCostAbove: number;
  lowBalanceWarning: number;
  balanceRefreshMinutes: number;
  requestTimeoutSeconds: number;
  openAfterGenerate: boolean;
  editTransport: EditTransport;
  /** Whether saved PNGs carry their request in an iTXt chunk. */
  embedProvenance: boolean;
  /** Paid requests a batch or a comparison sends at once. */
  batchConcurrency: number;
}

/** What readSettings() read, while cacheSettings() watches for a change (undefined: read again). */
let cached: ExtensionSettings | undefined;
let watching = false;

/**
 * Lets readSettings() keep what it read until the settings change: VS Code's inspect() is slow, and a
 * prompt file reads the settings several times a line. Registered before any other listener of the
 * extension (VS Code calls them in that order), so none of them reads a value from before the change.
 */
export function cacheSettings(): vscode.Disposable {
  watching = true;
  const forget = () => (cached = undefined);
  const listeners = [
    vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration(SECTION) && forget()),
    // Trust changes which workspace values count (restricted settings).
    vscode.workspace.onDidGrantWorkspaceTrust(forget),
  ];
  return {
    dispose: () => {
      for (const listener of listeners) listener.dispose();
      watching = false;
      forget();
    },
  };
}

export function readSettings(): ExtensionSettings {
  if (!cached) {
    const read = readSettingsNow();
    if (!watching) return read;
    cached = read;
  }
  // A copy: a caller that changes its object does not change the next caller's.
  return { ...cached };
}

function readSettingsNow(): ExtensionSettings {
  const config = vscode.workspace.getConfiguration(SECTION);
  return {
    // Machine-scoped: VS Code itself never takes it from a workspace.
    baseUrl: config.get<string>('baseUrl', '').trim(),
    confirmCostAbove: readUserSetting('confirmCostAbove'),
    lowBalanceWarning: readUserSetting('lowBalanceWarning'),
    balanceRefreshMinutes: config.get<number>('balanceRefreshMinutes', 5),
    requestTimeoutSeconds: readUserSetting('requestTimeoutSeconds'),
    openAfterGenerate: config.get<boolean>('openAfterGenerate', true),
    editTransport: config.get<string>('editTransport', 'input_references') === 'multipart' ? 'multipart' : 'input_references',
    embedProvenance: config.get<boolean>('embedProvenance', true) !== false,
    batchConcurrency: config.get<number>('batchConcurrency', 2),
  };
}

/**
 * A setting that decides where files go. In an untrusted workspace, the workspace's own value is
 * ignored; `trustedSource` says whether the value came from the user rather than the workspace.
 */
export function readPathSetting(name: string, fallback: string, scope?: vscode.Uri): { value: string; trustedSource: boolean } {
  const inspected = vscode.workspace.getConfiguration(SECTION, scope).inspect<string>(name);
  const fromWorkspace = inspected?.workspaceFolderValue ?? inspected?.workspaceValue;
  if (fromWorkspace !== undefined && vscode.workspace.isTrusted) return { value: fromWorkspace, trustedSource: false };
  const fromUser = inspected?.globalValue;
  if (fromUser !== undefined) return { value: fromUser, trustedSource: true };
  return { value: inspected?.defaultValue ?? fallback, trustedSource: true };
}
