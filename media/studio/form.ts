// The form: model, prompt, the model's own options, references, the live estimate and Generate.
// Issues and the estimate come from the host (collectIssues, estimateCost on the account's figures).
import {
  type AccountView,
  type EvaluationMessage,
  type FormField,
  type FormInteraction,
  type FormValues,
  type ModelInfo,
  type ReferenceView,
  STYLE_FIELDS,
  type StyleField,
} from '../../src/studio/protocol';
import type { StylesView } from '../../src/studio/styleProtocol';
import { append, el, fillSelect, replaceChildren } from './dom';
import { accountLine, modelSummary, renderEstimate, renderProviderParams, renderReferenceList } from './formParts';
import { post, request, saveForm, t, type SavedForm } from './host';
import { PromptWriter } from './promptWriter';
import { showAspectDefault } from './aspectDefault';
import { attachReferenceInputs } from './references';
import { applyStyleValues, markFromStyle, StyleControls, userFields } from './styleControls';

type OptionKey = 'resolution' | 'aspect_ratio' | 'background' | 'quality' | 'output_format';
type TextKey = 'size' | 'seed' | 'output_compression';

export class StudioForm {
  private models: ModelInfo[] = [];
  private references: ReferenceView[] = [];
  private busy = false;
  private issues: string[] = [];
  /** Issues the host holds back on an untouched form: Generate reveals them instead of sending. */
  private hiddenIssues = 0;
  private hint: string | undefined;
  /** The hint shown in the status line by the last render (replaced when the hint goes). */
  private lastHint: string | undefined;
  private form: FormValues;
  private readonly interaction: FormInteraction;
  /** Generate stays off until the host has checked the form once. */
  private evaluated = false;
  private evaluationId = 0;
  /** An edit whose evaluation has not come back yet: the issues shown may be stale. */
  private evaluationPending = false;
  /** Generate was pressed while an evaluation was pending: decide once it arrives. */
  private submitWhenEvaluated = false;
  private evaluateTimer: ReturnType<typeof setTimeout> | undefined;

  private readonly model = el('select', { id: 'model' });
  private readonly modelSummary = el('p', { id: 'model-summary', class: 'description' });
  private readonly modelsError = el('p', { class: 'error', role: 'alert', hidden: true });
  private readonly prompt = el('textarea', { id: 'prompt', rows: '5', maxlength: '32000' });
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
  private readonly params = el('div', { class: 'params' });
  private readonly referenceList = el('ul', { class: 'references' });
  private readonly referenceNote = el('p', { class: 'description' });
  private readonly referenceErrors = el('p', { class: 'error', role: 'alert' });
  private readonly addButton = el('button', { type: 'button', class: 'secondary', id: 'add-references' });
  private readonly estimate = el('dl', { class: 'estimate' });
  private readonly account = el('p', { class: 'description account' });
  private readonly issueList = el('ul', { class: 'issues', id: 'issues' });
  private readonly promptWriter = new PromptWriter(
    (prompt) => {
      this.prompt.value = prompt;
      this.form.prompt = prompt;
      this.edited('prompt');
    },
    () => this.form.style,
  );
  private readonly generateButton = el('button', { type: 'button', id: 'generate', 'aria-describedby': 'issues status' });
  private readonly cancelButton = el('button', { type: 'button', id: 'cancel', class: 'secondary' });
  private readonly status = el('p', { id: 'status', role: 'status', 'aria-live': 'polite' });
  private readonly styleControls = new StyleControls(
    (name) => this.pickStyle(name),
    () => this.snapshot(),
  );
  /** The style's words around the prompt, and the prompt as it will be sent. */
  private readonly promptWords = el('p', { id: 'prompt-words', class: 'description' });
  private readonly promptSent = el('p', { id: 'prompt-sent', class: 'description' });
  private readonly styleReferences = el('p', { id: 'style-references', class: 'description' });
  private readonly element: HTMLElement;
  /** Style fields the person set themselves: a style does not overwrite them. */
  private userSet: Set<StyleField>;
  private styleNotes: string[] = [];

