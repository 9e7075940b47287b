// Context keys for the Getting Started walkthrough: each step completes when the user has really
// done it (a verified key is stored, an image was generated or edited, the account menu was used,
// an image was made with a project style).
// "Done once" flags are kept in globalState so the walkthrough stays complete after a restart.
import * as vscode from 'vscode';
import { type ApiKeyStore } from './secrets';

export type OnboardingFlag = 'generatedOnce' | 'editedOnce' | 'statusBarSeen' | 'styledOnce';
type Step = 'connect' | 'generate' | 'edit' | 'statusBar' | 'styles';

const FLAGS: readonly OnboardingFlag[] = ['generatedOnce', 'editedOnce', 'statusBarSeen', 'styledOnce'];
const STEP_OF: Readonly<Record<OnboardingFlag, Step>> = { generatedOnce: 'generate', editedOnce: 'edit', statusBarSeen: 'statusBar', styledOnce: 'styles' };
const WALKTHROUGH_ID = 'gatewayImages.gettingStarted';
const stateKey = (flag: OnboardingFlag) => `gatewayImages.onboarding.${flag}`;
const markedKey = (step: Step) => `gatewayImages.onboarding.marked.${step}`;

let state: vscode.Memento | undefined;
let extensionId = '';

/** Restores the flags and keeps `gatewayImages.hasKey` in step with the key store. */
export function initOnboarding(globalState: vscode.Memento, keys: ApiKeyStore, id: string): vscode.Disposable {
  state = globalState;
  extensionId = id;
  for (const flag of FLAGS) {
    if (globalState.get<boolean>(stateKey(flag))) void vscode.commands.executeCommand('setContext', `gatewayImages.${flag}`, true);
  }
  // The key is stored only after the gateway accepted it, so a stored key means step 1 is done.
  const updateHasKey = () =>
    keys.get().then(
      (key) => {
        if (key) markStepDone('connect');
        return vscode.commands.executeCommand('setContext', 'gatewayImages.hasKey', !!key);
      },
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
  markStepDone(STEP_OF[flag]);
}

/**
 * Ticks the step in VS Code's own record, once. The context keys alone are not enough: VS Code's
 * walkthrough service starts only when something first needs it, and a step whose context key is
 * already true then never completes (it completes on a change of the key it was there to see).
 * So a key set before the walkthrough was ever opened would leave "Connect" unticked for good.
 */
function markStepDone(step: Step): void {
  if (!state || state.get<boolean>(markedKey(step))) return;
  void state.update(markedKey(step), true);
  void vscode.commands.executeCommand('welcome.markStepComplete', `${extensionId}#${WALKTHROUGH_ID}#${step}`).then(undefined, () => undefined);
}
