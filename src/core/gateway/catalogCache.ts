// The image model catalog, served from cache at once and refreshed in the background, so
// quick picks open without waiting for the network. The cache belongs to one gateway: another
// base URL never sees it (its models and prices are another gateway's).
import { type ImageModel } from './types';
import { Emitter, type Event } from '../common/emitter';

export interface CatalogSnapshot {
  models: ImageModel[];
  fetchedAt: number;
  /** The base URL the models were read from. */
  baseUrl?: string;
}

/** Where the cache persists between sessions (globalState in the extension, memory in tests). */
export interface CatalogStore {
  load(): CatalogSnapshot | undefined;
  save(snapshot: CatalogSnapshot): PromiseLike<void> | void;
}

export type FetchModels = () => Promise<ImageModel[]>;

export class CatalogCache {
  private stored: CatalogSnapshot | undefined;
  private inFlight: { baseUrl?: string; promise: Promise<ImageModel[]> } | undefined;
  private readonly changed = new Emitter<ImageModel[]>();
  readonly onDidChange: Event<ImageModel[]> = this.changed.event;

  constructor(
    private readonly fetchModels: FetchModels,
    private readonly store?: CatalogStore,
    private readonly maxAgeMs = 60 * 60_000,
    private readonly now: () => number = Date.now,
    /** The current base URL; the cache is used only for the one it was read from. */
    private readonly source?: () => string | undefined,
  ) {
    this.stored = store?.load();
  }

  /** The cached snapshot when it belongs to the current base URL. */
  private get snapshot(): CatalogSnapshot | undefined {
    if (!this.stored || !this.source) return this.stored;
    return this.stored.baseUrl === this.source() ? this.stored : undefined;
  }

  /** Cached models right away (empty when never fetched). */
  peek(): ImageModel[] {
    return this.snapshot?.models ?? [];
  }

  get fetchedAt(): number | undefined {
    return this.snapshot?.fetchedAt;
  }

  /** The cached models when there are any (refreshing in the background when stale), else a fetch. */
  async get(): Promise<ImageModel[]> {
    if (this.snapshot && this.snapshot.models.length) {
      if (this.now() - this.snapshot.fetchedAt > this.maxAgeMs) this.refresh().catch(() => undefined);
      return this.snapshot.models;
    }
    return this.refresh();
  }

  /** Fetches now; concurrent callers share one request. */
  refresh(): Promise<ImageModel[]> {
    const baseUrl = this.source?.();
    if (this.inFlight && this.inFlight.baseUrl === baseUrl) return this.inFlight.promise;
    const promise: Promise<ImageModel[]> = this.fetchModels()
      .then(async (models) => {
        // Read from a base URL that is no longer the current one: returned to its caller, not cached.
        if (this.source && this.source() !== baseUrl) return models;
        this.stored = { models, fetchedAt: this.now(), ...(baseUrl === undefined ? {} : { baseUrl }) };
        await this.store?.save(this.stored);
        this.changed.fire(models);
        return models;
      })
      .finally(() => {
        if (this.inFlight?.promise === promise) this.inFlight = undefined;
      });
    this.inFlight = { baseUrl, promise };
    return promise;
  }
}
