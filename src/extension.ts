// Composition root: builds the services once and hands them to each feature's register().
// No network call and no synchronous file I/O here; the HTTP stack loads on first use.
import * as vscode from 'vscode';
import { type AccountSnapshot } from './account/accountModel';
import { AccountStatusBar, scheduleAccountRefresh } from './account/statusBar';
import { type PrepareChatTool, registerChatTools } from './chat/chatTools';
import { registerAccountCommands } from './commands/account/account';
import { registerApiKeyCommands } from './commands/account/apiKey';
import { registerMoneyAlerts } from './commands/account/moneyAlerts';
import { type BatchArgs, type BatchResult, generateFromFileCommand, registerBatchFromFile } from './commands/promptFiles/promptFiles';
import { type EditArgs, type GenerateArgs } from './commands/common/commandArgs';
import { compareCode, registerCompareModels } from './commands/images/compareCommand';
import type { CompareArgs, CompareResult } from './commands/images/compareModels';
import { confirmCost } from './commands/common/confirmCost';
import { editImageCommand, registerEditImage } from './commands/images/editImage';
import { generateCommand, registerGenerate } from './commands/images/generate';
import { registerGenerateForSelection } from './commands/images/generateForSelection';
import { registerInterruptedJobs } from './commands/results/interruptedJobs';
import { type CommandResult } from './commands/images/jobRunner';
import { registerProvenance } from './commands/results/provenance';
import { registerRecover } from './commands/results/recoverCommand';
import { registerStyles } from './commands/styles/editStyles';
import { logIgnoredWorkspaceSettings } from './host/ignoredSettings';
import { configureL10n } from './host/l10n';
import { cacheSettings } from './host/settings';
import { initOnboarding } from './host/onboarding';
import { type McpRegistration, type McpServerOffer, registerMcpServer } from './mcp/register';
import { createServices, resultsForTests } from './services';
import { openStudioWith, registerStudio } from './studio/panel';

/** The extension's public API (also what `activate()` resolves to for other extensions and tests). */
export interface GatewayImagesApi {
  generate(args: GenerateArgs): Promise<CommandResult>;
  editImage(args: EditArgs): Promise<CommandResult>;
  /** Generate Images from File without prompts (a `signal` cancels like the notification's Cancel). */
  generateFromFile(args: BatchArgs): Promise<BatchResult>;
  /** Compare Models without prompts: one prompt to 2–6 models (a `signal` cancels all). */
  compareModels(args: CompareArgs): Promise<CompareResult>;
  readonly account: AccountSnapshot;
  readonly onDidChangeAccount: vscode.Event<AccountSnapshot>;
  refreshAccount(): Promise<AccountSnapshot>;
  /** Whether the MCP server is offered to VS Code's agents (VS Code 1.101+), and why not. */
  readonly mcp: McpRegistration;
  /** How long activate() took, in milliseconds (reported by the benchmark). */
  readonly activationMs: number;
  /**
   * Only under the project's test harness (its tests, or an e2e window it opened in development mode):
   * the results journal's file, reading it again as a restart would, the gateway client, and the MCP
   * definitions as VS Code starts them (with the key: never in an installed extension).
   */
  readonly testing?: ReturnType<typeof resultsForTests> & { mcpResolvedDefinitions: McpServerOffer['resolvedDefinitions']; prepareChatTool: PrepareChatTool };
}

/**
 * The test hooks (they reach the key) exist only under the project's own harness: VS Code running the
 * extension's tests, or a development window the e2e harness opened (it sets its control port).
 */
function underTestHarness(context: vscode.ExtensionContext): boolean {
  return (
    context.extensionMode === vscode.ExtensionMode.Test ||
    (context.extensionMode === vscode.ExtensionMode.Development && process.env.GATEWAY_IMAGES_E2E_CONTROL_PORT !== undefined)
  );
}

export function activate(context: vscode.ExtensionContext): GatewayImagesApi {
  const started = performance.now();
  // The pure modules (core, jobs) translate with @vscode/l10n from VS Code's bundle for the display language.
  configureL10n();
  // First: its listener must run before every other listener of the extension reads the settings.
  context.subscriptions.push(cacheSettings());
  const services = createServices(context, { confirm: confirmCost });
  const accountChanged = new vscode.EventEmitter<AccountSnapshot>();
  const forward = services.account.onDidChange((snapshot) => accountChanged.fire(snapshot));
  const mcp = registerMcpServer(services);
  const chatTools = registerChatTools(services);

  context.subscriptions.push(
    accountChanged,
    { dispose: () => forward.dispose() },
    new AccountStatusBar(services.account, services.locale),
    scheduleAccountRefresh(services.account, services.keys.onDidChange),
    registerApiKeyCommands(services),
    registerGenerate(services),
    registerEditImage(services),
    registerAccountCommands(services),
    registerMoneyAlerts(services),
    registerRecover(services),
    registerInterruptedJobs(services),
    registerStudio(services),
    registerGenerateForSelection(services),
    registerProvenance(services, (request, references, style) => openStudioWith(services, request, references, style)),
    chatTools.disposable,
    registerBatchFromFile(services),
    registerCompareModels(services),
    registerStyles(services),
    mcp.disposable,
    initOnboarding(context.globalState, services.keys, context.extension.id),
    logIgnoredWorkspaceSettings(services.log),
  );

  const activationMs = performance.now() - started;
  services.log.info(`Activated in ${activationMs.toFixed(1)} ms`);
  return {
    activationMs,
    mcp: mcp.registration,
    generate: async (args) => (await generateCommand(services, args))!,
    editImage: async (args) => (await editImageCommand(services, args))!,
    generateFromFile: async (args) => (await generateFromFileCommand(services, args))!,
    compareModels: async (args) => (await compareCode().compareModelsCommand(services, args))!,
    get account() {
      return services.account.snapshot;
    },
    onDidChangeAccount: accountChanged.event,
    refreshAccount: () => services.account.refresh(),
    ...(underTestHarness(context)
      ? {
          testing: {
            ...resultsForTests(context, services.history, services.connection),
            mcpResolvedDefinitions: mcp.resolvedDefinitions,
            prepareChatTool: chatTools.prepare,
          },
        }
      : {}),
  };
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
