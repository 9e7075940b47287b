// Host side of the Image Studio: one panel, restored after reload. It owns no logic of its own:
// generation and editing go through the shared commands (and so the job service), the gallery is
// the history store, the figures are the account model's. Loaded on first open (see index.ts).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { editImage } from '../../commands/images/editImage';
import { generate } from '../../commands/images/generate';
import { type ErrorActions, showError } from '../../commands/common/showError';
import { formatRubles } from '../../core/money/cost';
import type { GenerationRequest } from '../../core/gateway/types';
import { summarizeError } from '../../core/gateway/errors';
import { type Services } from '../../services';
import { allowedRoots, checkReference, pathOfDroppedUri, savePastedImage } from '../model/files';
import { buildHtml, webviewOptions } from './html';
import { type FormValues, type FromWebviewMessage, type ReferenceView, STUDIO_VIEW_TYPE, type ToWebviewMessage } from '../protocol/protocol';
import { runGalleryAction } from '../gallery/galleryActions';
import { describeRejected, parseFromWebviewMessage } from '../protocol/protocolValidation';
import { aspectHint } from '../model/aspectHint';
import { comparisonFeed } from '../../jobs/comparisonFeed';
import { handleCompareMessage, toComparisonView } from '../compare/compareView';
import { foldersOutside } from '../model/shownFolders';
import { studioStrings, studioTitle } from '../model/strings';
import { evaluateForm, formArgs, toAccountView, toFormValues, toModelInfo } from '../model/view';
import { handleStyleMessage, styledForm, stylesView, watchStyles } from './studioStyles';
import { trackSourceEditor, writePromptFromEditor } from './studioPrompt';
import { GalleryFeed, pngDataUrl } from '../gallery/galleryFeed';
import { RegionEditorHost } from '../region/regionEditorHost';

/** A request to show in the form (and its local reference images, for edits). */
export interface StudioFill {
  request: GenerationRequest;
  references: string[];
  /** The style the result was made with: the form holds the values it resolved to then, with no style chosen. */
  madeWithStyle?: string;
}

export class StudioPanel {
  private static current: StudioPanel | undefined;

  /** Opens the studio, or reveals the one that is open. */
  static show(services: Services): void {
    if (StudioPanel.current) {
      StudioPanel.current.panel.reveal();
      return;
    }
    const panel = vscode.window.createWebviewPanel(STUDIO_VIEW_TYPE, studioTitle(), vscode.ViewColumn.Active, {
      ...webviewOptions(),
      retainContextWhenHidden: false,
    });
    StudioPanel.current = new StudioPanel(panel, services);
  }

  /** Opens (or reveals) the studio with the form filled from a request ("regenerate"); nothing is sent. */
  static showWith(services: Services, fill: StudioFill): void {
    StudioPanel.show(services);
    const panel = StudioPanel.current!;
    panel.pendingFill = fill;
    // A page that is ready gets it now; a page still loading (or reloading after reveal) on `ready`.
    if (panel.pageReady) void panel.flushFill();
  }

  /** Opens (or reveals) the studio with its region editor on `file` (Edit Image with AI…'s "Change only a region…"). */
  static showRegionEditor(services: Services, file: string): void {
    StudioPanel.show(services);
    const panel = StudioPanel.current!;
    panel.pendingRegion = file;
    if (panel.pageReady) void panel.flushFill();
  }

  /** A panel VS Code restored after a window reload. */
  static revive(panel: vscode.WebviewPanel, services: Services): void {
    StudioPanel.current?.panel.dispose();
    StudioPanel.current = new StudioPanel(panel, services);
  }

  private readonly disposables: vscode.Disposable[] = [];
  /** Posting starts when the page asks (`ready`) and stops while it is hidden (it is discarded). */
  private pageReady = false;
  private running: AbortController | undefined;
  private pendingFill: StudioFill | undefined;
  /** An image to open the region editor on once the page is ready. */
  private pendingRegion: string | undefined;
  private readonly region: RegionEditorHost;
  /** Folders outside the workspace whose images the page shows: the only ones outside it the webview may load. */
  private shownFolders: string[] = [];
  private readonly gallery: GalleryFeed;

