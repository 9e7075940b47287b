// Generate, Cancel and the status line under them. The status line is shared: progress and results
// come from the host, and the form writes why Generate is off or the host's hint; a message of its
// own is replaced when the reason goes, anything else is left alone.
import { el } from './dom';
import { post, t } from './host';

/** What the buttons show, as the form knows it now. */
export interface ActionState {
  busy: boolean;
  /** The host has checked the form once. */
  evaluated: boolean;
  /** Why Generate is off (the host's first issue), if it is. */
  reason: string | undefined;
  hint: string | undefined;
  /** References are attached: the button says Edit. */
  editing: boolean;
}

export class FormActions {
  readonly generateButton = el('button', { type: 'button', id: 'generate', 'aria-describedby': 'issues status' });
  readonly cancelButton = el('button', { type: 'button', id: 'cancel', class: 'secondary' });
  readonly status = el('p', { id: 'status', role: 'status', 'aria-live': 'polite' });
  /** The hint shown in the status line by the last render (replaced when the hint goes). */
  private lastHint: string | undefined;

  constructor(onGenerate: () => void) {
    this.generateButton.addEventListener('click', onGenerate);
    this.cancelButton.textContent = t('cancel');
    this.cancelButton.addEventListener('click', () => post({ type: 'cancel' }));
  }

  setStatus(text: string, isError: boolean): void {
    this.status.textContent = text;
    this.status.classList.toggle('error', isError);
  }

  render({ busy, evaluated, reason, hint, editing }: ActionState): void {
    this.generateButton.textContent = editing ? t('edit') : t('generate');
    // With issues held back (an untouched form) Generate stays pressable: pressing it shows them.
    this.generateButton.disabled = busy || !evaluated || !!reason;
    this.cancelButton.disabled = !busy;
    const current = this.status.textContent ?? '';
    const ours = current.startsWith(t('disabledBecause', '')) || (this.lastHint !== undefined && current === this.lastHint);
    if (!busy && reason) this.setStatus(t('disabledBecause', reason), false);
    else if (!busy && hint && (ours || !current)) this.setStatus(hint, false);
    else if (!busy && ours) this.setStatus('', false);
    this.lastHint = hint;
  }
}
