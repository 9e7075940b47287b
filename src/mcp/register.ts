// Host side of the MCP server: offers dist/mcp.js to VS Code's agents through
// `vscode.lm.registerMcpServerDefinitionProvider` (VS Code 1.101+), feature-detected so that on
// older hosts activation stays clean and the log says what is missing. The server connects as the
// extension does: the same proxy and certificate settings (VS Code's `http.*`). The definition VS
// Code may list and cache carries no secret; the key (from SecretStorage) and the proxy's
// credentials go into the child's environment only in resolveMcpServerDefinition, right before the
// server starts.
import { createHash, randomUUID } from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { summarizeError } from '../core/gateway/errors';
import { readConnectionSettings } from '../host/gatewayConnection';
import { readAgentCaps, readAlertSettings, readPathSetting, readSettings } from '../host/settings';
import type { Services } from '../services';
import { connectionEnvironment, ENV } from './server/config';
import { registerMcpSetupCommand } from './setupCommand';

export const MCP_PROVIDER_ID = 'gatewayImages.mcp';

/** The parts of the MCP API of VS Code 1.101+ used here (@types/vscode is 1.100). */
interface McpStdioDefinition {
  label: string;
  command: string;
  args: string[];
  env: Record<string, string | number | null>;
  cwd?: vscode.Uri;
  version?: string;
}
interface McpProvider {
  readonly onDidChangeMcpServerDefinitions: vscode.Event<void>;
  provideMcpServerDefinitions(token?: vscode.CancellationToken): Promise<McpStdioDefinition[]>;
  resolveMcpServerDefinition(server: McpStdioDefinition, token: vscode.CancellationToken): Promise<McpStdioDefinition>;
}
interface McpHostApi {
  registerMcpServerDefinitionProvider(id: string, provider: McpProvider): vscode.Disposable;
}
type McpDefinitionClass = new (
  label: string,
  command: string,
  args?: string[],
  env?: Record<string, string | number | null>,
  version?: string,
) => McpStdioDefinition;

/** What the extension's API tells other extensions and tests (never the key). */
export interface McpRegistration {
  readonly status: 'registered' | 'unsupported' | 'failed';
  readonly message: string;
  /** The definitions as VS Code lists them: no key in `env`. */
  definitions(): Promise<Omit<McpStdioDefinition, 'version'>[]>;
  /** Fires when the definition changes (key, base URL, caps, workspace folders). */
  readonly onDidChangeDefinitions: vscode.Event<void>;
}

export interface McpServerOffer {
  registration: McpRegistration;
  /** The definitions as VS Code starts them (key and proxy credentials in `env`): for the extension's own tests only. */
  resolvedDefinitions: () => Promise<Omit<McpStdioDefinition, 'version'>[]>;
  disposable: vscode.Disposable;
}

export function registerMcpServer(services: Services): McpServerOffer {
  const serverPath = path.join(services.context.extensionUri.fsPath, 'dist', 'mcp.js');
  const Definition = (vscode as unknown as { McpStdioServerDefinition?: McpDefinitionClass }).McpStdioServerDefinition;
  const provider = createProvider(services, serverPath, Definition);
  const offered = offerToAgents(services, serverPath, provider, Definition);
  const command = registerMcpSetupCommand(serverPath, () => offered.registration.message, readAgentCaps);
  const resolvedDefinitions = async () => {
    const listed = await provider.provideMcpServerDefinitions();
    const cancel = new vscode.CancellationTokenSource();
    try {
      const resolved = await Promise.all(listed.map((d) => provider.resolveMcpServerDefinition(d, cancel.token)));
      return resolved.map(({ version: _v, ...d }) => d);
    } finally {
      cancel.dispose();
    }
  };
  return { registration: offered.registration, resolvedDefinitions, disposable: vscode.Disposable.from(offered.disposable, command) };
}

function offerToAgents(
  services: Services,
  serverPath: string,
  provider: McpProvider & vscode.Disposable,
  Definition: McpDefinitionClass | undefined,
): { registration: McpRegistration; disposable: vscode.Disposable } {
  const lm = vscode.lm as unknown as Partial<McpHostApi>;
  const definitions = async () => (await provider.provideMcpServerDefinitions()).map(({ version: _v, ...d }) => d);
  const onDidChangeDefinitions = provider.onDidChangeMcpServerDefinitions;

  if (!isMcpApiFinal(vscode.version) || typeof lm.registerMcpServerDefinitionProvider !== 'function' || typeof Definition !== 'function') {
    const message = vscode.l10n.t(
      'The MCP image tools for agents need VS Code 1.101 or newer (this is {0}). Other MCP clients can start the server directly: node "{1}" (see docs/agents-and-mcp.md in the extension’s folder).',
      vscode.version,
      serverPath,
    );
    services.log.info(message);
    return { registration: { status: 'unsupported', message, definitions, onDidChangeDefinitions }, disposable: provider };
  }
  try {
    const registered = lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, provider);
    const caps = readAgentCaps();
    const message = vscode.l10n.t(
      'MCP server "Gateway Images" offered to agents (spending cap {0} ₽ per call, {1} ₽ per session).',
      caps.maxCostPerCall,
      caps.maxCostPerSession,
    );
    services.log.info(message);
    return { registration: { status: 'registered', message, definitions, onDidChangeDefinitions }, disposable: vscode.Disposable.from(registered, provider) };
  } catch (error) {
    const message = vscode.l10n.t('The MCP server could not be registered: {0}', summarizeError(error).message);
    services.log.warn(message);
    return { registration: { status: 'failed', message, definitions, onDidChangeDefinitions }, disposable: provider };
  }
}

