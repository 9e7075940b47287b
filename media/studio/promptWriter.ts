// "Write a prompt from the active document…": asks the host to have the editor's language model
// write a prompt from the Markdown or HTML editor beside the studio; the prompt goes into the form,
// whose estimate updates as for any prompt typed. A line says who wrote it, or why there is none.
import { el } from './dom';
import { request, t } from './host';

export class PromptWriter {
  readonly element: HTMLElement;
  private readonly button = el('button', { type: 'button', class: 'secondary', id: 'write-prompt' });
  private readonly note = el('span', { id: 'prompt-note', class: 'description', 'aria-live': 'polite' });

  constructor(
    private readonly onPrompt: (prompt: string) => void,
    styleNow: () => string | undefined,
  ) {
    this.button.textContent = t('writePrompt');
    this.button.addEventListener('click', () => {
      this.button.disabled = true;
      this.note.textContent = t('writingPrompt');
      const style = styleNow();
      request({ type: 'writePrompt', ...(style ? { style } : {}) });
    });
    this.element = el('div', { class: 'inline' }, [this.button, this.note]);
  }

  /** The host's answer: the prompt (into the form) and the line to show. */
  written(prompt: string | undefined, note: string | undefined): void {
    this.button.disabled = false;
    this.note.textContent = note ?? '';
    if (prompt) this.onPrompt(prompt);
  }
}
