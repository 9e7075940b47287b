// The editor's form under the stage: the model (only those that edit), what should change, the
// feather, the result's format (PNG, or JPEG and what it costs), "send the whole image instead", the estimate (asked of the host, debounced) and Edit
// Region…. The page checks what it can before posting; the host checks everything again.
import type { ModelInfo } from '../../../src/studio/protocol/protocol';
import { LIMITS } from '../../../src/studio/protocol/protocol';
import { REGION_FEATHER_DEFAULT, REGION_FEATHER_MAX, type RegionEstimateMessage, type RegionResultFormat } from '../../../src/studio/protocol/regionProtocol';
import { append, el } from '../dom';
import { request, t } from '../host';

const ESTIMATE_DELAY_MS = 300;

export interface RegionFormValues {
  model: string;
  prompt: string;
  feather: number;
  format: RegionResultFormat;
  wholeImage: boolean;
}

export type RegionProblem = 'model' | 'prompt' | 'mask';

export class RegionForm {
  readonly element: HTMLElement;
  readonly submitButton = el('button', { type: 'button', class: 'region-submit' }, [t('regionSubmit')]);
  readonly model = el('select', { id: 'region-model', class: 'region-model', 'aria-describedby': 'region-model-error' });
  readonly prompt = el('textarea', {
    id: 'region-prompt',
    class: 'region-prompt',
    rows: '3',
    maxlength: String(LIMITS.prompt),
    'aria-describedby': 'region-prompt-error',
  });
  readonly feather = el('input', {
    type: 'number',
    id: 'region-feather',
    class: 'region-feather',
    min: '0',
    max: String(REGION_FEATHER_MAX),
    step: '1',
    'aria-describedby': 'region-feather-hint',
  });
  readonly format = el('select', { id: 'region-format', class: 'region-format' }, [
    el('option', { value: 'png' }, [t('regionFormatPng')]),
    el('option', { value: 'jpeg' }, [t('regionFormatJpeg')]),
  ]);
  readonly wholeImage = el('input', { type: 'checkbox', id: 'region-whole-image', class: 'region-whole-image' });
  private readonly estimate = el('p', { class: 'description region-estimate', 'aria-live': 'polite' });
  private readonly errors: Record<RegionProblem, HTMLElement> = {
    model: el('p', { id: 'region-model-error', class: 'error region-error', hidden: true }),
    prompt: el('p', { id: 'region-prompt-error', class: 'error region-error', hidden: true }),
    mask: el('p', { id: 'region-mask-error', class: 'error region-error region-mask-error', hidden: true }),
  };
  private models: ModelInfo[] = [];
  private image = '';
  private estimateTimer: ReturnType<typeof setTimeout> | undefined;
  private estimateId = 0;

  constructor(
    onSubmit: () => void,
    /** Any value changed (the editor keeps its state). */
    onChange: () => void = () => undefined,
  ) {
    this.feather.value = String(REGION_FEATHER_DEFAULT);
    this.prompt.placeholder = t('regionPromptPlaceholder');
    this.submitButton.addEventListener('click', onSubmit);
    this.model.addEventListener('change', () => {
      // The person's choice: a later opening keeps it rather than the studio form's model.
      this.model.dataset.chosen = 'true';
      this.showProblem('model', undefined);
      this.askEstimate();
    });
    this.prompt.addEventListener('input', () => this.showProblem('prompt', undefined));
    this.wholeImage.addEventListener('change', () => this.showProblem('mask', undefined));
    for (const control of [this.model, this.prompt, this.feather, this.format, this.wholeImage]) {
      control.addEventListener(control === this.prompt ? 'input' : 'change', onChange);
    }
    this.element = el('div', { class: 'region-form' }, [
      el('div', { class: 'field' }, [el('label', { for: this.model.id }, [t('model')]), this.model, this.errors.model]),
      el('div', { class: 'field' }, [el('label', { for: this.prompt.id }, [t('regionPrompt')]), this.prompt, this.errors.prompt]),
      el('div', { class: 'field region-feather-field' }, [
        el('label', { for: this.feather.id }, [t('regionFeather')]),
        this.feather,
        el('p', { id: 'region-feather-hint', class: 'description' }, [t('regionFeatherHint')]),
      ]),
      el('div', { class: 'field region-format-field' }, [el('label', { for: this.format.id }, [t('regionFormat')]), this.format]),
      el('div', { class: 'region-check' }, [this.wholeImage, el('label', { for: this.wholeImage.id }, [t('regionWholeImage')])]),
      this.estimate,
      el('div', { class: 'actions' }, [this.submitButton]),
    ]);
  }

