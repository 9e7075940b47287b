// The API key lives only in SecretStorage: never in settings, state, logs or files.
import * as vscode from 'vscode';

const KEY_NAME = 'gatewayImages.apiKey';

export class ApiKeyStore implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when the key is set or cleared, in this window or another. */
  readonly onDidChange = this.changed.event;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly secrets: vscode.SecretStorage) {
    this.subscription = secrets.onDidChange((event) => {
      if (event.key === KEY_NAME) this.changed.fire();
    });
  }

  async get(): Promise<string | undefined> {
    const key = await this.secrets.get(KEY_NAME);
    return key?.trim() || undefined;
  }

  async set(key: string): Promise<void> {
    await this.secrets.store(KEY_NAME, key.trim());
  }

  async clear(): Promise<void> {
    await this.secrets.delete(KEY_NAME);
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}
