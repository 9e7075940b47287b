// The form's side of styles: the picker, which fields the person set themselves (a style does not
// overwrite them), and what the chosen style adds around the prompt and to the references.
import { type EvaluationMessage, type FormField, type FormValues, STYLE_FIELDS, type StyleField } from '../../src/studio/protocol/protocol';
import type { StylesView } from '../../src/studio/protocol/styleProtocol';
import { el } from './dom';
import { t } from './host';
import { applyStyleValues, markFromStyle, StyleControls, userFields } from './styleControls';

export class FormStyle {
  readonly controls: StyleControls;
  /** The style's words around the prompt, and the prompt as it will be sent. */
  readonly promptWords = el('p', { id: 'prompt-words', class: 'description' });
  readonly promptSent = el('p', { id: 'prompt-sent', class: 'description' });
  readonly styleReferences = el('p', { id: 'style-references', class: 'description' });
  /** Style fields the person set themselves: a style does not overwrite them. */
  private userSet = new Set<StyleField>();
  private notes: string[] = [];

  constructor(
    private readonly formNow: () => FormValues,
    onPick: (name: string | undefined) => void,
    snapshot: () => FormValues,
  ) {
    this.controls = new StyleControls(onPick, snapshot);
  }

  setView(view: StylesView): void {
    this.controls.setView(view);
  }

  /** A new form (the saved one, or a past request filled in): the fields it sets count as the person's. */
  restart(): void {
    this.userSet = userFields(this.formNow());
  }

  /** The form was saved as the chosen style: every field follows the style again. */
  saved(): void {
    this.userSet.clear();
  }

  /** The person chose this field's value elsewhere (the comparison grid's "Use this model"). */
  keep(field: StyleField): void {
    this.userSet.add(field);
  }

  /** The chosen style's values into the fields the person has not set. */
  apply(): void {
    const form = this.formNow();
    applyStyleValues(form, this.controls.find(form.style), this.userSet);
  }

  /** The person edited a field: a style field is theirs from now on, and no longer marked as the style's. */
  edited(field: FormField, root: HTMLElement): void {
    if (!(STYLE_FIELDS as readonly string[]).includes(field)) return;
    const form = this.formNow();
    this.userSet.add(field as StyleField);
    if (form.fromStyle) form.fromStyle = form.fromStyle.filter((f) => f !== field);
    markFromStyle(root, form.fromStyle);
  }

  /** The host's evaluation: the prompt as it will be sent, and the notes on the chosen style. */
  evaluated(message: EvaluationMessage): void {
    this.promptSent.textContent = message.promptSent ? t('promptSent', message.promptSent) : '';
    this.notes = message.styleNotes ?? [];
    this.controls.render(this.formNow().style, this.notes);
  }

  /** What the chosen style adds: its words around the prompt, its references, and which fields show its values. */
  render(root: HTMLElement): void {
    const form = this.formNow();
    const style = this.controls.find(form.style);
    this.controls.render(form.style, this.notes);
    const words = style && (style.promptPrefix || style.promptSuffix) ? [style.promptPrefix, '…', style.promptSuffix].filter(Boolean).join(' ') : '';
    this.promptWords.textContent = words ? t('styleWords', words) : '';
    this.promptWords.hidden = !words;
    if (!style) this.promptSent.textContent = '';
    this.styleReferences.textContent = style?.references.length ? t('styleReferences', style.references.join(', ')) : '';
    this.styleReferences.hidden = !style?.references.length;
    markFromStyle(root, form.fromStyle);
  }
}
