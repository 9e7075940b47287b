// The host side of the studio's gallery: pages of the results journal's gallery list on request,
// only the splices of a change afterwards, thumbnails (made once, cached) of the cards the page
// shows, and the time the first page took to appear.
import { readFile } from 'node:fs/promises';
import type * as vscode from 'vscode';
import type { HistoryChange } from '../../jobs/results/history';
import { parseResultQuery } from '../../jobs/results/resultSearch';
import type { ResultsIndex } from '../../jobs/results/resultsIndex';
import type { Services } from '../../services';
import type { GalleryPageRequest, GalleryPageView, GalleryShownMessage, ThumbnailsRequest, ToWebviewMessage } from '../protocol/protocol';
import { thumbnailStandIn, toGalleryItems, toGalleryPage } from '../model/view';

/** Enough cards for a tall window; the page asks for more as it scrolls. */
export const FIRST_PAGE = 48;
/** The gallery's filter, kept across reloads (workspace state). */
const FILTER_KEY = 'gatewayImages.studio.galleryFilter';

type GallerySource = Pick<ResultsIndex, 'galleryPage' | 'galleryCount'>;

export class GalleryFeed implements vscode.Disposable {
  private readonly subscription: { dispose(): void };
  /** When the page started loading (the panel opened or was shown again). */
  private loadingSince = Date.now();
  private latestThumbnails = 0;
  /** The filtered gallery as of the journal's last change (made again after each change). */
  private filtered?: GallerySource;

  constructor(
    private readonly services: Services,
    private readonly post: (message: ToWebviewMessage) => void,
  ) {
    this.subscription = services.history.onDidChange((change) => this.changed(change));
  }

  /** The page is loading again (the panel was shown after being hidden). */
  pageLoading(): void {
    this.loadingSince = Date.now();
  }

  async firstPage(): Promise<GalleryPageView> {
    return toGalleryPage(await this.source(), 0, FIRST_PAGE, this.services.locale);
  }

  async page({ requestId, start, count }: GalleryPageRequest): Promise<void> {
    this.post({ type: 'galleryPage', requestId, ...toGalleryPage(await this.source(), start, count, this.services.locale) });
  }

  get filterText(): string {
    return this.services.context.workspaceState.get<string>(FILTER_KEY, '');
  }

  /** The gallery shows what matches `query` from now on (and after a reload); the page starts over from the first page. */
  async setFilter(query: string): Promise<void> {
    await this.services.context.workspaceState.update(FILTER_KEY, query.trim() || undefined);
    this.filtered = undefined;
    this.post({ type: 'galleryPage', requestId: 0, ...(await this.firstPage()) });
  }

  /** The whole gallery, or the filtered one: the index filters once per change of the journal or the filter. */
  private async source(): Promise<GallerySource> {
    const index = await this.services.history.index();
    const text = this.filterText;
    if (!text) return index;
    if (!this.filtered) {
      const filtered = index.filter(parseResultQuery(text).query);
      this.filtered = { galleryCount: filtered.total, galleryPage: (start, count) => filtered.page(start, count) };
    }
    return this.filtered;
  }

  /**
   * Thumbnails of the cards the page shows, one at a time; only files of results the journal
   * knows. A newer request replaces this one: the cards scrolled past are not made first.
   */
  async thumbnails({ requestId, items }: ThumbnailsRequest): Promise<void> {
    this.latestThumbnails = requestId;
    const index = await this.services.history.index();
    for (const { entryId, file } of items) {
      if (this.latestThumbnails !== requestId) return;
      if (!index.find(entryId)?.files.includes(file)) continue;
      const thumbnail = await this.services.thumbnails
        .cache()
        .get(file)
        .catch((error: unknown) => {
          this.services.log.warn(`Image Studio: no thumbnail for ${file}: ${String(error)}`);
          return { format: '?' };
        });
      // Sent as data, not as a webview URI: a URI is fetched through VS Code's webview service
      // worker, and a fetch still open when the panel closes holds up the next webview's page
      // (any webview's, this studio's too) for up to 30 s.
      if ('file' in thumbnail) this.post({ type: 'thumbnail', file, src: await pngDataUrl(thumbnail.file) });
      else if ('missing' in thumbnail) this.post({ type: 'thumbnail', file, missing: true });
      else this.post({ type: 'thumbnail', file, standIn: thumbnailStandIn(thumbnail) });
    }
  }

  shown({ at, cards, total }: GalleryShownMessage): void {
    this.services.log.info(`Image Studio: the first gallery page (${cards} of ${total} results) was shown ${at - this.loadingSince} ms after the panel opened`);
  }

  dispose(): void {
    this.subscription.dispose();
  }

  /** Posted at once, in the order of the changes, so the page's list stays the host's. */
  private changed(change: HistoryChange): void {
    this.filtered = undefined;
    // A filtered gallery's places are not the journal's: the page starts over from the first page.
    if (change.gallery === 'reset' || (this.filterText && change.gallery.length)) {
      void this.firstPage().then((page) => this.post({ type: 'galleryPage', requestId: 0, ...page }));
      return;
    }
    if (!change.gallery.length) return;
    const splices = change.gallery.map((s) => ({ start: s.start, deleteCount: s.deleteCount, items: toGalleryItems(s.items, this.services.locale) }));
    this.post({ type: 'galleryChanged', splices, total: change.galleryTotal });
  }
}

export async function pngDataUrl(file: string): Promise<string> {
  return `data:image/png;base64,${(await readFile(file)).toString('base64')}`;
}