  constructor(root: HTMLElement, saved: SavedForm) {
    this.form = saved.form;
    this.userSet = userFields(saved.form);
    this.interaction = { edited: [...saved.interaction.edited], submitted: saved.interaction.submitted };
    this.element = this.build();
    root.appendChild(this.element);
    this.prompt.value = this.form.prompt;
    for (const key of Object.keys(this.texts) as TextKey[]) this.texts[key].value = this.form[key] ?? '';
    this.wire(root);
    this.render();
  }

  // ---- updates from the host ------------------------------------------------------------------

  setModels(models: ModelInfo[], error?: string): void {
    this.models = models;
    this.modelsError.hidden = !error;
    this.modelsError.textContent = error ? error : '';
    this.render();
    this.evaluateSoon();
  }

  setAccount(account: AccountView): void {
    this.account.textContent = accountLine(account);
    this.evaluateSoon();
  }

  setEvaluation(message: EvaluationMessage): void {
    if (message.requestId !== this.evaluationId) return; // a newer one is on its way
    this.evaluated = true;
    this.evaluationPending = false;
    this.estimate.setAttribute('aria-busy', 'false');
    this.issues = message.issues.map((i) => i.message);
    this.hiddenIssues = message.hiddenIssues;
    this.hint = message.hint;
    const e = message.estimate;
    if (e?.cannotAfford) this.issues.push(t(e.cannotAfford === 'balance' ? 'cannotAffordBalance' : 'cannotAffordBudget'));
    renderEstimate(this.estimate, e);
    this.promptSent.textContent = message.promptSent ? t('promptSent', message.promptSent) : '';
    this.styleNotes = message.styleNotes ?? [];
    this.styleControls.render(this.form.style, this.styleNotes);
    replaceChildren(
      this.issueList,
      this.issues.map((text) => el('li', {}, [text])),
    );
    showAspectDefault(this.selects.aspect_ratio, message.aspectDefault);
    this.renderButtons();
    if (this.submitWhenEvaluated) {
      this.submitWhenEvaluated = false;
      this.send();
    }
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
    this.status.textContent = text;
    this.status.classList.toggle('error', isError);
  }

  /** The project's styles, at start and whenever the file changes: fields the person did not set follow the chosen style. */
  setStyles(view: StylesView): void {
    this.styleControls.setView(view);
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
    this.userSet.clear();
    this.applyStyle();
    this.changed();
  }

  /**
   * "Regenerate": fill in a past request; the person reviews it and presses Generate. A result made
   * with a style comes with the values the style had then, and no style chosen (it may have changed).
   */
  fill(form: FormValues, references: ReferenceView[], madeWithStyle?: string): void {
    this.form = { ...form, references: references.map((r) => r.path), style: undefined, fromStyle: undefined };
    this.userSet = userFields(this.form);
    this.references = references;
    this.prompt.value = form.prompt;
    for (const key of Object.keys(this.texts) as TextKey[]) this.texts[key].value = form[key] ?? '';
    this.render();
    this.syncReferences();
    this.changed(); // kept across a reload, and the estimate follows the filled values
    this.setStatus(madeWithStyle ? t('filledFromStyledResult', madeWithStyle) : t('filledFromHistory'), false);
    this.generateButton.scrollIntoView({ block: 'nearest' });
    this.prompt.focus();
  }

  /** The form as it is now (Compare Models sends it). */
  values(): FormValues {
    return this.snapshot();
  }

  /** "Use this model" from the comparison grid. */
  useModel(model: string): void {
    this.form.model = model;
    this.userSet.add('model');
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
    applyStyleValues(this.form, this.styleControls.find(this.form.style), this.userSet);
    this.prompt.value = this.form.prompt;
    for (const key of Object.keys(this.texts) as TextKey[]) this.texts[key].value = this.form[key] ?? '';
    this.render();
  }

  // ---- building -------------------------------------------------------------------------------

