// The form: model, prompt, the model's own options, references, the live estimate and Generate.
// Issues and the estimate come from the host (collectIssues, estimateCost on the account's figures).
// Its parts: the round-trip with the host (formEvaluation.ts), the option fields (formOptions.ts),
// the buttons and status line (formActions.ts) and the style's side (formStyle.ts).
import {
  type AccountView,
  type EvaluationMessage,
  type FormField,
  type FormInteraction,
  type FormValues,
  type ModelInfo,
  type ReferenceView,
} from '../../src/studio/protocol/protocol';
import type { StylesView } from '../../src/studio/protocol/styleProtocol';
import { append, el, replaceChildren } from './dom';
import { FormActions } from './formActions';
import { FormEvaluation } from './formEvaluation';
import { FormOptions } from './formOptions';
import { accountLine, modelSummary, renderEstimate, renderProviderParams, renderReferenceList } from './formParts';
import { FormStyle } from './formStyle';
import { post, request, saveForm, t, type SavedForm } from './host';
import { PromptWriter } from './promptWriter';
import { showAspectDefault } from './aspectDefault';
import { attachReferenceInputs } from './references';

export class StudioForm {
  private models: ModelInfo[] = [];
  private references: ReferenceView[] = [];
  private busy = false;
  private form: FormValues;
  private readonly interaction: FormInteraction;

  private readonly model = el('select', { id: 'model' });
  private readonly modelSummary = el('p', { id: 'model-summary', class: 'description' });
  private readonly modelsError = el('p', { class: 'error', role: 'alert', hidden: true });
  private readonly prompt = el('textarea', { id: 'prompt', rows: '5', maxlength: '32000' });
  private readonly options = new FormOptions(
    () => this.form,
    (field) => this.edited(field),
  );
  private readonly params = el('div', { class: 'params' });
  private readonly referenceList = el('ul', { class: 'references' });
  private readonly referenceNote = el('p', { class: 'description' });
  private readonly referenceErrors = el('p', { class: 'error', role: 'alert' });
  private readonly addButton = el('button', { type: 'button', class: 'secondary', id: 'add-references' });
  private readonly estimate = el('dl', { class: 'estimate' });
  private readonly account = el('p', { class: 'description account' });
  private readonly issueList = el('ul', { class: 'issues', id: 'issues' });
  private readonly evaluation = new FormEvaluation(this.estimate, () => ({
    form: this.snapshot(),
    interaction: { edited: [...this.interaction.edited], submitted: this.interaction.submitted },
  }));
  private readonly promptWriter = new PromptWriter(
    (prompt) => {
      this.prompt.value = prompt;
      this.form.prompt = prompt;
      this.edited('prompt');
    },
    () => this.form.style,
  );
  private readonly actions = new FormActions(() => this.send());
  private readonly style = new FormStyle(
    () => this.form,
    (name) => this.pickStyle(name),
    () => this.snapshot(),
  );
  private readonly element: HTMLElement;

  constructor(root: HTMLElement, saved: SavedForm) {
    this.form = saved.form;
    this.style.restart();
    this.interaction = { edited: [...saved.interaction.edited], submitted: saved.interaction.submitted };
    this.element = this.build();
    root.appendChild(this.element);
    this.prompt.value = this.form.prompt;
    this.options.showTexts();
    this.wire(root);
    this.render();
  }

  // ---- updates from the host ------------------------------------------------------------------

  setModels(models: ModelInfo[], error?: string): void {
    this.models = models;
    this.modelsError.hidden = !error;
    this.modelsError.textContent = error ? error : '';
    this.render();
    this.evaluation.soon();
  }

  setAccount(account: AccountView): void {
    this.account.textContent = accountLine(account);
    this.evaluation.soon();
  }

  setEvaluation(message: EvaluationMessage): void {
    if (!this.evaluation.accept(message)) return; // a newer one is on its way
    renderEstimate(this.estimate, message.estimate);
    this.style.evaluated(message);
    replaceChildren(
      this.issueList,
      this.evaluation.issues.map((text) => el('li', {}, [text])),
    );
    showAspectDefault(this.options.aspectRatio, message.aspectDefault);
    this.renderButtons();
    if (this.evaluation.takeDeferredSubmit()) this.send();
  }

