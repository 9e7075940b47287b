// Shows any error as a sentence with the action that fixes it. Branches on the error class.
import * as vscode from 'vscode';
import { formatRubles } from '../../core/money/cost';
import { AuthenticationError, GatewayError, NotConfiguredError, RateLimitedError, ValidationError } from '../../core/gateway/errors';
import { moneyTold } from '../../core/gateway/moneyTold';
import type { AccountSnapshot } from '../../account/accountModel';
import { type Services } from '../../services';
import { messageText } from '../../core/common/markdownText';

/**
 * What the one layer that shows an error may offer with it. Lower layers (the job runner) never show
 * errors: they fill this in and throw; the entry point (a command, the studio, a selection command)
 * shows the error once, with these actions.
 */
export interface ErrorActions {
  /** An explicit retry: `resend` after an unknown outcome (it may pay twice, and says so), else after a local refusal. */
  retry?: (resend: boolean) => Promise<void>;
  /** What the account showed before sending: an unknown outcome is judged against it. */
  baseline?: Pick<AccountSnapshot, 'balance' | 'budget'>;
}

/**
 * The two ways a command runs. With arguments (keybindings, other extensions, tests) the error is
 * shown and the typed error rejects; from the UI it is shown and the command resolves undefined.
 * This is the layer that shows a command's errors; nothing below it does.
 */
export async function runCommandBody<T>(services: Services, byArguments: boolean, body: (actions: ErrorActions) => Promise<T>): Promise<T | undefined> {
  const actions: ErrorActions = {};
  try {
    return await body(actions);
  } catch (error) {
    if (byArguments) {
      void showError(services, error, actions.retry, actions.baseline);
      throw error;
    }
    await showError(services, error, actions.retry, actions.baseline);
    return undefined;
  }
}

export async function showError(
  services: Services,
  error: unknown,
  retry?: ErrorActions['retry'],
  baseline?: Pick<AccountSnapshot, 'balance' | 'budget'>,
): Promise<void> {
  const said = error instanceof Error ? error.message : String(error);
  services.log.error(said);
  // It may carry the gateway's words: a Markdown link in them would be a link in the notification.
  const message = messageText(said);

  if (error instanceof NotConfiguredError) {
    const action = error.missing === 'baseUrl' ? vscode.l10n.t('Open Settings') : vscode.l10n.t('Set API Key');
    const choice = await vscode.window.showWarningMessage(message, action);
    if (choice) await runSetupAction(error.missing);
    return;
  }
  // The money first: an answer that is no refusal (a proxy's 401 page, say) may have been charged.
  if (error instanceof GatewayError && moneyTold(error) !== 'the message') {
    await showOutcomeUnknown(services, error, retry, baseline);
    return;
  }
  if (error instanceof AuthenticationError) {
    const text =
      error.reason === 'expired'
        ? vscode.l10n.t('Your API key has expired. Set a new key.')
        : vscode.l10n.t('The gateway did not accept your API key: {0}', message);
    const choice = await vscode.window.showErrorMessage(text, vscode.l10n.t('Set API Key'));
    if (choice) await runSetupAction('apiKey');
    return;
  }
  if (error instanceof GatewayError && error.kind === 'cancelled') {
    void vscode.window.showInformationMessage(message);
    return;
  }
  if (error instanceof GatewayError && (error.kind === 'cannot-afford' || error.kind === 'insufficient-funds')) {
    // A local refusal rests on figures that may just have changed (a top-up, a budget reset): offer to check again.
    const again = error.kind === 'cannot-afford' && retry ? [vscode.l10n.t('Refresh and Try Again')] : [];
    const choice = await vscode.window.showWarningMessage(message, ...again, vscode.l10n.t('Show Account'));
    if (choice === vscode.l10n.t('Show Account')) await vscode.commands.executeCommand('gatewayImages.showAccount');
    else if (choice && retry) {
      await services.account.refresh().catch(() => undefined);
      await retry(false).catch((e) => showError(services, e));
    }
    return;
  }
  if (error instanceof GatewayError && error.kind === 'run-in-progress') {
    void vscode.window.showWarningMessage(message);
    return;
  }
  if (error instanceof RateLimitedError && error.retryAfterMs !== undefined) {
    void vscode.window.showWarningMessage(vscode.l10n.t('{0} Try again in {1} s.', message, Math.ceil(error.retryAfterMs / 1000)));
    return;
  }
  if (error instanceof ValidationError) {
    void vscode.window.showErrorMessage(message);
    return;
  }
  const recover = recoverAction(error);
  const choice = await vscode.window.showErrorMessage(message, ...recover, vscode.l10n.t('Show Log'));
  if (choice && choice === recover[0]) await vscode.commands.executeCommand('gatewayImages.recoverImages');
  else if (choice) services.log.show(true);
}

/** "Recover Images" when the failure left paid images or a paid answer in the recovery folder. */
function recoverAction(error: unknown): string[] {
  return error instanceof GatewayError && error.recovered ? [vscode.l10n.t('Recover Images')] : [];
}

/**
 * The paid request may have been charged: say so, and only what is known. The balance is read again
 * and its change shown as information: other spending on the account moves it too, so it cannot tell
 * whether this request was charged. What was paid for comes first (Recover); sending again is offered
 * only when nothing was kept, and its confirmation says that it pays again.
 */
async function showOutcomeUnknown(
  services: Services,
  error: GatewayError,
  retry?: ErrorActions['retry'],
  baseline?: Pick<AccountSnapshot, 'balance' | 'budget'>,
): Promise<void> {
  const change = await services.account.reconcile(baseline).catch(() => undefined);
  const delta = change?.balanceDelta;
  const balance =
    delta === undefined
      ? vscode.l10n.t('The balance could not be read again.')
      : vscode.l10n.t(
          'The balance changed by {0} since before it was sent, but other spending on this account (other windows and agents, top-ups, reservations returned) moves it too: this does not tell whether it was charged.',
          formatRubles(delta, services.locale),
        );
  // An answer that had begun to arrive is charged for: that much is known.
  const text =
    moneyTold(error) === 'charged'
      ? [error.message, vscode.l10n.t('The gateway charged for this request: its answer had begun to arrive.')].join(' ')
      : [
          error.message,
          vscode.l10n.t('The request may have been charged.'),
          balance,
          vscode.l10n.t("It is checked again once the request's deadline has passed, and its history entry keeps what was learned."),
        ].join(' ');
  const recover = recoverAction(error);
  const again = !recover.length && retry ? [vscode.l10n.t('Send Again (Pays Again)…')] : [];
  const account = vscode.l10n.t('Show Account');
  const choice = await vscode.window.showWarningMessage(messageText(text), ...recover, account, ...again, vscode.l10n.t('Show Log'));
  if (choice === vscode.l10n.t('Show Log')) services.log.show(true);
  else if (choice === account) await vscode.commands.executeCommand('gatewayImages.showAccount');
  else if (choice && choice === recover[0]) await vscode.commands.executeCommand('gatewayImages.recoverImages');
  else if (choice && choice === again[0] && retry) await retry(true).catch((e) => showError(services, e));
}

export async function runSetupAction(missing: 'baseUrl' | 'apiKey'): Promise<void> {
  if (missing === 'baseUrl') await vscode.commands.executeCommand('workbench.action.openSettings', 'gatewayImages.baseUrl');
  else await vscode.commands.executeCommand('gatewayImages.setApiKey');
}
