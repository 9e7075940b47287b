// The region editor (issue 41): paint what should change on a workspace image, describe the
// change, and send it; then the result against the original, with Keep, Discard and Edit Again.
// It takes the studio's place while it is open (main.ts hides the form and the gallery).
import type { ModelInfo } from '../../../src/studio/protocol/protocol';
import {
  REGION_MASK_BASE64_MAX,
  type RegionDecidedMessage,
  type RegionDoneMessage,
  type RegionEstimateMessage,
  type RegionImageView,
} from '../../../src/studio/protocol/regionProtocol';
import { el } from '../dom';
import { request, saveRegionState, t } from '../host';
import { keepable, type SavedRegion } from './savedRegion';
import { drawOperation, exportMask, maskHasPixels, replay } from './maskCanvas';
import { brushSizes, MaskHistory, type MaskOperation } from './maskOperations';
import { RegionForm, type RegionProblem } from './regionForm';
import { RegionResult } from './regionResult';
import { RegionStage } from './regionStage';
import { RegionToolbar } from './regionToolbar';

export interface EditorHost {
  /** The editor closed; `status` goes to the studio's status line. */
  closed(status?: { text: string; isError: boolean }): void;
  /** A line for the studio's status (the host's word on a kept result, which comes after closing). */
  studioStatus(text: string, isError: boolean): void;
  /** The studio form's model, the editor's default when it edits. */
  studioModel(): string | undefined;
}

export class RegionEditor {
  readonly element: HTMLElement;
  private readonly heading = el('h2', { id: 'region-heading', class: 'region-heading', tabindex: '-1' });
  private readonly backButton = el('button', { type: 'button', class: 'secondary region-back' }, [t('regionBack')]);
  private readonly status = el('p', { class: 'region-status', role: 'status', 'aria-live': 'polite' });
  private readonly editorView: HTMLElement;
  private readonly toolbar: RegionToolbar;
  private readonly stage: RegionStage;
  private readonly form: RegionForm;
  private readonly result: RegionResult;
  private image: RegionImageView | undefined;
  private history = new MaskHistory(0, 0);
  private busy = false;
  private editId = 0;
  private decisionId = 0;
  /** The original of the result shown (Discard goes back to it). */
  private resultOriginal: RegionImageView | undefined;
  /** The editor as it was before the page was discarded or reloaded: taken up when it opens on that image again. */
  private restoring: SavedRegion | undefined;

  constructor(private readonly host: EditorHost) {
    this.toolbar = new RegionToolbar({
      invert: () => this.add({ kind: 'invert' }, false),
      clear: () => {
        if (this.history.replay().length) this.add({ kind: 'clear' }, false);
      },
      undo: () => this.step(this.history.undo(), 'regionUndone'),
      redo: () => this.step(this.history.redo(), 'regionRedone'),
      changed: () => undefined,
    });
    this.stage = new RegionStage({
      tool: () => this.toolbar.tool,
      brushSize: () => this.toolbar.brushSize,
      add: (operation, drawn) => this.add(operation, drawn),
      say: (sentence) => this.say(sentence, false),
    });
    this.form = new RegionForm(
      () => void this.submit(),
      () => this.save(),
    );
    this.result = new RegionResult({
      keep: (result) => this.decide('keep', result),
      discard: (result) => this.decide('discard', result),
      editAgain: (result) => this.editAgain(result),
    });
    this.backButton.addEventListener('click', () => this.close());
    this.editorView = el('div', { class: 'region-editor-view' }, [
      this.toolbar.element,
      this.stage.element,
      this.form.maskError,
      this.status,
      this.form.element,
    ]);
    this.result.element.hidden = true;
    this.element = el('section', { class: 'region-editor', 'aria-labelledby': this.heading.id, hidden: true }, [
      el('div', { class: 'region-header' }, [this.heading, this.backButton]),
      this.editorView,
      this.result.element,
    ]);
    this.element.addEventListener('keydown', (event) => this.key(event));
    // The tint follows the theme: VS Code changes the body's classes when the theme changes.
    new MutationObserver(() => {
      this.stage.refreshColour();
      if (this.image) replay(this.stage.canvas, this.history.replay(), this.stage.maskColour);
    }).observe(document.body, { attributes: true, attributeFilter: ['class'] });
    this.syncHistory();
  }

  get isOpen(): boolean {
    return !this.element.hidden;
  }

  setModels(models: ModelInfo[]): void {
    this.form.setModels(models, this.host.studioModel());
  }

