// The studio's style picker: the project's styles (.gateway-images/styles.json), what the chosen one
// sets, and the buttons "Save as Style…" and "Edit Styles". The form (form.ts) fills its fields from
// the chosen style and keeps what the person changes; the host resolves the request.
import { type FormValues, STYLE_FIELDS, type StyleField } from '../../src/studio/protocol/protocol';
import type { StylesView, StyleView } from '../../src/studio/protocol/styleProtocol';
import { el, replaceChildren } from './dom';
import { post, request, t } from './host';

/** The value a style gives a field, as the form holds it; undefined when the style leaves it. */
export function styleValue(style: StyleView | undefined, field: StyleField): string | number | Record<string, string> | undefined {
  if (!style) return undefined;
  if (field === 'model') return style.model;
  if (field === 'params') return Object.keys(style.params).length ? { ...style.params } : undefined;
  const value = style.options[field];
  if (field === 'n') return value === undefined ? undefined : Number(value);
  return value;
}

export class StyleControls {
  readonly element: HTMLElement;
  private view: StylesView = { file: '.gateway-images/styles.json', exists: false, styles: [] };
  private readonly select = el('select', { id: 'style' });
  private readonly summary = el('p', { id: 'style-summary', class: 'description' });
  private readonly notes = el('ul', { id: 'style-notes', class: 'description style-notes' });
  private readonly saveButton = el('button', { type: 'button', class: 'secondary', id: 'save-style' });
  private readonly editButton = el('button', { type: 'button', class: 'secondary', id: 'edit-styles' });

  constructor(onPick: (name: string | undefined) => void, formNow: () => FormValues) {
    this.saveButton.textContent = t('saveAsStyle');
    this.editButton.textContent = t('editStyles');
    this.saveButton.addEventListener('click', () => request({ type: 'saveStyle', form: formNow() }));
    this.editButton.addEventListener('click', () => post({ type: 'editStyles' }));
    this.select.addEventListener('change', () => onPick(this.select.value || undefined));
    this.element = el('div', { class: 'field style-field' }, [
      el('label', { for: 'style' }, [t('style')]),
      el('div', { class: 'inline' }, [this.select, this.saveButton, this.editButton]),
      this.summary,
      this.notes,
    ]);
  }

  setView(view: StylesView): void {
    this.view = view;
  }

  find(name: string | undefined): StyleView | undefined {
    return name === undefined ? undefined : this.view.styles.find((s) => s.name === name);
  }

  /** Draws the picker with `selected` chosen, and what that style sets or why it cannot be used. */
  render(selected: string | undefined, notes: readonly string[] = []): void {
    const none = this.view.exists ? t('noStyle') : this.view.builtIn ? t('builtInStyles', this.view.file) : t('noStylesFile', this.view.file);
    const options = [el('option', { value: '' }, [none])];
    for (const style of this.view.styles) {
      const label = style.error ? `⚠ ${style.name}` : this.view.builtIn ? t('builtInStyle', style.name) : style.name;
      options.push(el('option', { value: style.name }, [label]));
    }
    // A style the file no longer has stays shown (the host then says it is missing).
    if (selected && !this.find(selected)) options.push(el('option', { value: selected }, [`⚠ ${selected}`]));
    replaceChildren(this.select, options);
    this.select.value = selected ?? '';
    const style = this.find(selected);
    const problem = this.view.error ?? style?.error;
    this.summary.classList.toggle('error', !!problem);
    this.summary.textContent = problem ?? (style ? describe(style) : '');
    replaceChildren(
      this.notes,
      notes.map((note) => el('li', {}, [note])),
    );
  }
}

/** "What it is for · model · prefix … suffix · output". */
function describe(style: StyleView): string {
  const words = [style.promptPrefix, '…', style.promptSuffix].filter(Boolean).join(' ');
  return [style.description, style.model, words !== '…' && t('styleWords', words), style.outputText && t('styleOutput', style.outputText)]
    .filter(Boolean)
    .join(' · ');
}

const EMPTY: Partial<Record<StyleField, unknown>> = { model: '', n: 1, params: {} };

/**
 * Fills the fields the person has not set with the style's values (or empties them, for no style);
 * `form.fromStyle` lists the fields the style decides.
 */
export function applyStyleValues(form: FormValues, style: StyleView | undefined, userSet: ReadonlySet<StyleField>): void {
  const fromStyle: StyleField[] = [];
  const fields = form as unknown as Record<string, unknown>;
  for (const field of STYLE_FIELDS) {
    if (userSet.has(field)) continue;
    const value = styleValue(style, field);
    if (value !== undefined) fromStyle.push(field);
    fields[field] = value ?? EMPTY[field];
  }
  form.fromStyle = form.style ? fromStyle : undefined;
}

/** The fields with a value that no style gave: the person's (a form restored after a reload). */
export function userFields(form: FormValues): Set<StyleField> {
  const fields = form as unknown as Record<string, unknown>;
  return new Set(
    STYLE_FIELDS.filter((f) => {
      const value = fields[f];
      const set = f === 'params' ? Object.keys(value as object).length > 0 : f === 'n' ? value !== 1 : value !== undefined && value !== '';
      return set && !form.fromStyle?.includes(f);
    }),
  );
}

/** Marks the rows of the fields that show the style's value (a "style" badge after the label). */
export function markFromStyle(root: HTMLElement, fromStyle: readonly StyleField[] = []): void {
  for (const field of STYLE_FIELDS) {
    const control = root.querySelector(field === 'params' ? '.params' : `#${CSS.escape(field)}`);
    const row = field === 'params' ? control : control?.closest('.field');
    if (!row) continue;
    const marked = fromStyle.includes(field);
    row.classList.toggle('from-style', marked);
    const label = row.querySelector('label, h3');
    let badge = label?.querySelector('.style-badge');
    if (marked && label && !badge) badge = label.appendChild(el('span', { class: 'style-badge' }, [t('fromStyle')]));
    if (badge) (badge as HTMLElement).hidden = !marked;
  }
}