/**
 * The API is final from 1.101 on. VS Code 1.100 already has the function, but as a proposal
 * (`mcpConfigurationProvider`, with another contribution point) that published extensions cannot use.
 */
export function isMcpApiFinal(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map((part) => Number.parseInt(part, 10));
  return major > 1 || (major === 1 && minor >= 101);
}

function createProvider(services: Services, serverPath: string, Definition: McpDefinitionClass | undefined): McpProvider & vscode.Disposable {
  const changed = new vscode.EventEmitter<void>();
  // The version changes whenever the key or the configuration changes; the salt keeps it from
  // being a function of the key alone (it is no fingerprint of the key).
  const salt = randomUUID();
  let keyGeneration = 0;
  const subscriptions = [
    changed,
    services.keys.onDidChange(() => {
      keyGeneration++;
      changed.fire();
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('gatewayImages') || event.affectsConfiguration('http')) changed.fire();
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => changed.fire()),
    // The workspace's styles may send once it is trusted.
    vscode.workspace.onDidGrantWorkspaceTrust(() => changed.fire()),
  ];

  return {
    onDidChangeMcpServerDefinitions: changed.event,
    provideMcpServerDefinitions() {
      const folder = vscode.workspace.workspaceFolders?.[0];
      const settings = readSettings();
      if (!folder || folder.uri.scheme !== 'file' || !settings.baseUrl) return Promise.resolve([]);
      const env = serverEnvironment(services, settings.baseUrl, settings.requestTimeoutSeconds, folder);
      // The proxy's credentials are not in `env`, but a change of them must restart the server too.
      const secret = connectionEnvironment(readConnectionSettings(), process.env.NODE_EXTRA_CA_CERTS).secret;
      const version = createHash('sha256')
        .update(JSON.stringify([salt, keyGeneration, env, secret]))
        .digest('hex')
        .slice(0, 12);
      const label = 'Gateway Images';
      const command = process.execPath;
      const definition = Definition ? new Definition(label, command, [serverPath], env, version) : { label, command, args: [serverPath], env, version };
      definition.cwd = folder.uri;
      return Promise.resolve([definition]);
    },
    async resolveMcpServerDefinition(server) {
      const key = await services.keys.get();
      // Only here, right before the start: the listed (and cached) definition never holds the key
      // nor the proxy's credentials.
      const { secret } = connectionEnvironment(readConnectionSettings(), process.env.NODE_EXTRA_CA_CERTS);
      server.env = { ...server.env, ...secret, ...(key ? { [ENV.apiKey]: key } : {}) };
      return server;
    },
    dispose: () => {
      for (const s of subscriptions) s.dispose();
    },
  };
}

function serverEnvironment(services: Services, baseUrl: string, timeoutSeconds: number, folder: vscode.WorkspaceFolder): Record<string, string> {
  const output = readPathSetting('outputDirectory', 'generated-images', folder.uri);
  const caps = readAgentCaps();
  const alerts = readAlertSettings();
  const env: Record<string, string> = {
    // VS Code's own executable runs scripts as plain Node with this (ignored by Node itself).
    ELECTRON_RUN_AS_NODE: '1',
    [ENV.baseUrl]: baseUrl,
    [ENV.workspace]: folder.uri.fsPath,
    [ENV.maxCostPerCall]: String(caps.maxCostPerCall),
    [ENV.maxCostPerSession]: String(caps.maxCostPerSession),
    [ENV.timeoutSeconds]: String(timeoutSeconds),
    // The same money alerts as the window's: get_account carries those in force.
    [ENV.alertBudgetThresholds]: alerts.budgetThresholds.length ? alerts.budgetThresholds.join(',') : 'none',
    [ENV.alertRunwayDays]: String(alerts.runwayDays),
    [ENV.alertDailySpend]: String(alerts.dailySpend),
    // The extension's recovery folder: "Recover Unsaved Images" finds what the server could not place.
    [ENV.recoveryDir]: services.recoveryDir,
    // The window's results journal: the server's results show in the gallery and the spend ledger, under MCP with the client's name.
    [ENV.resultsJournal]: services.history.file,
    GATEWAY_IMAGES_EMBED_PROVENANCE: readSettings().embedProvenance ? '1' : '0',
    [ENV.workspaceTrusted]: vscode.workspace.isTrusted ? '1' : '0',
  };
  // The server confines outputs to the workspace: only a relative output folder is passed on.
  if (!path.isAbsolute(output.value) && !/^~[/\\]/.test(output.value)) env[ENV.outputDirectory] = output.value;
  // The extension's connection: proxy, bypass list, certificates (never the proxy's credentials here).
  return { ...env, ...connectionEnvironment(readConnectionSettings(), process.env.NODE_EXTRA_CA_CERTS).listed };
}