  /** The editor was open before the page was discarded or reloaded: the next opening on its image takes it up. */
  restoreOnOpen(saved: SavedRegion): void {
    this.restoring = saved;
  }

  /** The saved editor could not be opened again: it is dropped. */
  forgetSaved(): void {
    this.restoring = undefined;
    if (this.element.hidden) saveRegionState(undefined);
  }

  /** Opens the editor on `image`; the painting is kept when it is the same image again. */
  open(image: RegionImageView): void {
    if (this.busy) {
      // A region edit is on its way: its result belongs to the image shown.
      this.say(t('regionBusy'), true);
      return;
    }
    const same = this.image?.path === image.path && this.history.width === image.width && this.history.height === image.height;
    const saved = this.restoring;
    this.restoring = undefined;
    if (saved && saved.path === image.path && saved.width === image.width && saved.height === image.height) {
      this.history = new MaskHistory(image.width, image.height);
      for (const operation of saved.operations) this.history.push(operation);
      this.showImage(image, true);
      this.form.restore(saved);
    } else {
      this.showImage(image, same);
    }
    this.showView('editor');
    this.say('', false);
    this.element.hidden = false;
    this.save();
    this.heading.focus();
  }

  /** The host would not open an image (shown here when the editor is open). */
  refused(message: string): void {
    this.say(message, true);
  }

  estimated(message: RegionEstimateMessage): void {
    this.form.estimated(message);
  }

  done(message: RegionDoneMessage): void {
    if (message.requestId !== this.editId) return;
    this.editId = 0;
    this.setBusy(false);
    if (message.cancelled) {
      this.say(t('regionNotSent'), false);
      return;
    }
    if (!message.ok || !message.original || !message.result) {
      this.say(t('failed', message.error ?? t('unknown')), true);
      return;
    }
    this.resultOriginal = message.original;
    this.result.show({ ...message, original: message.original, result: message.result });
    this.showView('result');
    this.result.heading.focus();
  }

  decided(message: RegionDecidedMessage): void {
    if (message.requestId !== this.decisionId) return;
    this.decisionId = 0;
    this.result.setBusy(false);
    if (message.decision === 'keep') {
      // The editor has closed already: the studio's status line says how it went.
      this.host.studioStatus(message.message, !message.ok);
      return;
    }
    if (!message.ok) {
      this.result.say(message.message, true);
      return;
    }
    // Discarded: back to the same original with the painting, to try again.
    if (this.resultOriginal) this.showImage(this.resultOriginal, true);
    this.showView('editor');
    this.say(message.message, false);
    this.heading.focus();
  }

  close(status?: { text: string; isError: boolean }): void {
    if (this.busy) return;
    this.element.hidden = true;
    saveRegionState(undefined);
    this.host.closed(status);
  }

  // ---- painting -------------------------------------------------------------------------------

  private showImage(image: RegionImageView, keepMask: boolean): void {
    this.image = image;
    this.heading.textContent = t('regionHeading', image.name);
    if (!keepMask || this.history.width !== image.width || this.history.height !== image.height) {
      this.history = new MaskHistory(image.width, image.height);
    }
    this.toolbar.setSizeRange(brushSizes(image.width, image.height), keepMask);
    this.stage.show(image.src, image.name, image.width, image.height);
    replay(this.stage.canvas, this.history.replay(), this.stage.maskColour);
    this.form.setImage(image.path, this.host.studioModel());
    this.form.showProblem('mask', undefined);
    this.syncHistory();
  }

  private add(operation: MaskOperation, drawn: boolean): void {
    if (this.busy) return;
    this.history.push(operation);
    if (!drawn) drawOperation(this.stage.canvas, operation, this.stage.maskColour);
    if (operation.kind === 'invert') this.say(t('regionInverted'), false);
    if (operation.kind === 'clear') this.say(t('regionCleared'), false);
    if (!this.history.isEmpty) this.form.showProblem('mask', undefined);
    this.syncHistory();
  }

  private step(operation: MaskOperation | undefined, sentence: string): void {
    if (!operation) return;
    replay(this.stage.canvas, this.history.replay(), this.stage.maskColour);
    this.say(t(sentence), false);
    this.syncHistory();
  }

