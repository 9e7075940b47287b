// The fence of a prompt-file run: a run may be paused between any two instructions, lose its claim
// meanwhile, and be taken over by a window of another workspace. So right before a line's request
// goes, the run (1) marks the line in flight beside the claim, synced, (2) confirms the claim, and
// only then (3) sends. A window takes the claim over only once it went stale, and reads the marks
// after that: a run whose confirm passed had marked the line before, so the taker holds the line; a
// run whose confirm fails sends nothing more. Its requests already in flight go on to their end
// (their images saved and recorded) and are marked as they end. No vscode import.
import * as l10n from '@vscode/l10n';
import * as path from 'node:path';
import type { BatchLine } from '../../core/requests/batchFile';
import { NotRecordedError } from '../../core/gateway/errors';
import { LeaseLostError } from '../../core/files/lease';
import type { BatchFence, LineOutcome } from './batch';
import type { PaidFailure } from '../jobTypes';
import type { PromptFileClaim, RunOwner } from './promptFileClaim';

/** A run whose claim another window took over: what it did not send, and who holds the file now. */
export interface TakenOver {
  /** Why the claim was lost (the lease's words). */
  why: string;
  /** The run that holds the file now, when it says so. */
  by?: RunOwner;
  /** Lines of this run not sent because of it. */
  notSent: number;
  /** What the user is told. */
  message: string;
}

export class RunFence implements BatchFence {
  /** Lines marked in flight by this run, until they end. */
  private readonly marked = new Set<number>();
  private readonly paid = new Map<number, PaidFailure['charged']>();

  constructor(
    private readonly claim: PromptFileClaim,
    private readonly warn: (message: string) => void,
  ) {}

  /** Before a line is even checked: once the claim is known lost no more lines go (undefined: go on). */
  stopped(line: BatchLine): LineOutcome | undefined {
    return this.claim.lost && takenOverOutcome(line);
  }

  /**
   * RunOptions.beforeRequest: the line marked in flight (synced), then the claim confirmed. Rejects,
   * and nothing is sent, when the mark cannot be written (NotRecordedError) or the claim was lost
   * (LeaseLostError).
   */
  async beforeRequest(line: BatchLine, job: string): Promise<void> {
    try {
      await this.claim.lines.write(line, { state: 'in-flight', job });
    } catch (error) {
      throw new NotRecordedError(
        l10n.t(
          'Not sent: the mark of line {0} could not be written beside the claim of its file ({1}). Nothing was charged.',
          line.line,
          error instanceof Error ? error.message : String(error),
        ),
      );
    }
    this.marked.add(line.line);
    await this.claim.confirm();
  }

  /** A line whose request beforeRequest refused because the claim was lost: not sent, and why. */
  refused(line: BatchLine, error: unknown): LineOutcome | undefined {
    return error instanceof LeaseLostError ? takenOverOutcome(line) : undefined;
  }

  /** A paid failure of a line was recorded: the line ends paid without its images. */
  paidFailure(line: number, charged: PaidFailure['charged']): void {
    this.paid.set(line, charged);
  }

  /** BatchRunOptions.afterLine: a line this run marked in flight ends, and its mark says how. */
  async ended(line: BatchLine, outcome: LineOutcome): Promise<void> {
    if (!this.marked.delete(line.line)) return;
    const charged = this.paid.get(line.line);
    const change =
      outcome.status === 'done'
        ? { state: 'done' as const, files: outcome.files }
        : outcome.status === 'outcome-unknown' || charged !== undefined
          ? {
              state: 'paid-without-images' as const,
              ...(outcome.status === 'outcome-unknown' || charged === 'unknown' ? { outcomeUnknown: true } : {}),
              error: outcome.error ?? '',
            }
          : { state: 'not-charged' as const };
    // Not written: the mark stays in flight, and other windows hold the line (the safe side).
    await this.claim.lines
      .write(line, change)
      .catch((error: unknown) => this.warn(`Line ${line.line}: its end was not marked beside the claim: ${String(error)}`));
  }

  /** After the run: whether its claim was lost while it ran, and what the user is told. */
  async takenOver(promptFile: string, outcomes: readonly LineOutcome[]): Promise<TakenOver | undefined> {
    const lost =
      this.claim.lost ??
      (await this.claim.confirm().then(
        () => undefined,
        (error: unknown) => (error instanceof LeaseLostError ? error : undefined),
      ));
    if (!lost) return undefined;
    const by = await this.claim.holder();
    const notSent = outcomes.filter((o) => o.takenOver).length;
    // Lost as the run ended, every line sent and nobody else running the file: nothing to tell.
    if (!by && !notSent) return undefined;
    const name = path.basename(promptFile);
    const message = by
      ? l10n.t(
          '{0}: this window was paused while it ran the file, and {1} took the run over. Nothing was sent twice: {2} lines were not sent here, and the images already paid here were saved. Run the file again once that run has ended: lines already done are skipped.',
          name,
          by.window,
          notSent,
        )
      : l10n.t(
          '{0}: this window was paused while it ran the file, and lost its claim on it (another window may have taken the run over). Nothing was sent twice: {1} lines were not sent here, and the images already paid here were saved. Run the file again: lines already done are skipped.',
          name,
          notSent,
        );
    return { why: lost.why, ...(by ? { by } : {}), notSent, message };
  }
}

/** A line not sent because the run lost its claim. */
export function takenOverOutcome(line: BatchLine): LineOutcome {
  return {
    line: line.line,
    prompt: line.request.prompt,
    model: line.request.model,
    status: 'not-sent',
    files: [],
    takenOver: true,
    error: l10n.t('not sent: this window was paused, and another window took the run over'),
  };
}
