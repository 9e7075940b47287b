// The form's option fields: the count, the lists the chosen model offers (resolution, aspect ratio,
// background, quality, format) and the free-text ones (size, seed, compression).
import type { FormField, FormValues, ModelInfo, StyleField } from '../../src/studio/protocol/protocol';
import { el, fillSelect } from './dom';
import { t } from './host';

type OptionKey = 'resolution' | 'aspect_ratio' | 'background' | 'quality' | 'output_format';
type TextKey = 'size' | 'seed' | 'output_compression';

export class FormOptions {
  private readonly count = el('select', { id: 'n' });
  private readonly selects: Record<OptionKey, HTMLSelectElement> = {
    resolution: el('select', { id: 'resolution' }),
    aspect_ratio: el('select', { id: 'aspect_ratio' }),
    background: el('select', { id: 'background' }),
    quality: el('select', { id: 'quality' }),
    output_format: el('select', { id: 'output_format' }),
  };
  private readonly selectRows = {} as Record<OptionKey, HTMLElement>;
  private readonly texts: Record<TextKey, HTMLInputElement> = {
    size: el('input', { id: 'size', type: 'text', maxlength: '40' }),
    seed: el('input', { id: 'seed', type: 'text', inputmode: 'numeric', maxlength: '20' }),
    output_compression: el('input', { id: 'output_compression', type: 'text', inputmode: 'numeric', maxlength: '3' }),
  };
  private readonly seedNote = el('span', { class: 'description' });

  /** `formNow`: the form the fields write into; `edited`: called after the person changed a field. */
  constructor(
    private readonly formNow: () => FormValues,
    edited: (field: FormField) => void,
  ) {
    this.texts.size.placeholder = t('sizePlaceholder');
    this.texts.seed.placeholder = t('seedPlaceholder');
    this.count.addEventListener('change', () => {
      this.formNow().n = Number(this.count.value) || 1;
      edited('n');
    });
    for (const key of Object.keys(this.selects) as OptionKey[]) {
      this.selects[key].addEventListener('change', () => {
        this.formNow()[key] = this.selects[key].value || undefined;
        edited(key);
      });
    }
    for (const key of Object.keys(this.texts) as TextKey[]) {
      this.texts[key].addEventListener('input', () => {
        this.formNow()[key] = this.texts[key].value.trim() ? this.texts[key].value : undefined;
        edited(key);
      });
    }
  }

  /** The aspect ratio's list (the host's default for the model is shown on it). */
  get aspectRatio(): HTMLSelectElement {
    return this.selects.aspect_ratio;
  }

  /** The fields shown at once: count, resolution, aspect ratio, background. */
  mainFields(): HTMLElement[] {
    return [field('n', 'count', this.count), ...this.rows(['resolution', 'aspect_ratio', 'background'], ['resolution', 'aspectRatio', 'background'])];
  }

  /** The fields under "More options". */
  moreFields(): HTMLElement[] {
    return [
      ...this.rows(['quality', 'output_format'], ['quality', 'format']),
      field('size', 'size', this.texts.size),
      field('seed', 'seed', this.texts.seed, this.seedNote),
      field('output_compression', 'compression', this.texts.output_compression),
    ];
  }

  /** The free-text fields take the form's values (the lists follow in render). */
  showTexts(): void {
    const form = this.formNow();
    for (const key of Object.keys(this.texts) as TextKey[]) this.texts[key].value = form[key] ?? '';
  }

  /** Fills the lists with what `model` offers; drops values it does not offer. */
  render(model: ModelInfo | undefined): void {
    const form = this.formNow();
    // A style's value the model does not offer is kept and shown: the host names it as the style's problem.
    const fromStyle = (field: StyleField) => !!form.fromStyle?.includes(field);
    const maxN = model?.maxN ?? 1;
    if (form.n > maxN && model && !fromStyle('n')) form.n = maxN;
    fillSelect(
      this.count,
      Array.from({ length: Math.max(maxN, form.n) }, (_, i) => String(i + 1)),
      String(form.n),
    );

    const lists: Record<OptionKey, string[]> = {
      resolution: model?.resolutions ?? [],
      aspect_ratio: model?.aspectRatios ?? [],
      background: model?.backgrounds ?? [],
      quality: model?.qualities ?? [],
      output_format: model?.formats ?? [],
    };
    for (const key of Object.keys(lists) as OptionKey[]) {
      const value = form[key];
      if (model && value !== undefined && !lists[key].includes(value) && !fromStyle(key)) form[key] = undefined;
      const values = value !== undefined && !lists[key].includes(value) && fromStyle(key) ? [...lists[key], value] : lists[key];
      fillSelect(this.selects[key], values, form[key], t('defaultOption'));
      this.selectRows[key].hidden = values.length === 0;
    }
    this.seedNote.textContent = model && !model.supportsSeed ? t('ignoredByModel') : '';
  }

  private rows(keys: OptionKey[], labels: string[]): HTMLElement[] {
    return keys.map((key, i) => (this.selectRows[key] = field(key, labels[i] ?? key, this.selects[key])));
  }
}

function field(id: string, labelKey: string, control: HTMLElement, extra?: Node): HTMLElement {
  return el('div', { class: 'field' }, [el('label', { for: id }, [t(labelKey)]), control, extra]);
}