  /** Keeps the editor (image, painting, form) in the page's state, for when VS Code discards or reloads the page. */
  private save(): void {
    const image = this.image;
    if (!image || this.element.hidden) return;
    const operations = this.history.operations;
    saveRegionState({
      path: image.path,
      width: image.width,
      height: image.height,
      operations: keepable(operations) ? [...operations] : [],
      ...this.form.rawValues(),
    } satisfies SavedRegion);
  }

  private syncHistory(): void {
    this.save();
    if (!this.busy) this.toolbar.setHistory(this.history.canUndo, this.history.canRedo);
    this.element.dataset.maskCoverage = this.history.coverage;
    this.element.dataset.operations = String(this.history.operations.length);
  }

  private key(event: KeyboardEvent): void {
    if (this.element.hidden || event.defaultPrevented) return;
    if (event.key === 'Escape') {
      // Only the painting closes on Escape: a result waits for Keep, Discard or Back.
      if (this.editorView.hidden) return;
      const target = event.target as HTMLElement | null;
      if (this.stage.drawingRectangle || target?.closest('textarea, input, select')) return;
      event.preventDefault();
      this.close();
      return;
    }
    if (this.editorView.hidden || this.busy) return;
    if (this.toolbar.shortcut(event)) event.preventDefault();
    else if (!(event.target as HTMLElement | null)?.closest('textarea, select, input[type="number"]') && this.stage.zoomShortcut(event)) event.preventDefault();
  }

  // ---- sending --------------------------------------------------------------------------------

  /** The first problem the page can see, shown next to its field (the host checks everything again). */
  private problems(): RegionProblem[] {
    const values = this.form.values();
    const found: RegionProblem[] = [];
    this.form.showProblem('model', values.model ? undefined : t('regionNeedsModel'));
    if (!values.model) found.push('model');
    this.form.showProblem('prompt', values.prompt ? undefined : t('regionNeedsPrompt'));
    if (!values.prompt) found.push('prompt');
    // "some" may still have been erased away: the pixels say.
    const coverage = this.history.coverage;
    const empty = coverage === 'empty' || (coverage === 'some' && !maskHasPixels(this.stage.canvas));
    this.form.showProblem('mask', !values.wholeImage && empty ? t('regionNeedsMask') : undefined);
    if (!values.wholeImage && empty) found.push('mask');
    return found;
  }

  private async submit(): Promise<void> {
    const image = this.image;
    if (this.busy || !image) return;
    const [first] = this.problems();
    if (first) {
      (first === 'model' ? this.form.model : first === 'prompt' ? this.form.prompt : this.stage.canvas).focus();
      return;
    }
    const values = this.form.values();
    this.setBusy(true);
    this.say(t('regionPreparing'), false);
    let maskBase64: string;
    try {
      maskBase64 = await exportMask(this.stage.canvas);
    } catch (error) {
      this.setBusy(false);
      this.say(t('failed', error instanceof Error ? error.message : String(error)), true);
      return;
    }
    if (maskBase64.length > REGION_MASK_BASE64_MAX) {
      this.setBusy(false);
      this.say(t('regionMaskTooLarge'), true);
      return;
    }
    this.editId = request({ type: 'regionEdit', image: image.path, maskBase64, ...values });
    this.say(t('regionWaiting'), false);
  }

  private setBusy(busy: boolean): void {
    this.busy = busy;
    this.toolbar.setBusy(busy);
    this.stage.setDisabled(busy);
    this.form.setBusy(busy);
    this.backButton.disabled = busy;
    this.editorView.setAttribute('aria-busy', String(busy));
    if (!busy) this.syncHistory();
  }

  // ---- the result -----------------------------------------------------------------------------

  private decide(decision: 'keep' | 'discard', result: RegionImageView): void {
    this.result.setBusy(true);
    this.decisionId = request({ type: 'regionDecision', decision, result: result.path });
    if (decision === 'keep') {
      this.result.setBusy(false);
      this.close({ text: t('regionKept', result.name), isError: false });
    }
  }

  /** The result becomes the next original, with the same painting (it has the same size). */
  private editAgain(result: RegionImageView): void {
    this.showImage(result, true);
    this.showView('editor');
    this.say(t('regionEditingAgain', result.name), false);
    this.heading.focus();
  }

  private showView(view: 'editor' | 'result'): void {
    this.editorView.hidden = view !== 'editor';
    this.result.element.hidden = view !== 'result';
    this.heading.hidden = view !== 'editor';
    this.element.dataset.view = view;
  }

  private say(text: string, isError: boolean): void {
    this.status.textContent = text;
    this.status.classList.toggle('error', isError);
  }
}
