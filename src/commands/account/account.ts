// Account and catalog views: the account report, the model browser, the status bar menu.
import * as vscode from 'vscode';
import { type AccountSnapshot } from '../../account/accountModel';
import { canEdit } from '../../core/gateway/catalog';
import { formatRubleRange, formatRubles } from '../../core/money/cost';
import { CATALOG_GROUPS, type CatalogEntry } from '../../core/gateway/types';
import { markOnboarding } from '../../host/onboarding';
import { type Services } from '../../services';
import { modelDetail } from '../images/pickers';
import type * as AccountPageModule from './accountPage';
import type * as FindResultsModule from '../results/findResults';
import { runCommandBody, showError } from '../common/showError';
import { messageText } from '../../core/common/markdownText';

let accountPage: typeof AccountPageModule | undefined;
/** Loads dist/accountPage.js (the page and its spend chart) when the page is first shown; esbuild leaves this require alone. */
function accountPageCode(): typeof AccountPageModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  accountPage ??= require('./accountPage.js') as typeof AccountPageModule;
  return accountPage;
}

/** Loads dist/findResults.js (Find Image Results…) when first used. */
const findResultsCode = () => require('./findResults.js') as typeof FindResultsModule; // eslint-disable-line @typescript-eslint/no-require-imports

const ACCOUNT_URI = vscode.Uri.parse('gateway-images:/Account.md');

export function registerAccountCommands(services: Services): vscode.Disposable {
  const provider = new AccountDocument(services);
  return vscode.Disposable.from(
    provider,
    vscode.workspace.registerTextDocumentContentProvider('gateway-images', provider),
    vscode.commands.registerCommand('gatewayImages.refreshAccount', () => (markOnboarding('statusBarSeen'), services.account.refresh())),
    vscode.commands.registerCommand('gatewayImages.showAccount', () => (markOnboarding('statusBarSeen'), showAccount(services))),
    vscode.commands.registerCommand('gatewayImages.browseModels', () => browseModels(services)),
    vscode.commands.registerCommand('gatewayImages.statusMenu', () => (markOnboarding('statusBarSeen'), statusMenu())),
    vscode.commands.registerCommand('gatewayImages.showLog', () => services.log.show()),
    // Called with arguments (an agent, a test, another extension), a failure is also thrown to the caller.
    vscode.commands.registerCommand('gatewayImages.findResults', (args?: unknown) =>
      runCommandBody(services, args !== undefined, () => findResultsCode().findResults(services, args)),
    ),
    vscode.commands.registerCommand('gatewayImages.exportResultsCsv', (target?: vscode.Uri) =>
      runCommandBody(services, target !== undefined, () => accountPageCode().exportResultsCsv(services, target)),
    ),
  );
}

async function showAccount(services: Services): Promise<AccountSnapshot> {
  const snapshot = await services.account.refresh();
  if (snapshot.status === 'no-url' || snapshot.status === 'no-key' || snapshot.status === 'invalid-key' || snapshot.status === 'expired-key') {
    await vscode.commands.executeCommand('gatewayImages.statusMenu');
    return snapshot;
  }
  await vscode.commands.executeCommand('markdown.showPreview', ACCOUNT_URI);
  return snapshot;
}

class AccountDocument implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly subscription: { dispose(): void };

  constructor(private readonly services: Services) {
    this.subscription = services.account.onDidChange(() => this.changed.fire(ACCOUNT_URI));
    this.historySubscription = services.history.onDidChange(() => this.changed.fire(ACCOUNT_URI));
  }

  private readonly historySubscription: { dispose(): void };

  async provideTextDocumentContent(): Promise<string> {
    // Every result of the chart's 30 days, from the journal's index by time.
    const page = accountPageCode();
    const now = new Date();
    const snapshot = this.services.account.snapshot;
    const { from, to } = page.accountWindow(snapshot, now);
    const results = (await this.services.history.index()).createdBetween(from, to);
    return page.renderAccount(snapshot, this.services.locale, results, now);
  }

  dispose(): void {
    this.subscription.dispose();
    this.historySubscription.dispose();
    this.changed.dispose();
  }
}

