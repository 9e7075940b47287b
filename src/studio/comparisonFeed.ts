// The comparison in progress (or the last one), shared by the Compare Models command and the
// studio that shows it as a grid. The studio's Cancel aborts the run through it. No vscode import.
import type { CompareEntry } from '../jobs/compare';

export interface ComparisonState {
  runId: string;
  prompt: string;
  running: boolean;
  estimateText: string;
  entries: readonly CompareEntry[];
}

export class ComparisonFeed {
  private state: ComparisonState | undefined;
  private controller: AbortController | undefined;
  private readonly listeners = new Set<(state: ComparisonState) => void>();

  get latest(): ComparisonState | undefined {
    return this.state;
  }

  get running(): boolean {
    return !!this.state?.running;
  }

  start(state: Omit<ComparisonState, 'running'>, controller: AbortController): void {
    this.controller = controller;
    this.set({ ...state, running: true });
  }

  update(entries: readonly CompareEntry[]): void {
    if (this.state) this.set({ ...this.state, entries });
  }

  finish(entries: readonly CompareEntry[]): void {
    this.controller = undefined;
    if (this.state) this.set({ ...this.state, entries, running: false });
  }

  /** Cancel stops all: models not yet started are never sent, running ones are aborted. */
  cancel(): void {
    this.controller?.abort();
  }

  onDidChange(listener: (state: ComparisonState) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private set(state: ComparisonState): void {
    this.state = state;
    for (const listener of this.listeners) listener(state);
  }
}

export const comparisonFeed = new ComparisonFeed();
