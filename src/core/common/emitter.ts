// A small typed event emitter for the pure modules (the host side uses vscode.EventEmitter).

export interface Disposable {
  dispose(): void;
}

export type Event<T> = (listener: (value: T) => void) => Disposable;

export class Emitter<T> {
  private readonly listeners = new Set<(value: T) => void>();

  /** Subscribes; the returned handle unsubscribes only this subscription. */
  readonly event: Event<T> = (listener) => {
    // Wrapped, so that disposing one subscription never removes another of the same function.
    const entry = (value: T) => listener(value);
    this.listeners.add(entry);
    return { dispose: () => this.listeners.delete(entry) };
  };

  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch {
        // One bad listener must not stop the others.
      }
    }
  }

  dispose(): void {
    this.listeners.clear();
  }
}
