// The status bar item (src/account/statusBar.ts) as VS Code holds it: text, colours and command per
// account state, the low-balance setting, and the refresh schedule. A status bar of its own, fed
// snapshots by the test: the extension's item and account are left alone.
import * as assert from 'assert';
import * as vscode from 'vscode';
import type { AccountModel, AccountSnapshot } from '../../src/account/accountModel';
import { AccountStatusBar, scheduleAccountRefresh } from '../../src/account/statusBar';
import { waitUntil } from './support';

/** The items created while `create` runs (the real ones, as VS Code returns them). */
function capturingItems<T>(create: () => T): { value: T; items: vscode.StatusBarItem[] } {
  const window = vscode.window as unknown as Record<string, unknown>;
  const original = window.createStatusBarItem as (...args: unknown[]) => vscode.StatusBarItem;
  const items: vscode.StatusBarItem[] = [];
  window.createStatusBarItem = (...args: unknown[]) => {
    const item = original.apply(vscode.window, args);
    items.push(item);
    return item;
  };
  try {
    return { value: create(), items };
  } finally {
    window.createStatusBarItem = original;
  }
}

/** What the status bar reads of the account model: a snapshot and its change event. */
function fakeAccount(snapshot: AccountSnapshot) {
  const listeners = new Set<(s: AccountSnapshot) => void>();
  const refreshes: number[] = [];
  const switches: number[] = [];
  const account = {
    snapshot,
    onDidChange: (listener: (s: AccountSnapshot) => void) => {
      listeners.add(listener);
      return { dispose: () => listeners.delete(listener) };
    },
    set(next: AccountSnapshot) {
      account.snapshot = next;
      for (const l of listeners) l(next);
    },
    refresh: async () => {
      refreshes.push(Date.now());
      return account.snapshot;
    },
    switchIdentity: async () => {
      switches.push(Date.now());
    },
  };
  return { account, model: account as unknown as AccountModel, refreshes, switches };
}

/** A window whose focus the test sets, as VS Code's onDidChangeWindowState reports it. */
function windowFocus(focused: boolean) {
  const changes = new vscode.EventEmitter<vscode.WindowState>();
  return {
    focused,
    onDidChange: changes.event,
    fire(state: vscode.WindowState) {
      this.focused = state.focused;
      changes.fire(state);
    },
    dispose: () => changes.dispose(),
  };
}

const colourOf = (item: vscode.StatusBarItem) => item.backgroundColor?.id;
const commandOf = (item: vscode.StatusBarItem) => (typeof item.command === 'string' ? item.command : item.command?.command);

describe('Status bar item: colours, text and command', function () {
  this.timeout(30_000);
  const config = () => vscode.workspace.getConfiguration('gatewayImages');
  let bar: AccountStatusBar;
  let item: vscode.StatusBarItem;
  let fake: ReturnType<typeof fakeAccount>;
  const now = Date.now();
  const ready = (over: Partial<AccountSnapshot> = {}): AccountSnapshot => ({ status: 'ready', balance: 500, updatedAt: now, ...over });

  before(async () => {
    await config().update('lowBalanceWarning', 100, vscode.ConfigurationTarget.Global);
    fake = fakeAccount(ready());
    const made = capturingItems(() => new AccountStatusBar(fake.model, 'en'));
    bar = made.value;
    assert.strictEqual(made.items.length, 1, 'one status bar item');
    item = made.items[0]!;
  });

  after(async () => {
    bar.dispose();
    await config().update('lowBalanceWarning', undefined, vscode.ConfigurationTarget.Global);
  });

  it('ready with enough money: the figures, no background, the menu on click', () => {
    fake.account.set(ready({ balance: 1234.5, budget: 300, key: { name: 'k', budget: { remaining: 300, initial: 1000 } } }));
    assert.strictEqual(item.text, '₽ 1,234.50 · budget 300.00');
    assert.strictEqual(colourOf(item), undefined);
    assert.strictEqual(commandOf(item), 'gatewayImages.statusMenu');
  });

  it('below gatewayImages.lowBalanceWarning: the warning background; a lower threshold clears it at once', async () => {
    fake.account.set(ready({ balance: 50 }));
    assert.strictEqual(colourOf(item), 'statusBarItem.warningBackground');
    await config().update('lowBalanceWarning', 10, vscode.ConfigurationTarget.Global);
    await waitUntil(() => colourOf(item) === undefined, 5_000, 're-rendered for the new threshold');
    await config().update('lowBalanceWarning', 100, vscode.ConfigurationTarget.Global);
    await waitUntil(() => colourOf(item) === 'statusBarItem.warningBackground', 5_000, 'warning again');
  });

  it('a budget under a tenth of its initial amount, or a key expiring within 3 days: the warning background', () => {
    fake.account.set(ready({ budget: 99, key: { name: 'k', budget: { remaining: 99, initial: 1000 } } }));
    assert.strictEqual(colourOf(item), 'statusBarItem.warningBackground', 'budget low');
    fake.account.set(ready({ key: { name: 'k', expires_in_seconds: 2 * 86_400 } }));
    assert.strictEqual(colourOf(item), 'statusBarItem.warningBackground', 'expiring');
    fake.account.set(ready({ key: { name: 'k', expires_in_seconds: 30 * 86_400 } }));
    assert.strictEqual(colourOf(item), undefined, 'far from expiry');
  });

  it('a rejected or expired key: the error background, and a click sets a key', () => {
    for (const status of ['invalid-key', 'expired-key'] as const) {
      fake.account.set({ status, error: { kind: 'authentication', message: 'rejected', outcomeUnknown: false } });
      assert.strictEqual(colourOf(item), 'statusBarItem.errorBackground', status);
      assert.strictEqual(commandOf(item), 'gatewayImages.setApiKey', status);
      assert.match(item.text, status === 'expired-key' ? /API key expired/ : /API key rejected/);
    }
  });

  it('offline: the warning background, the last figures kept', () => {
    fake.account.set({ status: 'offline', balance: 777, updatedAt: now, error: { kind: 'connection', message: 'ECONNREFUSED', outcomeUnknown: false } });
    assert.strictEqual(colourOf(item), 'statusBarItem.warningBackground');
    assert.match(item.text, /\$\(cloud-offline\) ₽ 777\.00/);
    fake.account.set({ status: 'offline' });
    assert.match(item.text, /Gateway offline/);
  });

  it('not set up: no background; the click opens what is missing', () => {
    fake.account.set({ status: 'no-key' });
    assert.strictEqual(colourOf(item), undefined);
    assert.strictEqual(commandOf(item), 'gatewayImages.setApiKey');
    fake.account.set({ status: 'no-url' });
    assert.strictEqual(colourOf(item), undefined);
    assert.strictEqual(commandOf(item), 'workbench.action.openSettings');
    fake.account.set({ status: 'loading' });
    assert.match(item.text, /sync~spin/);
    assert.strictEqual(colourOf(item), undefined);
  });
});