  setReferences(views: ReferenceView[]): void {
    this.references = views;
    this.syncReferences();
  }

  addReferences(views: ReferenceView[], rejected: string[]): void {
    for (const view of views) if (!this.references.some((r) => r.path === view.path)) this.references.push(view);
    this.referenceErrors.textContent = rejected.join(' ');
    this.syncReferences();
    this.edited('references');
  }

  setBusy(busy: boolean): void {
    this.busy = busy;
    if (busy) this.setStatus(t('generating'), false);
    this.renderButtons();
  }

  setStatus(text: string, isError: boolean): void {
    this.actions.setStatus(text, isError);
  }

  /** The project's styles, at start and whenever the file changes: fields the person did not set follow the chosen style. */
  setStyles(view: StylesView): void {
    this.style.setView(view);
    this.applyStyle();
    this.changed();
  }

  /** The language model's prompt for the form, or why there is none. */
  promptWritten(prompt: string | undefined, note: string | undefined): void {
    this.promptWriter.written(prompt, note);
  }

  /** "Save as Style…" saved the form: the style now holds its values. */
  styleSaved(name: string): void {
    this.form.style = name;
    this.style.saved();
    this.applyStyle();
    this.changed();
  }

  /**
   * "Regenerate": fill in a past request; the person reviews it and presses Generate. A result made
   * with a style comes with the values the style had then, and no style chosen (it may have changed).
   */
  fill(form: FormValues, references: ReferenceView[], madeWithStyle?: string): void {
    this.form = { ...form, references: references.map((r) => r.path), style: undefined, fromStyle: undefined };
    this.style.restart();
    this.references = references;
    this.prompt.value = form.prompt;
    this.options.showTexts();
    this.render();
    this.syncReferences();
    this.changed(); // kept across a reload, and the estimate follows the filled values
    this.setStatus(madeWithStyle ? t('filledFromStyledResult', madeWithStyle) : t('filledFromHistory'), false);
    this.actions.generateButton.scrollIntoView({ block: 'nearest' });
    this.prompt.focus();
  }

  /** The form as it is now (Compare Models sends it). */
  values(): FormValues {
    return this.snapshot();
  }

  /** "Use this model" from the comparison grid. */
  useModel(model: string): void {
    this.form.model = model;
    this.style.keep('model');
    this.render();
    this.changed();
  }

  private pickStyle(name: string | undefined): void {
    this.form.style = name;
    this.applyStyle();
    this.edited('style');
  }

  /** The chosen style's values into the fields the person has not set. */
  private applyStyle(): void {
    this.style.apply();
    this.prompt.value = this.form.prompt;
    this.options.showTexts();
    this.render();
  }

  // ---- building -------------------------------------------------------------------------------

  private build(): HTMLElement {
    const refresh = el('button', { type: 'button', class: 'icon secondary', 'aria-label': t('refreshModels'), title: t('refreshModels') }, ['⟳']);
    refresh.addEventListener('click', () => post({ type: 'refreshModels' }));
    this.addButton.textContent = t('addReferences');
    this.addButton.addEventListener('click', () => request({ type: 'pickReferences' }));
    this.prompt.placeholder = t('promptPlaceholder');

    return el('section', { class: 'form', 'aria-labelledby': 'form-heading' }, [
      el('h2', { id: 'form-heading' }, [t('formHeading')]),
      this.style.controls.element,
      el('div', { class: 'field' }, [
        el('label', { for: 'model' }, [t('model')]),
        el('div', { class: 'inline' }, [this.model, refresh]),
        this.modelSummary,
        this.modelsError,
      ]),
      el('div', { class: 'field' }, [
        el('label', { for: 'prompt' }, [t('prompt')]),
        this.style.promptWords,
        this.prompt,
        this.promptWriter.element,
        this.style.promptSent,
      ]),
      el('div', { class: 'grid' }, this.options.mainFields()),
      el('details', { class: 'more' }, [el('summary', {}, [t('moreOptions')]), el('div', { class: 'grid' }, this.options.moreFields()), this.params]),
      el('fieldset', { class: 'reference-zone' }, [
        el('legend', {}, [t('references')]),
        el('p', { class: 'description' }, [t('referencesHint')]),
        this.referenceList,
        this.style.styleReferences,
        el('div', { class: 'inline' }, [this.addButton, this.referenceNote]),
        this.referenceErrors,
      ]),
      el('div', { class: 'summary' }, [el('h3', {}, [t('estimate')]), this.estimate, this.account]),
      this.issueList,
      el('div', { class: 'actions' }, [this.actions.generateButton, this.actions.cancelButton]),
      this.actions.status,
    ]);
  }