async function browseModels(services: Services): Promise<void> {
  try {
    const client = await services.connection.clientForCatalog();
    const groups = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: vscode.l10n.t('Reading the catalog…') }, () =>
      client.catalog(),
    );
    const images = await services.catalog.get().catch(() => []);
    type Item = vscode.QuickPickItem & { entry?: CatalogEntry };
    const items: Item[] = [];
    const order = [...CATALOG_GROUPS, ...[...groups.keys()].filter((g) => !(CATALOG_GROUPS as readonly string[]).includes(g))];
    for (const group of order) {
      const entries = groups.get(group);
      if (!entries?.length) continue;
      items.push({ label: group, kind: vscode.QuickPickItemKind.Separator });
      for (const entry of entries) {
        const image = group === 'images' ? images.find((m) => m.id === entry.id) : undefined;
        if (image) items.push({ label: entry.id, ...modelDetail(image, services.locale), entry });
        else
          items.push({
            label: entry.id,
            description: typeof entry.provider === 'string' ? entry.provider : undefined,
            detail: describeEntry(entry, services.locale),
            entry,
          });
      }
    }
    const picked = await vscode.window.showQuickPick(items, {
      title: vscode.l10n.t('Gateway Models'),
      placeHolder: vscode.l10n.t('Models by group, with capabilities and prices. Pick an image model to generate with it.'),
      matchOnDescription: true,
      matchOnDetail: true,
    });
    const image = picked?.entry && images.find((m) => m.id === picked.entry!.id);
    if (image && image.supports_generation) {
      const go = vscode.l10n.t('Generate with {0}', image.id);
      const edit = canEdit(image) ? vscode.l10n.t('Edit an image') : undefined;
      const choice = await vscode.window.showInformationMessage(
        messageText(`${image.id}: ${formatRubleRange(image.min_price_per_image, image.max_price_per_image, services.locale)} ${vscode.l10n.t('per image')}`),
        ...[go, edit].filter((x): x is string => !!x),
      );
      if (choice === go) await vscode.commands.executeCommand('gatewayImages.generate');
      else if (choice && choice === edit) await vscode.commands.executeCommand('gatewayImages.editImage');
    }
  } catch (error) {
    await showError(services, error);
  }
}

function describeEntry(entry: CatalogEntry, locale: string): string {
  const parts: string[] = [];
  if (typeof entry.description === 'string') parts.push(entry.description);
  for (const [field, value] of Object.entries(entry)) {
    if (/price/.test(field) && typeof value === 'number') parts.push(`${field.replace(/_/g, ' ')}: ${formatRubles(value, locale)}`);
  }
  return parts.join(' · ');
}

async function statusMenu(): Promise<void> {
  const items = [
    { label: `$(refresh) ${vscode.l10n.t('Refresh Balance')}`, command: 'gatewayImages.refreshAccount' },
    { label: `$(graph) ${vscode.l10n.t('Account and Usage')}`, command: 'gatewayImages.showAccount' },
    { label: `$(paintcan) ${vscode.l10n.t('Open Image Studio')}`, command: 'gatewayImages.openStudio' },
    { label: `$(sparkle) ${vscode.l10n.t('Generate Image')}`, command: 'gatewayImages.generate' },
    { label: `$(list-unordered) ${vscode.l10n.t('Browse Models')}`, command: 'gatewayImages.browseModels' },
    { label: `$(key) ${vscode.l10n.t('Set API Key')}`, command: 'gatewayImages.setApiKey' },
    { label: `$(gear) ${vscode.l10n.t('Settings')}`, command: 'workbench.action.openSettings', args: ['gatewayImages'] },
  ];
  // ignoreFocusOut: the walkthrough's Open the Account Menu button focuses its step right after
  // running the command, which would close the menu at once. Escape still closes it.
  const picked = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('Gateway Images'), ignoreFocusOut: true });
  if (picked) await vscode.commands.executeCommand(picked.command, ...(picked.args ?? []));
}
