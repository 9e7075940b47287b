// Set and clear the API key. The key is checked with GET /v1/gateway/me before it is saved, and
// it is stored only in SecretStorage.
import * as vscode from 'vscode';
import { NotConfiguredError, ValidationError } from '../../core/gateway/errors';
import { readSettings } from '../../host/settings';
import { type Services } from '../../services';
import { showError } from '../common/showError';
import { messageText } from '../../core/common/markdownText';

export function registerApiKeyCommands(services: Services): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.commands.registerCommand('gatewayImages.setApiKey', (key?: unknown) => setApiKey(services, key)),
    vscode.commands.registerCommand('gatewayImages.clearApiKey', () => clearApiKey(services)),
  );
}

export interface SetKeyResult {
  email: string;
}

async function setApiKey(services: Services, argument?: unknown): Promise<SetKeyResult | undefined> {
  const fromArgument = typeof argument === 'string';
  try {
    const baseUrl = readSettings().baseUrl;
    if (!baseUrl) throw new NotConfiguredError('baseUrl');
    const key = fromArgument ? argument : await askKey();
    if (key === undefined) return undefined;
    if (!key.trim()) throw new ValidationError('apiKey', vscode.l10n.t('The API key must not be empty.'));
    const client = services.connection.probeClient(baseUrl, key.trim());
    const user = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Checking the API key…') }, () =>
      client.me().finally(() => client.close()),
    );
    await services.keys.set(key);
    // Another key: the old key's figures go at once (secrets.onDidChange follows, for other windows).
    void services.account.switchIdentity().catch(() => undefined);
    void vscode.window.showInformationMessage(messageText(vscode.l10n.t('API key saved. Signed in as {0}.', user.email)));
    return { email: user.email };
  } catch (error) {
    void showError(services, error);
    if (fromArgument) throw error;
    return undefined;
  }
}

function askKey(): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    title: vscode.l10n.t('Gateway Images: API Key'),
    prompt: vscode.l10n.t('The key is checked with the gateway, then kept in VS Code’s secret storage.'),
    password: true,
    ignoreFocusOut: true,
    placeHolder: vscode.l10n.t('Paste your API key'),
    validateInput: (value) => (value.trim() ? undefined : vscode.l10n.t('The API key must not be empty.')),
  });
}

async function clearApiKey(services: Services): Promise<void> {
  await services.keys.clear();
  void services.account.switchIdentity().catch(() => undefined);
  void vscode.window.showInformationMessage(vscode.l10n.t('API key removed from this machine.'));
}
