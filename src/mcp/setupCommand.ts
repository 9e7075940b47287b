// "Gateway Images: Set Up MCP Server for Other Agents…": says whether VS Code's agents get the
// tools on this VS Code, and copies a ready configuration for Claude Code, Cursor or Codex CLI
// with this installation's server path and gateway address (never the key).
import * as vscode from 'vscode';
import type { CapLimits } from '../core/money/spendingCap';
import { readSettings } from '../host/settings';
import { MCP_CLIENTS, mcpClientSnippet, type McpClientName } from './snippets';

export const MCP_SETUP_COMMAND = 'gatewayImages.mcpSetup';

const CLIENT_LABELS: Record<McpClientName, string> = { 'claude-code': 'Claude Code', cursor: 'Cursor', codex: 'Codex CLI' };

export function registerMcpSetupCommand(serverPath: string, status: () => string, caps: () => CapLimits): vscode.Disposable {
  return vscode.commands.registerCommand(MCP_SETUP_COMMAND, async (args?: { client?: unknown }) => {
    let client = MCP_CLIENTS.find((c) => c === args?.client);
    if (!client) {
      const picked = await vscode.window.showQuickPick(
        MCP_CLIENTS.map((c) => ({ label: CLIENT_LABELS[c], client: c, detail: vscode.l10n.t('Copy its configuration (without the key) to the clipboard') })),
        { title: status(), placeHolder: vscode.l10n.t('Which MCP client should use the image tools?') },
      );
      if (!picked) return undefined;
      client = picked.client;
    }
    const snippet = mcpClientSnippet(client, { serverPath, baseUrl: readSettings().baseUrl, ...caps() });
    await vscode.env.clipboard.writeText(snippet).then(undefined, () => undefined);
    void vscode.window.showInformationMessage(
      vscode.l10n.t(
        'Copied the {0} configuration. It holds no key: set GATEWAY_IMAGES_API_KEY in the environment the client starts from.',
        CLIENT_LABELS[client],
      ),
    );
    return snippet;
  });
}
