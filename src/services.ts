// The services every feature shares, built once by the composition root.
import { realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { AccountModel } from './account/accountModel';
import { normalizeBaseUrl } from './core/gateway/baseUrl';
import { CatalogCache, type CatalogSnapshot } from './core/gateway/catalogCache';
import { agentJournalFile } from './jobs/results/agentJournal';
import { HistoryStore, type ResultsOpenReport } from './jobs/results/history';
import type * as ResultsModules from './jobs/results/resultsBundle';
import type { ThumbnailCache } from './core/files/thumbnailCache';
import { ImageJobService } from './jobs/imageJobs';
import { InFlightJournal } from './jobs/inFlight';
import { GatewayConnection } from './host/gatewayConnection';
import { createLog } from './host/log';
import { ApiKeyStore } from './host/secrets';
import { readSettings } from './host/settings';
import type { ConfirmRequest } from './jobs/jobTypes';
import { type OutcomeChecks, outcomeChecksFor } from './jobs/outcomeCheck';
import type { PromptFileClaims } from './jobs/promptFiles/promptFileClaim';
import { messageText } from './core/common/markdownText';

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
  /** The gallery's small previews, in the workspace storage next to the journal (made by the results chunk). */
  thumbnails: { readonly dir: string; cache(): ThumbnailCache };
  /** The results chunk (dist/results.js): the journal's code, the resume's folder reads, thumbnails. Loaded on first use. */
  results(): ResultsCode;
  /** Paid images that could not be placed into the workspace wait here. */
  recoveryDir: string;
  /** Unknown outcomes checked again once their deadline has passed (written into their journal entries). */
  outcomes: OutcomeChecks;
  /** Claims of prompt files for a run, in the global storage every window shares (made by the results chunk). */
  promptFileClaims(): PromptFileClaims;
  locale: string;
}

const CATALOG_STATE_KEY = 'gatewayImages.catalog';
/** Where the history was kept before the results journal (an array of at most 500 results). */
const LEGACY_HISTORY_KEY = 'gatewayImages.history';

/**
 * Only under the project's test harness (see extension.ts): what a restart does to the results journal,
 * with the old workspace-state array set first when `legacy` is given (the migration's input).
 */
export function resultsForTests(context: vscode.ExtensionContext, history: HistoryStore, connection: GatewayConnection) {
  return {
    /** The client a job takes before it sends (and may hold across a settings change). */
    gatewayClient: () => connection.client(),
    resultsJournal: history.file,
    async reopenResults(legacy?: unknown[]): Promise<ResultsOpenReport> {
      if (legacy) await context.workspaceState.update(LEGACY_HISTORY_KEY, legacy);
      return history.reopen();
    },
  };
}

/**
 * The results journal of this workspace: `results.jsonl` in the extension's workspace storage
 * (global storage for a window without a folder). Read on first use, not here.
 */
function workspaceData(context: vscode.ExtensionContext): { folder: string; suffix: string } {
  return { folder: context.storageUri?.fsPath ?? context.globalStorageUri.fsPath, suffix: context.storageUri ? '' : '-without-folder' };
}

/** The results journal's code (dist/results.js, loaded on first use). */
export type ResultsCode = typeof ResultsModules;

let resultsChunk: ResultsCode | undefined;
/** Loads dist/results.js on first use; esbuild leaves this require alone. */
function loadResults(): ResultsCode {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  resultsChunk ??= require('./results.js') as ResultsCode;
  return resultsChunk;
}

/** `results.jsonl` in the workspace storage, `results-without-folder.jsonl` in the global storage. */
function historyFile(context: vscode.ExtensionContext): string {
  const { folder, suffix } = workspaceData(context);
  return path.join(folder, `results${suffix}.jsonl`);
}

function openHistory(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): HistoryStore {
  const file = historyFile(context);
  const legacy = {
    read: () => context.workspaceState.get<unknown>(LEGACY_HISTORY_KEY),
    clear: () => context.workspaceState.update(LEGACY_HISTORY_KEY, undefined),
  };
  return new HistoryStore(file, {
    load: loadResults,
    legacy,
    // A torn last line (a crash while writing) or unreadable lines are a warning; the rest is information.
    onOpened: (r) =>
      log[r.tornBytes || r.skippedLines ? 'warn' : 'info'](
        `Results journal ${r.file}: ${r.entries} results, ${r.lines} lines, ${r.migrated} moved from the old history, ${r.tornBytes} bytes of a torn last line and ${r.skippedLines} unreadable lines skipped, ${r.ms.toFixed(0)} ms`,
      ),
    warn: (message) => log.warn(message),
    // Once per window: each job writes its result again at its end, and the next start writes what is still missing.
    onUnwritable: (message) => void vscode.window.showWarningMessage(messageText(message)),
    watch: true,
    agentJournal: agentJournalOf(vscode.workspace.workspaceFolders?.[0]),
  });
}

/** The journal the MCP server writes when another agent starts it in this folder (agentJournal.ts); none without a folder. */
export function agentJournalOf(folder: vscode.WorkspaceFolder | undefined): string | undefined {
  if (folder?.uri.scheme !== 'file') return undefined;
  try {
    return agentJournalFile(realpathSync(folder.uri.fsPath), os.homedir());
  } catch {
    return undefined;
  }
}

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
  const data = workspaceData(context);
  // Beside the results journal: a record left behind is settled into the journal of the same workspace.
  const inFlight = new InFlightJournal(path.join(data.folder, `in-flight${data.suffix}`));
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
    resultsJournal: historyFile(context),
    locale,
  });

  const history = openHistory(context, log);
  const thumbnailsDir = path.join(data.folder, `thumbnails${data.suffix}`);
  let thumbnailCache: ThumbnailCache | undefined;
  const thumbnails = {
    dir: thumbnailsDir,
    cache: () => (thumbnailCache ??= loadResults().ThumbnailCache.withWorker(thumbnailsDir, path.join(__dirname, 'thumbnails.js'))),
  };

  const outcomes = outcomeChecksFor(account, {
    history,
    deadlineMs: () => readSettings().requestTimeoutSeconds * 1000,
    log: (message) => log.info(message),
  });
  const claimsDir = path.join(context.globalStorageUri.fsPath, 'prompt-file-runs');
  let claims: PromptFileClaims | undefined;
  const promptFileClaims = () =>
    // The run itself reacts: it confirms its claim before each line, and sends none once it is lost.
    (claims ??= new (loadResults().PromptFileClaims)(claimsDir, (file, error) =>
      log.warn(`The claim of ${file} for its run was lost: ${error.message}. The run sends no more lines; those in flight end and are recorded.`),
    ));

  context.subscriptions.push(
    log,
    keys,
    connection,
    reloadCatalog,
    { dispose: () => account.dispose() },
    { dispose: () => outcomes.dispose() },
    { dispose: () => void history.close() },
    { dispose: () => thumbnailCache?.dispose() },
  );
  return {
    context,
    log,
    keys,
    connection,
    account,
    catalog,
    jobs,
    history,
    inFlight,
    thumbnails,
    results: loadResults,
    recoveryDir,
    outcomes,
    promptFileClaims,
    locale,
  };
}
