// Context keys for the Getting Started walkthrough: each step completes when the user has really
// done it (a verified key is stored, an image was generated or edited, the account menu was used).
// "Done once" flags are kept in globalState so the walkthrough stays complete after a restart.
import * as vscode from 'vscode';
import { type ApiKeyStore } from './secrets';

export type OnboardingFlag = 'generatedOnce' | 'editedOnce' | 'statusBarSeen';

const FLAGS: readonly OnboardingFlag[] = ['generatedOnce', 'editedOnce', 'statusBarSeen'];
const stateKey = (flag: OnboardingFlag) => `gatewayImages.onboarding.${flag}`;

let state: vscode.Memento | undefined;

/** Restores the flags and keeps `gatewayImages.hasKey` in step with the key store. */
export function initOnboarding(globalState: vscode.Memento, keys: ApiKeyStore): vscode.Disposable {
  state = globalState;
  for (const flag of FLAGS) {
    if (globalState.get<boolean>(stateKey(flag))) void vscode.commands.executeCommand('setContext', `gatewayImages.${flag}`, true);
  }
  // The key is stored only after the gateway accepted it, so a stored key means step 1 is done.
  const updateHasKey = () =>
    keys.get().then(
      (key) => vscode.commands.executeCommand('setContext', 'gatewayImages.hasKey', !!key),
      () => undefined,
    );
  void updateHasKey();
  const subscription = keys.onDidChange(() => void updateHasKey());
  return new vscode.Disposable(() => {
    subscription.dispose();
    state = undefined;
  });
}

/** Marks a walkthrough step as really done (no-op before activation). */
export function markOnboarding(flag: OnboardingFlag): void {
  if (!state) return;
  void vscode.commands.executeCommand('setContext', `gatewayImages.${flag}`, true);
  if (!state.get<boolean>(stateKey(flag))) void state.update(stateKey(flag), true);
}