describe('Account refresh schedule (scheduleAccountRefresh)', function () {
  this.timeout(30_000);
  const config = () => vscode.workspace.getConfiguration('gatewayImages');

  after(async () => {
    await config().update('balanceRefreshMinutes', undefined, vscode.ConfigurationTarget.Global);
  });

  it('reads once right after activation, not during it', async () => {
    const fake = fakeAccount({ status: 'loading' });
    const keys = new vscode.EventEmitter<void>();
    const schedule = scheduleAccountRefresh(fake.model, keys.event);
    try {
      assert.strictEqual(fake.refreshes.length, 0, 'refreshed synchronously inside activate()');
      await waitUntil(() => fake.refreshes.length >= 1, 5_000, 'the first refresh');
    } finally {
      schedule.dispose();
      keys.dispose();
    }
  });

  it('a key change drops the old figures (switchIdentity)', async () => {
    const fake = fakeAccount({ status: 'ready', balance: 1, updatedAt: Date.now() });
    const keys = new vscode.EventEmitter<void>();
    const schedule = scheduleAccountRefresh(fake.model, keys.event);
    try {
      keys.fire();
      await waitUntil(() => fake.switches.length === 1, 5_000, 'switchIdentity after a key change');
    } finally {
      schedule.dispose();
      keys.dispose();
    }
  });

  it('refreshes on the gatewayImages.balanceRefreshMinutes timer while focused, and stops on dispose', async function () {
    const fake = fakeAccount({ status: 'ready', balance: 1, updatedAt: Date.now() });
    const keys = new vscode.EventEmitter<void>();
    const window = windowFocus(true);
    const schedule = scheduleAccountRefresh(fake.model, keys.event, window);
    try {
      await waitUntil(() => fake.refreshes.length >= 1, 5_000, 'the first refresh');
      // 0.005 minutes = 300 ms: the change restarts the timer with the new period.
      await config().update('balanceRefreshMinutes', 0.005, vscode.ConfigurationTarget.Global);
      const from = fake.refreshes.length;
      await waitUntil(() => fake.refreshes.length >= from + 3, 10_000, 'three timer refreshes');
      const times = fake.refreshes.slice(-3);
      assert.ok(times[2]! - times[0]! >= 400, `refreshes too close together: ${times.join(', ')}`);
      // Disposed: no more refreshes, measured against another schedule with the same period.
      schedule.dispose();
      const stopped = fake.refreshes.length;
      const probe = fakeAccount({ status: 'ready', balance: 1, updatedAt: Date.now() });
      const second = scheduleAccountRefresh(probe.model, keys.event, window);
      try {
        await waitUntil(() => probe.refreshes.length >= 4, 10_000, 'the probe timer');
      } finally {
        second.dispose();
      }
      assert.strictEqual(fake.refreshes.length, stopped, 'refreshed after dispose');
    } finally {
      schedule.dispose();
      keys.dispose();
      window.dispose();
    }
  });

  it('only a change of focus moves the schedule: an activity change (active) does not refresh, a return to focus with stale figures does once', async () => {
    // The default period (minutes): no timer refresh comes between. Figures an hour old are stale.
    await config().update('balanceRefreshMinutes', undefined, vscode.ConfigurationTarget.Global);
    const fake = fakeAccount({ status: 'ready', balance: 1, updatedAt: Date.now() - 60 * 60_000 });
    const keys = new vscode.EventEmitter<void>();
    const window = windowFocus(true);
    const schedule = scheduleAccountRefresh(fake.model, keys.event, window);
    try {
      await waitUntil(() => fake.refreshes.length >= 1, 5_000, 'the first refresh');
      const after = fake.refreshes.length;
      // VS Code fires this when the window has had no input for a while (and again on input); it is still focused.
      window.fire({ focused: true, active: false });
      window.fire({ focused: true, active: true });
      assert.strictEqual(fake.refreshes.length, after, 'an activity change refreshed the account');
      window.fire({ focused: false, active: false });
      assert.strictEqual(fake.refreshes.length, after, 'losing focus refreshed the account');
      window.fire({ focused: true, active: true });
      assert.strictEqual(fake.refreshes.length, after + 1, 'back in focus with stale figures: one refresh at once');
    } finally {
      schedule.dispose();
      keys.dispose();
      window.dispose();
    }
  });
});
