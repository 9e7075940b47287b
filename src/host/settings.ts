// Typed access to the extension's settings, aware of Workspace Trust.
import * as vscode from 'vscode';
import type { CapLimits } from '../core/spendingCap';
import type { EditTransport } from '../jobs/jobTypes';
import { DEFAULT_MAX_COST_PER_CALL, DEFAULT_MAX_COST_PER_SESSION } from '../mcp/server/config';

export const SECTION = 'gatewayImages';

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
}

export function readSettings(): ExtensionSettings {
  const config = vscode.workspace.getConfiguration(SECTION);
  return {
    baseUrl: config.get<string>('baseUrl', '').trim(),
    confirmCostAbove: config.get<number>('confirmCostAbove', 50),
    lowBalanceWarning: config.get<number>('lowBalanceWarning', 100),
    balanceRefreshMinutes: config.get<number>('balanceRefreshMinutes', 5),
    requestTimeoutSeconds: config.get<number>('requestTimeoutSeconds', 600),
    openAfterGenerate: config.get<boolean>('openAfterGenerate', true),
    editTransport: config.get<string>('editTransport', 'input_references') === 'multipart' ? 'multipart' : 'input_references',
    embedProvenance: config.get<boolean>('embedProvenance', true) !== false,
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

/**
 * The agents' spending caps (gatewayImages.mcp.*), for the MCP server and the chat tool. Limits on
 * the user's money are the user's: a workspace's value (a cloned repository's .vscode/settings.json)
 * is ignored, whatever the setting's scope.
 */
export function readAgentCaps(): CapLimits {
  const config = vscode.workspace.getConfiguration(`${SECTION}.mcp`);
  const cap = (name: keyof CapLimits, fallback: number) => {
    const value = config.inspect<number>(name)?.globalValue;
    return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;
  };
  return { maxCostPerCall: cap('maxCostPerCall', DEFAULT_MAX_COST_PER_CALL), maxCostPerSession: cap('maxCostPerSession', DEFAULT_MAX_COST_PER_SESSION) };
}