  /** The mask's message goes next to the stage, not in the form. */
  get maskError(): HTMLElement {
    return this.errors.mask;
  }

  /** The models that edit (at least one reference); `preferred` (the studio's choice) when it does, else the current or the first. */
  setModels(models: ModelInfo[], preferred?: string): void {
    const before = this.model.value;
    this.models = models.filter((m) => m.maxReferences >= 1);
    this.model.replaceChildren();
    if (!this.models.length) append(this.model, [el('option', { value: '' }, [t('regionNoModels')])]);
    for (const m of this.models) append(this.model, [el('option', { value: m.id }, [m.id])]);
    const has = (id: string | undefined) => !!id && this.models.some((m) => m.id === id);
    this.model.value = has(before) ? before : has(preferred) ? preferred! : (this.models[0]?.id ?? '');
    if (this.model.value !== before) this.askEstimate();
  }

  /** The editor opened on `image`: its estimate is asked for. */
  setImage(path: string, preferredModel: string | undefined): void {
    this.image = path;
    if (preferredModel && this.models.some((m) => m.id === preferredModel) && !this.model.dataset.chosen) this.model.value = preferredModel;
    this.askEstimate();
  }

  /** The values kept from before the page was discarded or reloaded (a model no longer offered is not taken). */
  restore(values: Omit<RegionFormValues, 'format'> & { format?: RegionResultFormat }): void {
    if (this.models.some((m) => m.id === values.model)) {
      this.model.value = values.model;
      this.model.dataset.chosen = 'true';
    }
    this.prompt.value = values.prompt;
    this.feather.value = String(values.feather);
    this.format.value = values.format ?? 'png';
    this.wholeImage.checked = values.wholeImage;
    this.askEstimate();
  }

  /** As typed (the prompt not trimmed): what is kept for a reload. */
  rawValues(): RegionFormValues {
    return { ...this.values(), prompt: this.prompt.value };
  }

  values(): RegionFormValues {
    const feather = Math.round(Number(this.feather.value));
    return {
      model: this.model.value,
      prompt: this.prompt.value.trim(),
      feather: Number.isFinite(feather) ? Math.min(REGION_FEATHER_MAX, Math.max(0, feather)) : REGION_FEATHER_DEFAULT,
      format: this.format.value === 'jpeg' ? 'jpeg' : 'png',
      wholeImage: this.wholeImage.checked,
    };
  }

  /** Shows (or clears) the message of one problem next to its field. */
  showProblem(problem: RegionProblem, message: string | undefined): void {
    const error = this.errors[problem];
    error.hidden = !message;
    error.textContent = message ?? '';
    const field = problem === 'model' ? this.model : problem === 'prompt' ? this.prompt : undefined;
    if (field) {
      if (message) field.setAttribute('aria-invalid', 'true');
      else field.removeAttribute('aria-invalid');
    }
  }

  setBusy(busy: boolean): void {
    for (const control of [this.submitButton, this.model, this.prompt, this.feather, this.format, this.wholeImage]) control.disabled = busy;
    this.element.setAttribute('aria-busy', String(busy));
  }

  /** A reply to `regionEstimate`: only the latest counts. */
  estimated(message: RegionEstimateMessage): void {
    if (message.requestId !== this.estimateId) return;
    const parts = [message.reservationText && t('regionReserved', message.reservationText), message.expectedText && t('regionExpected', message.expectedText)];
    this.estimate.textContent = message.issue ?? (parts.filter(Boolean).join(' · ') || t('regionNoEstimate'));
    this.estimate.classList.toggle('error', !!message.issue);
  }

  private askEstimate(): void {
    clearTimeout(this.estimateTimer);
    if (!this.image || !this.model.value) {
      this.estimateId = 0;
      this.estimate.textContent = '';
      return;
    }
    this.estimate.textContent = t('regionEstimating');
    this.estimate.classList.remove('error');
    this.estimateTimer = setTimeout(() => {
      this.estimateId = request({ type: 'regionEstimate', model: this.model.value, image: this.image });
    }, ESTIMATE_DELAY_MS);
  }
}
