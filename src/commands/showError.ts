// Shows any error as a sentence with the action that fixes it. Branches on the error class.
import * as vscode from 'vscode';
import { formatRubles } from '../core/cost';
import { AuthenticationError, GatewayError, NotConfiguredError, RateLimitedError, ValidationError } from '../core/errors';
import type { AccountSnapshot } from '../account/accountModel';
import { type Services } from '../services';

const OUTCOME_SETTLE_MS = 1500;

/**
 * What the one layer that shows an error may offer with it. Lower layers (the job runner) never show
 * errors: they fill this in and throw; the entry point (a command, the studio, a selection command)
 * shows the error once, with these actions.
 */
export interface ErrorActions {
  /** An explicit retry (after an unknown outcome or a local refusal). */
  retry?: () => Promise<void>;
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
  retry?: () => Promise<void>,
  baseline?: Pick<AccountSnapshot, 'balance' | 'budget'>,
): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  services.log.error(message);

  if (error instanceof NotConfiguredError) {
    const action = error.missing === 'baseUrl' ? vscode.l10n.t('Open Settings') : vscode.l10n.t('Set API Key');
    const choice = await vscode.window.showWarningMessage(message, action);
    if (choice) await runSetupAction(error.missing);
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
  if (error instanceof GatewayError && error.outcomeUnknown) {
    await showOutcomeUnknown(services, error, retry, baseline);
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
      await retry().catch((e) => showError(services, e));
    }
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

/** The paid request may have been charged: say so, reconcile at once, and offer an explicit retry. */
async function showOutcomeUnknown(
  services: Services,
  error: GatewayError,
  retry?: () => Promise<void>,
  baseline?: Pick<AccountSnapshot, 'balance' | 'budget'>,
): Promise<void> {
  // Give the gateway a moment to settle: a reservation may still be held just after the break.
  await new Promise((resolve) => setTimeout(resolve, OUTCOME_SETTLE_MS));
  const change = await services.account.reconcile(baseline).catch(() => undefined);
  const delta = change?.balanceDelta;
  // "May have been charged" only while it is unknown; once the balance shows no charge, that alone.
  // Judged against the balance before sending; a rise (a top-up meanwhile) is no charge either.
  const text =
    delta === undefined
      ? vscode.l10n.t('{0} The request may have been charged. The balance could not be read to check.', error.message)
      : delta >= 0
        ? vscode.l10n.t('{0} The balance did not go down: nothing was charged.', error.message)
        : vscode.l10n.t('{0} The request may have been charged. The balance changed by {1}.', error.message, formatRubles(delta, services.locale));
  // What was paid for comes first: recovering it, before paying again.
  const recover = recoverAction(error);
  const actions = [...recover, ...(retry ? [vscode.l10n.t('Try Again…')] : []), vscode.l10n.t('Show Log')];
  const choice = await vscode.window.showWarningMessage(text, ...actions);
  if (choice === vscode.l10n.t('Show Log')) services.log.show(true);
  else if (choice && choice === recover[0]) await vscode.commands.executeCommand('gatewayImages.recoverImages');
  else if (choice && retry) await retry().catch((e) => showError(services, e));
}

export async function runSetupAction(missing: 'baseUrl' | 'apiKey'): Promise<void> {
  if (missing === 'baseUrl') await vscode.commands.executeCommand('workbench.action.openSettings', 'gatewayImages.baseUrl');
  else await vscode.commands.executeCommand('gatewayImages.setApiKey');
}
