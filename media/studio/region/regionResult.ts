// A region edit's result against its original: both in one frame, a slider that reveals the result
// from the left, and a "Show original" toggle for the keyboard. Keep, Discard and Edit Again.
import type { RegionDoneMessage, RegionImageView } from '../../../src/studio/protocol/regionProtocol';
import { el, replaceChildren } from '../dom';
import { t } from '../host';

export interface ResultActions {
  keep: (result: RegionImageView) => void;
  discard: (result: RegionImageView) => void;
  editAgain: (result: RegionImageView) => void;
}

export class RegionResult {
  readonly element: HTMLElement;
  readonly heading = el('h2', { id: 'region-result-heading', class: 'region-result-heading', tabindex: '-1' });
  private readonly original = el('img', { class: 'region-result-original' });
  private readonly result = el('img', { class: 'region-result-image' });
  private readonly reveal = el('div', { class: 'region-result-reveal' });
  private readonly slider = el('input', {
    type: 'range',
    id: 'region-result-slider',
    class: 'region-result-slider',
    min: '0',
    max: '100',
    step: '1',
    value: '50',
  });
  private readonly toggle = el('button', { type: 'button', class: 'secondary region-show-original', 'aria-pressed': 'false' }, [t('regionShowOriginal')]);
  private readonly description = el('p', { class: 'description region-result-description' });
  private readonly notes = el('ul', { class: 'region-result-notes' });
  private readonly keepButton = el('button', { type: 'button', class: 'region-keep' }, [t('regionKeep')]);
  private readonly discardButton = el('button', { type: 'button', class: 'secondary region-discard' }, [t('regionDiscard')]);
  private readonly againButton = el('button', { type: 'button', class: 'secondary region-edit-again' }, [t('regionEditAgain')]);
  readonly status = el('p', { class: 'region-result-status', role: 'status', 'aria-live': 'polite' });
  private shown: RegionImageView | undefined;

  constructor(actions: ResultActions) {
    this.reveal.appendChild(this.result);
    this.slider.addEventListener('input', () => this.showReveal());
    this.toggle.addEventListener('click', () => {
      this.toggle.setAttribute('aria-pressed', String(this.toggle.getAttribute('aria-pressed') !== 'true'));
      this.showReveal();
    });
    const act = (action: (result: RegionImageView) => void) => () => {
      if (this.shown) action(this.shown);
    };
    this.keepButton.addEventListener('click', act(actions.keep));
    this.discardButton.addEventListener('click', act(actions.discard));
    this.againButton.addEventListener('click', act(actions.editAgain));
    this.element = el('section', { class: 'region-result', 'aria-labelledby': this.heading.id }, [
      this.heading,
      el('div', { class: 'region-compare' }, [this.original, this.reveal]),
      el('div', { class: 'region-compare-controls' }, [el('label', { for: this.slider.id }, [t('regionRevealResult')]), this.slider, this.toggle]),
      this.description,
      this.notes,
      el('div', { class: 'actions' }, [this.keepButton, this.discardButton, this.againButton]),
      this.status,
    ]);
  }

  /** A result arrived (`ok`, with its original and result). */
  show(message: RegionDoneMessage & { original: RegionImageView; result: RegionImageView }): void {
    this.shown = message.result;
    this.heading.textContent = t('regionResultHeading', message.result.name);
    this.original.src = message.original.src;
    this.original.alt = t('regionOriginalAlt', message.original.name);
    this.result.src = message.result.src;
    this.result.alt = t('regionResultAlt', message.result.name);
    this.slider.value = '50';
    this.toggle.setAttribute('aria-pressed', 'false');
    this.showReveal();
    const facts = [message.description, message.costText && t('cost', message.costText)].filter(Boolean);
    this.description.textContent = facts.join(' · ');
    replaceChildren(
      this.notes,
      (message.notes ?? []).map((note) => el('li', {}, [note])),
    );
    this.status.textContent = '';
    this.status.classList.remove('error');
    this.setBusy(false);
  }

  setBusy(busy: boolean): void {
    for (const button of [this.keepButton, this.discardButton, this.againButton]) button.disabled = busy;
    this.element.setAttribute('aria-busy', String(busy));
  }

  say(text: string, isError: boolean): void {
    this.status.textContent = text;
    this.status.classList.toggle('error', isError);
  }

  private showReveal(): void {
    const original = this.toggle.getAttribute('aria-pressed') === 'true';
    const value = original ? 0 : Number(this.slider.value);
    // The result covers the original from the left up to the slider's value.
    this.reveal.style.clipPath = `inset(0 ${100 - value}% 0 0)`;
    this.slider.disabled = original;
    this.slider.setAttribute('aria-valuetext', t('regionRevealValue', Number(this.slider.value)));
  }
}
