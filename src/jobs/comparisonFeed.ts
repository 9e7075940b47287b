// The comparison in progress (or the last one), shared by the Compare Models command and the
// studio that shows it as a grid. The studio's Cancel aborts the run through it. No vscode import.
import { Emitter, type Event } from '../core/common/emitter';
import type { CompareEntry } from './compare';

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
  /** A run holds the feed from its claim (before it prepares and confirms) to its release. */
  private claimed = false;
  private readonly changed = new Emitter<ComparisonState>();
  readonly onDidChange: Event<ComparisonState> = this.changed.event;

  get latest(): ComparisonState | undefined {
    return this.state;
  }

  /**
   * Takes the feed for a new run, or says no when a run holds it: checked and taken in one step, so
   * two runs started together cannot both pass (the second would take Cancel All from the first).
   */
  claim(): boolean {
    if (this.claimed) return false;
    this.claimed = true;
    return true;
  }

  /** The claiming run ended (run, refused or not confirmed): the next one may start. */
  release(): void {
    this.claimed = false;
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

  private set(state: ComparisonState): void {
    this.state = state;
    this.changed.fire(state);
  }
}

export const comparisonFeed = new ComparisonFeed();