  private build(): HTMLElement {
    const field = (id: string, labelKey: string, control: HTMLElement, extra?: Node) =>
      el('div', { class: 'field' }, [el('label', { for: id }, [t(labelKey)]), control, extra]);
    const rows = (keys: OptionKey[], labels: string[]) => keys.map((key, i) => (this.selectRows[key] = field(key, labels[i] ?? key, this.selects[key])));

    const refresh = el('button', { type: 'button', class: 'icon secondary', 'aria-label': t('refreshModels'), title: t('refreshModels') }, ['⟳']);
    refresh.addEventListener('click', () => post({ type: 'refreshModels' }));
    this.addButton.textContent = t('addReferences');
    this.addButton.addEventListener('click', () => request({ type: 'pickReferences' }));
    this.generateButton.addEventListener('click', () => this.send());
    this.cancelButton.textContent = t('cancel');
    this.cancelButton.addEventListener('click', () => post({ type: 'cancel' }));
    this.prompt.placeholder = t('promptPlaceholder');
    this.texts.size.placeholder = t('sizePlaceholder');
    this.texts.seed.placeholder = t('seedPlaceholder');

    return el('section', { class: 'form', 'aria-labelledby': 'form-heading' }, [
      el('h2', { id: 'form-heading' }, [t('formHeading')]),
      this.styleControls.element,
      el('div', { class: 'field' }, [
        el('label', { for: 'model' }, [t('model')]),
        el('div', { class: 'inline' }, [this.model, refresh]),
        this.modelSummary,
        this.modelsError,
      ]),
      el('div', { class: 'field' }, [el('label', { for: 'prompt' }, [t('prompt')]), this.promptWords, this.prompt, this.promptWriter.element, this.promptSent]),
      el('div', { class: 'grid' }, [
        field('n', 'count', this.count),
        ...rows(['resolution', 'aspect_ratio', 'background'], ['resolution', 'aspectRatio', 'background']),
      ]),
      el('details', { class: 'more' }, [
        el('summary', {}, [t('moreOptions')]),
        el('div', { class: 'grid' }, [
          ...rows(['quality', 'output_format'], ['quality', 'format']),
          field('size', 'size', this.texts.size),
          field('seed', 'seed', this.texts.seed, this.seedNote),
          field('output_compression', 'compression', this.texts.output_compression),
        ]),
        this.params,
      ]),
      el('fieldset', { class: 'reference-zone' }, [
        el('legend', {}, [t('references')]),
        el('p', { class: 'description' }, [t('referencesHint')]),
        this.referenceList,
        this.styleReferences,
        el('div', { class: 'inline' }, [this.addButton, this.referenceNote]),
        this.referenceErrors,
      ]),
      el('div', { class: 'summary' }, [el('h3', {}, [t('estimate')]), this.estimate, this.account]),
      this.issueList,
      el('div', { class: 'actions' }, [this.generateButton, this.cancelButton]),
      this.status,
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
    this.count.addEventListener('change', () => {
      this.form.n = Number(this.count.value) || 1;
      this.edited('n');
    });
    for (const key of Object.keys(this.selects) as OptionKey[]) {
      this.selects[key].addEventListener('change', () => {
        this.form[key] = this.selects[key].value || undefined;
        this.edited(key);
      });
    }
    for (const key of Object.keys(this.texts) as TextKey[]) {
      this.texts[key].addEventListener('input', () => {
        this.form[key] = this.texts[key].value.trim() ? this.texts[key].value : undefined;
        this.edited(key);
      });
    }
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

    // A style's value the model does not offer is kept and shown: the host names it as the style's problem.
    const fromStyle = (field: StyleField) => !!this.form.fromStyle?.includes(field);
    const maxN = model?.maxN ?? 1;
    if (this.form.n > maxN && model && !fromStyle('n')) this.form.n = maxN;
    fillSelect(
      this.count,
      Array.from({ length: Math.max(maxN, this.form.n) }, (_, i) => String(i + 1)),
      String(this.form.n),
    );

    const lists: Record<OptionKey, string[]> = {
      resolution: model?.resolutions ?? [],
      aspect_ratio: model?.aspectRatios ?? [],
      background: model?.backgrounds ?? [],
      quality: model?.qualities ?? [],
      output_format: model?.formats ?? [],
    };
    for (const key of Object.keys(lists) as OptionKey[]) {
      const value = this.form[key];
      if (model && value !== undefined && !lists[key].includes(value) && !fromStyle(key)) this.form[key] = undefined;
      const values = value !== undefined && !lists[key].includes(value) && fromStyle(key) ? [...lists[key], value] : lists[key];
      fillSelect(this.selects[key], values, this.form[key], t('defaultOption'));
      this.selectRows[key].hidden = values.length === 0;
    }
    this.seedNote.textContent = model && !model.supportsSeed ? t('ignoredByModel') : '';
    this.renderParams(model);
    this.syncReferences();
    this.renderStyle();
  }

  /** What the chosen style adds: its words around the prompt, its references, and which fields show its values. */
  private renderStyle(): void {
    const style = this.styleControls.find(this.form.style);
    this.styleControls.render(this.form.style, this.styleNotes);
    const words = style && (style.promptPrefix || style.promptSuffix) ? [style.promptPrefix, '…', style.promptSuffix].filter(Boolean).join(' ') : '';
    this.promptWords.textContent = words ? t('styleWords', words) : '';
    this.promptWords.hidden = !words;
    if (!style) this.promptSent.textContent = '';
    this.styleReferences.textContent = style?.references.length ? t('styleReferences', style.references.join(', ')) : '';
    this.styleReferences.hidden = !style?.references.length;
    markFromStyle(this.element, this.form.fromStyle);
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
    const reason = this.issues[0];
    this.generateButton.textContent = this.references.length ? t('edit') : t('generate');
    // With issues held back (an untouched form) Generate stays pressable: pressing it shows them.
    this.generateButton.disabled = this.busy || !this.evaluated || !!reason;
    this.cancelButton.disabled = !this.busy;
    const current = this.status.textContent ?? '';
    const ours = current.startsWith(t('disabledBecause', '')) || (this.lastHint !== undefined && current === this.lastHint);
    if (!this.busy && reason) this.setStatus(t('disabledBecause', reason), false);
    else if (!this.busy && this.hint && (ours || !current)) this.setStatus(this.hint, false);
    else if (!this.busy && ours) this.setStatus('', false);
    this.lastHint = this.hint;
  }

  /** A field was edited by the person: its issues may show from now on. */
  private edited(field: FormField): void {
    if (!this.interaction.edited.includes(field)) this.interaction.edited.push(field);
    // The person's own value from now on: the style no longer decides it.
    if ((STYLE_FIELDS as readonly string[]).includes(field)) {
      this.userSet.add(field as StyleField);
      if (this.form.fromStyle) this.form.fromStyle = this.form.fromStyle.filter((f) => f !== field);
      markFromStyle(this.element, this.form.fromStyle);
    }
    this.changed();
  }

  private changed(): void {
    saveForm({ form: this.form, interaction: this.interaction });
    this.evaluateSoon();
  }

  private evaluateSoon(): void {
    this.evaluationPending = true;
    // The estimate and the issues are being checked again: assistive technology (and a test) can tell.
    this.estimate.setAttribute('aria-busy', 'true');
    if (this.evaluateTimer) clearTimeout(this.evaluateTimer);
    this.evaluateTimer = setTimeout(() => {
      this.evaluationId = request({
        type: 'evaluate',
        form: this.snapshot(),
        interaction: { edited: [...this.interaction.edited], submitted: this.interaction.submitted },
      });
    }, 120);
  }

  private snapshot(): FormValues {
    return { ...this.form, params: { ...this.form.params }, references: [...this.form.references] };
  }

  private send(): void {
    if (this.busy) return;
    // A click right after typing must not be judged by the evaluation of the text before it.
    if (!this.evaluated || this.evaluationPending) {
      this.submitWhenEvaluated = true;
      return;
    }
    if (this.issues.length || this.hiddenIssues) {
      this.interaction.submitted = true;
      this.changed();
      return;
    }
    this.setBusy(true);
    request({ type: 'generate', form: this.snapshot() });
  }
}
