// Image Studio page: asks the host for its first state (`ready`), then reacts to its messages.
// Untrusted text (prompts, model names, errors) only ever goes into textContent, value or alt.
import type { ToWebviewMessage } from '../../src/studio/protocol/protocol';
import { replaceChildren } from './dom';
import { loadForm, loadRegionState, request, setStrings, t, tn } from './host';
import { StudioForm } from './form';
import { buildGallery } from './gallery';
import { buildComparison, type ComparisonGrid } from './compare';
import { RegionEditor } from './region/regionEditor';
import { LIMITS, type ModelInfo } from '../../src/studio/protocol/protocol';
import { parseSavedRegion } from './region/savedRegion';
import type { RegionImageView } from '../../src/studio/protocol/regionProtocol';

const app = document.getElementById('app')!;
const initialForm = loadForm();
let form: StudioForm | undefined;
let gallery: ReturnType<typeof buildGallery> | undefined;
let comparison: ComparisonGrid | undefined;
let readyId = 0;
let models: ModelInfo[] = [];
let regionEditor: RegionEditor | undefined;
/** An editor asked for before the page was built: opened once it is. */
let pendingRegion: RegionImageView | undefined;
/** Where the focus was when the editor opened: it goes back there when the editor closes. */
let focusBeforeRegion: HTMLElement | undefined;

function openRegionEditor(image: RegionImageView): void {
  if (!regionEditor) return;
  if (!regionEditor.isOpen) {
    const active = document.activeElement;
    focusBeforeRegion = active instanceof HTMLElement && app.contains(active) ? active : undefined;
    // The editor takes the studio's place: the form and the gallery are hidden, not rebuilt.
    for (const child of app.children) if (child !== regionEditor.element) (child as HTMLElement).hidden = true;
  }
  regionEditor.open(image);
}

/** The editor was open when VS Code discarded (hid) or reloaded the page: the host checks its image again and it opens as it was. */
function reopenSavedRegion(editor: RegionEditor): void {
  const saved = parseSavedRegion(loadRegionState(), LIMITS);
  if (!saved) return;
  editor.restoreOnOpen(saved);
  request({ type: 'regionOpen', image: saved.path });
}

function buildRegionEditor(studioForm: StudioForm): RegionEditor {
  const editor = new RegionEditor({
    closed(status) {
      for (const child of app.children) if (child !== editor.element) (child as HTMLElement).hidden = false;
      if (status) studioForm.setStatus(status.text, status.isError);
      const back = focusBeforeRegion?.isConnected ? focusBeforeRegion : document.getElementById('prompt');
      back?.focus();
      focusBeforeRegion = undefined;
    },
    studioStatus: (text, isError) => studioForm.setStatus(text, isError),
    studioModel: () => studioForm.values().model || undefined,
  });
  app.appendChild(editor.element);
  return editor;
}

window.addEventListener('message', (event: MessageEvent<ToWebviewMessage>) => {
  const message = event.data;
  if (!message || typeof message !== 'object') return;
  if (message.type === 'init') {
    if (message.requestId !== readyId) return;
    setStrings(message.strings);
    document.title = t('title');
    gallery = buildGallery();
    replaceChildren(app, []);
    form = new StudioForm(app, initialForm);
    app.appendChild(gallery.section);
    const studioForm = form;
    comparison = buildComparison(
      () => studioForm.values(),
      (model) => studioForm.useModel(model),
    );
    gallery.section.prepend(comparison.section);
    regionEditor = buildRegionEditor(studioForm);
    app.removeAttribute('aria-busy');
    models = message.models;
    form.setModels(message.models, message.modelsError);
    regionEditor.setModels(models);
    if (pendingRegion) openRegionEditor(pendingRegion);
    else reopenSavedRegion(regionEditor);
    pendingRegion = undefined;
    form.setAccount(message.account);
    form.setReferences(message.references);
    form.setStyles(message.styles);
    form.setBusy(message.busy);
    gallery.setFilter(message.galleryFilter);
    gallery.show(message.gallery);
    return;
  }
  if (message.type === 'openRegionEditor' && !regionEditor) {
    pendingRegion = message.image;
    return;
  }
  if (!form || !gallery) return;
  switch (message.type) {
    case 'models':
      models = message.models;
      form.setModels(message.models, message.error);
      regionEditor?.setModels(models);
      break;
    case 'account':
      form.setAccount(message.account);
      break;
    case 'galleryPage':
      // requestId 0: the host read its list again and starts the page over.
      if (message.requestId === 0) gallery.show(message);
      else gallery.page(message);
      break;
    case 'galleryChanged':
      gallery.changed(message);
      break;
    case 'thumbnail':
      gallery.thumbnail(message);
      break;
    case 'evaluation':
      form.setEvaluation(message);
      break;
    case 'referencesAdded':
      form.addReferences(message.references, message.rejected);
      break;
    case 'busy':
      form.setBusy(message.busy);
      break;
    case 'generateDone':
      form.setStatus(
        message.ok ? tn('done', message.files.length, message.files.length, message.costText ?? t('unknown')) : t('failed', message.error ?? ''),
        !message.ok,
      );
      break;
    case 'fillForm':
      form.fill(message.form, message.references, message.madeWithStyle);
      break;
    case 'styles':
      form.setStyles(message.styles);
      break;
    case 'styleSaved':
      form.styleSaved(message.name);
      break;
    case 'promptWritten':
      form.promptWritten(message.prompt, message.note);
      break;
    case 'comparison':
      comparison?.render(message.view);
      break;
    case 'openRegionEditor':
      openRegionEditor(message.image);
      break;
    case 'regionRefused':
      if (regionEditor?.isOpen) regionEditor.refused(message.message);
      else {
        // An editor that cannot open again (its image gone) is not tried at the next reload.
        regionEditor?.forgetSaved();
        form.setStatus(message.message, true);
      }
      break;
    case 'regionEstimate':
      regionEditor?.estimated(message);
      break;
    case 'regionDone':
      regionEditor?.done(message);
      break;
    case 'regionDecided':
      regionEditor?.decided(message);
      break;
  }
});

readyId = request({ type: 'ready', references: initialForm.form.references });