  private wire(root: HTMLElement): void {
    this.model.addEventListener('change', () => {
      this.form.model = this.model.value;
      this.render();
      this.edited('model');
    });
    this.prompt.addEventListener('input', () => {
      this.form.prompt = this.prompt.value;
      this.edited('prompt');
    });
    attachReferenceInputs(root, (message) => this.setStatus(message, true));
  }

  // ---- rendering ------------------------------------------------------------------------------

  private selected(): ModelInfo | undefined {
    return this.models.find((m) => m.id === this.form.model);
  }

  /** Rebuilds what depends on the chosen model; drops values the model does not offer. */
  private render(): void {
    const current = this.form.model;
    this.model.replaceChildren();
    append(this.model, [el('option', { value: '' }, [this.models.length ? t('modelPlaceholder') : t('noModels')])]);
    for (const m of this.models) append(this.model, [el('option', { value: m.id }, [m.id])]);
    if (current && !this.models.some((m) => m.id === current)) append(this.model, [el('option', { value: current }, [current])]);
    this.model.value = current;

    const model = this.selected();
    this.modelSummary.textContent = model ? modelSummary(model) : '';
    if (model?.description) append(this.modelSummary, [el('br'), model.description]);

    this.options.render(model);
    this.renderParams(model);
    this.syncReferences();
    this.style.render(this.element);
  }

  private renderParams(model: ModelInfo | undefined): void {
    const names = model?.passthrough ?? [];
    if (model) this.form.params = Object.fromEntries(Object.entries(this.form.params).filter(([k]) => names.includes(k)));
    renderProviderParams(this.params, names, this.form.params, (name, value) => {
      if (value.trim()) this.form.params[name] = value;
      else delete this.form.params[name];
      this.edited('params');
    });
  }

  private syncReferences(): void {
    this.form.references = this.references.map((r) => r.path);
    const max = this.selected()?.maxReferences;
    renderReferenceList(this.referenceList, this.references, (removed) => {
      this.references = this.references.filter((r) => r.path !== removed.path);
      this.syncReferences();
      this.edited('references');
    });
    const cannotEdit = max === 0;
    this.referenceNote.textContent = cannotEdit ? t('referencesNotSupported') : max ? t('referencesCount', this.references.length, max) : '';
    this.addButton.disabled = cannotEdit || (max !== undefined && this.references.length >= max);
    this.renderButtons();
  }

  private renderButtons(): void {
    const { evaluated, issues, hint } = this.evaluation;
    this.actions.render({ busy: this.busy, evaluated, reason: issues[0], hint, editing: this.references.length > 0 });
  }

  /** A field was edited by the person: its issues may show from now on. */
  private edited(field: FormField): void {
    if (!this.interaction.edited.includes(field)) this.interaction.edited.push(field);
    // The person's own value from now on: the style no longer decides it.
    this.style.edited(field, this.element);
    this.changed();
  }

  private changed(): void {
    saveForm({ form: this.form, interaction: this.interaction });
    this.evaluation.soon();
  }

  private snapshot(): FormValues {
    return { ...this.form, params: { ...this.form.params }, references: [...this.form.references] };
  }

  private send(): void {
    if (this.busy) return;
    if (!this.evaluation.current()) return; // decided once the evaluation of the latest edit arrives
    if (this.evaluation.issues.length || this.evaluation.hiddenIssues) {
      this.interaction.submitted = true;
      this.changed();
      return;
    }
    this.setBusy(true);
    request({ type: 'generate', form: this.snapshot() });
  }
}
