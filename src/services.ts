// The services every feature shares, built once by the composition root.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { AccountModel } from './account/accountModel';
import { normalizeBaseUrl } from './core/baseUrl';
import { CatalogCache, type CatalogSnapshot } from './core/catalogCache';
import { HistoryStore } from './jobs/history';
import { ImageJobService } from './jobs/imageJobs';
import { InFlightJournal } from './jobs/inFlight';
import { GatewayConnection } from './host/gatewayConnection';
import { createLog } from './host/log';
import { ApiKeyStore } from './host/secrets';
import { readSettings } from './host/settings';
import type { ConfirmRequest } from './jobs/jobTypes';

export interface Services {
  context: vscode.ExtensionContext;
  log: vscode.LogOutputChannel;
  keys: ApiKeyStore;
  connection: GatewayConnection;
  account: AccountModel;
  catalog: CatalogCache;
  jobs: ImageJobService;
  history: HistoryStore;
  /** Paid requests in flight, on disk (this workspace's storage): what a dead extension host left is settled at start-up. */
  inFlight: InFlightJournal;
  /** Paid images that could not be placed into the workspace wait here. */
  recoveryDir: string;
  locale: string;
}

const CATALOG_STATE_KEY = 'gatewayImages.catalog';

function catalogSource(baseUrl: string): string | undefined {
  try {
    return normalizeBaseUrl(baseUrl);
  } catch {
    return baseUrl || undefined;
  }
}

/** What the layers above lend to the services: the confirmation before an expensive request is UI (commands/). */
export interface ServiceHooks {
  confirm(info: ConfirmRequest, locale: string): Promise<boolean>;
}

export function createServices(context: vscode.ExtensionContext, hooks: ServiceHooks): Services {
  const log = createLog();
  const keys = new ApiKeyStore(context.secrets);
  const declared = (context.extension.packageJSON as { version?: unknown }).version;
  const version = typeof declared === 'string' ? declared : '0';
  const connection = new GatewayConnection(keys, log, `gateway-images-vscode/${version}`);
  const locale = vscode.env.language;

  const account = new AccountModel(async () => {
    const keyed = await connection.keyedClient();
    if (typeof keyed === 'string') return keyed;
    const { client, key, identity } = keyed;
    const options = { apiKey: key };
    return {
      identity,
      api: { me: () => client.me(options), balance: () => client.balance(options), key: () => client.key(options), stats: () => client.stats(options) },
    };
  });

  const catalog = new CatalogCache(
    async () => (await connection.clientForCatalog()).imageModels(),
    {
      load: () => context.globalState.get<CatalogSnapshot>(CATALOG_STATE_KEY),
      save: (snapshot) => context.globalState.update(CATALOG_STATE_KEY, snapshot),
    },
    undefined,
    undefined,
    // Keyed by the gateway address: another gateway's models and prices are never used.
    () => catalogSource(readSettings().baseUrl),
  );
  const reloadCatalog = vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('gatewayImages.baseUrl') && readSettings().baseUrl) void catalog.refresh().catch(() => undefined);
  });

  const recoveryDir = path.join(context.globalStorageUri.fsPath, 'recovery');
  const inFlight = new InFlightJournal(path.join((context.storageUri ?? context.globalStorageUri).fsPath, 'in-flight'));
  const jobs = new ImageJobService({
    api: () => connection.client(),
    models: () => catalog.get(),
    refreshModels: () => catalog.refresh(),
    // Only current facts of this key and gateway: refreshed first when stale (bounded wait), else unknown.
    funds: () => account.currentFunds(),
    applyUsage: (usage, identity) => account.applyUsage(usage, identity),
    fundsRefused: (scope) => void account.noteFundsRefusal(scope).catch(() => undefined),
    reconcile: () => account.reconcileSoon(),
    confirm: (info) => hooks.confirm(info, locale),
    confirmAbove: () => readSettings().confirmCostAbove,
    provenance: () => readSettings().embedProvenance,
    recoveryDir,
    inFlight,
    locale,
  });

  const history = new HistoryStore(context.workspaceState);

  context.subscriptions.push(log, keys, connection, reloadCatalog, { dispose: () => account.dispose() });
  return { context, log, keys, connection, account, catalog, jobs, history, inFlight, recoveryDir, locale };
}