  private constructor(
    private readonly panel: vscode.WebviewPanel,
    private readonly services: Services,
  ) {
    const { webview } = panel;
    const extensionUri = services.context.extensionUri;
    this.allowShownFolders(true);
    panel.title = studioTitle();
    webview.html = buildHtml(webview, extensionUri, studioTitle(), vscode.l10n.t('Loading…'));
    this.gallery = new GalleryFeed(services, (message) => this.post(message));
    this.region = new RegionEditorHost(services, { post: (message) => this.post(message), src: (file) => this.src(file) });
    this.disposables.push(
      this.gallery,
      trackSourceEditor(),
      webview.onDidReceiveMessage((raw: unknown) => this.receive(raw)),
      panel.onDidChangeViewState(() => {
        // Hidden, the page is discarded; shown again, it loads anew.
        if (!panel.visible) this.pageReady = false;
        else if (!this.pageReady) this.gallery.pageLoading();
      }),
      panel.onDidDispose(() => this.dispose()),
      disposable(services.account.onDidChange((snapshot) => this.post({ type: 'account', account: toAccountView(snapshot, services.locale) }))),
      disposable(
        services.catalog.onDidChange(() => {
          this.postModels();
          // The built-in styles are resolved against the catalog.
          void this.postStyles();
        }),
      ),
      disposable(
        comparisonFeed.onDidChange(() => {
          this.allowShownFolders();
          this.postComparison();
        }),
      ),
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.allowShownFolders(true)),
      watchStyles(() => void this.postStyles()),
    );
  }

  private async postStyles(): Promise<void> {
    if (this.pageReady) this.post({ type: 'styles', styles: await stylesView(this.services) });
  }

  /**
   * Lets the webview load exactly the folders outside the workspace whose images it shows (the
   * gallery's and the comparison's: an absolute output folder, the recovery folder). New roots
   * reload the page, so they are set only when they change (`always`: the workspace folders did).
   */
  /**
   * The gallery shows thumbnails from their cache; the comparison grid shows its files where they
   * are (an absolute output folder, the recovery folder): exactly those folders are allowed.
   */
  private allowShownFolders(always = false): void {
    const files = comparisonFeed.latest?.entries.flatMap((entry) => entry.files) ?? [];
    const folders = foldersOutside(files, allowedRoots());
    if (!always && folders.join('\n') === this.shownFolders.join('\n')) return;
    this.shownFolders = folders;
    this.panel.webview.options = webviewOptions(folders);
  }

  private dispose(): void {
    // A running job is not aborted: it was paid for, so it finishes and saves its files.
    if (StudioPanel.current === this) StudioPanel.current = undefined;
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  private post(message: ToWebviewMessage): void {
    if (this.pageReady) void this.panel.webview.postMessage(message);
  }

  private receive(raw: unknown): void {
    const message = parseFromWebviewMessage(raw);
    if (!message) {
      this.services.log.warn(`Image Studio: ignored an invalid message from the page (${describeRejected(raw)})`);
      return;
    }
    this.handle(message).catch((error) => this.services.log.error(`Image Studio: ${summarizeError(error).message}`));
  }

  private async handle(message: FromWebviewMessage): Promise<void> {
    const { services } = this;
    switch (message.type) {
      case 'ready': {
        this.pageReady = true;
        const models = services.catalog.peek();
        const { views } = await this.referenceViews(message.references);
        const gallery = await this.gallery.firstPage();
        this.post({
          type: 'init',
          requestId: message.requestId,
          strings: studioStrings(),
          models: models.map((m) => toModelInfo(m, services.locale)),
          account: toAccountView(services.account.snapshot, services.locale),
          gallery,
          galleryFilter: this.gallery.filterText,
          references: views,
          busy: !!this.running,
          styles: await stylesView(this.services),
        });
        await this.flushFill();
        this.postComparison();
        // Cached models are shown at once; a missing or stale catalog is fetched in the background.
        // (A fetched catalog arrives through catalog.onDidChange.)
        services.catalog.get().catch((error) => this.post({ type: 'models', models: [], error: summarizeError(error).message }));
        return;
      }
      case 'evaluate': {
        const evaluation = evaluateForm(
          message.form,
          services.catalog.peek(),
          services.account.snapshot,
          services.locale,
          message.requestId,
          message.interaction,
          await styledForm(services, message.form, message.form.references),
        );
        const aspectDefault = await aspectHint(message.form, services.catalog.peek());
        this.post(aspectDefault ? { ...evaluation, aspectDefault } : evaluation);
        return;
      }
      case 'generate':
        return this.generate(message.requestId, message.form);
      case 'cancel':
        this.running?.abort();
        this.region.cancel();
        return;
      case 'refreshModels':
        await services.catalog.refresh().catch((error) => this.post({ type: 'models', models: [], error: summarizeError(error).message }));
        return;
      case 'pickReferences': {
        const picked = await vscode.window.showOpenDialog({
          canSelectMany: true,
          filters: { [vscode.l10n.t('Images')]: ['png', 'jpg', 'jpeg', 'webp'] },
          openLabel: vscode.l10n.t('Add'),
          defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
        });
        await this.addReferences(
          message.requestId,
          (picked ?? []).map((u) => u.fsPath),
        );
        return;
      }
      case 'dropUris': {
        const paths = message.uris.map(pathOfDroppedUri).filter((p): p is string => !!p);
        await this.addReferences(message.requestId, paths);
        return;
      }
      case 'pasteImage': {
        try {
          const file = await savePastedImage(Buffer.from(message.base64, 'base64'), message.mediaType);
          await this.addReferences(message.requestId, [file]);
        } catch (error) {
          this.post({ type: 'referencesAdded', requestId: message.requestId, references: [], rejected: [summarizeError(error).message] });
        }
        return;
      }
      case 'galleryAction':
        return runGalleryAction(this.services, message, {
          addReferences: (requestId, paths) => this.addReferences(requestId, paths),
          fillForm: (request, references, madeWithStyle) => this.fillForm(request, references, madeWithStyle),
          editRegion: (file) => this.region.open(file),
        });
      case 'regionOpen':
      case 'regionEstimate':
      case 'regionEdit':
      case 'regionDecision':
        return this.region.handle(message);
      case 'galleryPage':
        return this.gallery.page(message);
      case 'thumbnails':
        return this.gallery.thumbnails(message);
      case 'galleryShown':
        return this.gallery.shown(message);
      case 'galleryFilter':
        return this.gallery.setFilter(message.query);
      case 'compare':
      case 'cancelCompare':
      case 'useModel':
        return handleCompareMessage(services, message);
      case 'saveStyle': {
        const name = await handleStyleMessage(services, message);
        if (name) {
          await this.postStyles();
          this.post({ type: 'styleSaved', requestId: message.requestId, name });
        }
        return;
      }
      case 'editStyles':
        await handleStyleMessage(services, message);
        return;
      case 'writePrompt':
        this.post({ type: 'promptWritten', requestId: message.requestId, ...(await writePromptFromEditor(services, message.style)) });
        return;
    }
  }

  private async generate(requestId: number, form: FormValues): Promise<void> {
    const { services } = this;
    if (this.running) {
      this.post({ type: 'generateDone', requestId, ok: false, files: [], error: vscode.l10n.t('A request is already running.') });
      return;
    }
    const controller = new AbortController();
    this.running = controller;
    this.post({ type: 'busy', busy: true });
    const errorActions: ErrorActions = {};
    try {
      const { views, rejected } = await this.referenceViews(form.references);
      if (rejected.length) throw new Error(rejected.join(' '));
      const args = formArgs(form);
      const images = views.map((v) => v.path);
      const result = images.length
        ? await editImage(services, { ...args, images }, true, { signal: controller.signal, errorActions, origin: { kind: 'studio' } })
        : await generate(services, args, true, { signal: controller.signal, errorActions, origin: { kind: 'studio' } });
      this.post({
        type: 'generateDone',
        requestId,
        ok: true,
        files: result.files.map((f) => f.fsPath),
        costText: result.usage?.cost_rub !== undefined ? formatRubles(result.usage.cost_rub, services.locale) : undefined,
      });
    } catch (error) {
      // The one place the studio's generation errors are shown (generate/editImage only throw).
      void showError(services, error, errorActions.retry, errorActions.baseline);
      this.post({ type: 'generateDone', requestId, ok: false, files: [], error: summarizeError(error).message });
    } finally {
      this.running = undefined;
      this.post({ type: 'busy', busy: false });
    }
  }

  private async flushFill(): Promise<void> {
    const region = this.pendingRegion;
    this.pendingRegion = undefined;
    if (region) await this.region.open(region);
    const fill = this.pendingFill;
    if (!fill) return;
    this.pendingFill = undefined;
    await this.fillForm(fill.request, fill.references, fill.madeWithStyle);
  }

  /** The page's form is filled from a request; the person reviews it and sends. */
  private async fillForm(request: GenerationRequest, references: string[], madeWithStyle?: string): Promise<void> {
    const { views } = await this.referenceViews(references);
    this.post({
      type: 'fillForm',
      form: toFormValues(
        request,
        views.map((v) => v.path),
      ),
      references: views,
      ...(madeWithStyle ? { madeWithStyle } : {}),
    });
  }

  private async addReferences(requestId: number, paths: string[]): Promise<void> {
    const { views, rejected } = await this.referenceViews(paths);
    this.post({ type: 'referencesAdded', requestId, references: views, rejected });
  }

  /** Checks paths named by the page (inside the workspace, an image) and gives them previews. */
  private async referenceViews(paths: string[]): Promise<{ views: ReferenceView[]; rejected: string[] }> {
    const views: ReferenceView[] = [];
    const rejected: string[] = [];
    for (const file of paths) {
      const check = await checkReference(file);
      if (!check.ok) rejected.push(check.reason);
      else views.push({ path: check.path, name: path.basename(check.path), src: await this.previewSrc(check.path) });
    }
    return { views, rejected };
  }

  private postComparison(): void {
    const state = comparisonFeed.latest;
    if (state) this.post({ type: 'comparison', view: toComparisonView(state, (file) => this.src(file), this.services.locale) });
  }

  private postModels(): void {
    this.post({ type: 'models', models: this.services.catalog.peek().map((m) => toModelInfo(m, this.services.locale)) });
  }

  /** A thumbnail as data when the cache can make one (why: galleryFeed.ts), else the file's webview URI. */
  private async previewSrc(file: string): Promise<string> {
    const thumbnail = await this.services.thumbnails
      .cache()
      .get(file)
      .catch(() => undefined);
    return thumbnail && 'file' in thumbnail ? pngDataUrl(thumbnail.file) : this.src(file);
  }

  private src(file: string): string {
    return this.panel.webview.asWebviewUri(vscode.Uri.file(file)).toString();
  }
}

function disposable(value: { dispose(): void }): vscode.Disposable {
  return new vscode.Disposable(() => value.dispose());
}
