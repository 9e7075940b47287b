// The form's round-trip with the host: each edit asks again (after a short pause), only the answer
// to the latest question counts, and Generate pressed in between waits for that answer.
import type { EvaluationMessage, FormInteraction, FormValues } from '../../src/studio/protocol/protocol';
import { request, t } from './host';

/** No request has this id (they count from 1). */
const NOT_ASKED = 0;

export class FormEvaluation {
  /** The host's issues with the form, the first of which keeps Generate off. */
  issues: string[] = [];
  /** Issues the host holds back on an untouched form: Generate reveals them instead of sending. */
  hiddenIssues = 0;
  hint: string | undefined;
  /** Generate stays off until the host has checked the form once. */
  evaluated = false;
  private requestId = 0;
  /** An edit whose evaluation has not come back yet: the issues shown may be stale. */
  private pending = false;
  /** Generate was pressed while an evaluation was pending: decide once it arrives. */
  private submitWhenEvaluated = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** `estimate`: the element marked aria-busy while an evaluation is on its way. */
  constructor(
    private readonly estimate: HTMLElement,
    private readonly question: () => { form: FormValues; interaction: FormInteraction },
  ) {}

  soon(): void {
    this.pending = true;
    // The estimate and the issues are being checked again: assistive technology (and a test) can tell.
    this.estimate.setAttribute('aria-busy', 'true');
    // No answer counts until this question is asked: one to an older question arriving within the
    // pause would otherwise pass for current, and a press then would be judged by a form before
    // the edit (and lost, when that form had issues the edit removed).
    this.requestId = NOT_ASKED;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.requestId = request({ type: 'evaluate', ...this.question() });
    }, 120);
  }

  /** Takes the host's answer; false when it answers an older question (a newer one is on its way). */
  accept(message: EvaluationMessage): boolean {
    if (message.requestId !== this.requestId) return false;
    this.evaluated = true;
    this.pending = false;
    this.estimate.setAttribute('aria-busy', 'false');
    this.issues = message.issues.map((i) => i.message);
    this.hiddenIssues = message.hiddenIssues;
    this.hint = message.hint;
    const e = message.estimate;
    if (e?.cannotAfford) this.issues.push(t(e.cannotAfford === 'balance' ? 'cannotAffordBalance' : 'cannotAffordBudget'));
    return true;
  }

  /**
   * Generate was pressed: true when the latest answer is in. Otherwise the press is remembered,
   * since a click right after typing must not be judged by the evaluation of the text before it.
   */
  current(): boolean {
    if (!this.evaluated || this.pending) {
      this.submitWhenEvaluated = true;
      return false;
    }
    return true;
  }

  /** Whether Generate was pressed while the answer just taken was on its way (asked once). */
  takeDeferredSubmit(): boolean {
    const deferred = this.submitWhenEvaluated;
    this.submitWhenEvaluated = false;
    return deferred;
  }
}
