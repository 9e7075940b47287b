// The image model catalog, served from cache at once and refreshed in the background, so
// quick picks open without waiting for the network.
import { ImageModel } from './types';

export interface CatalogSnapshot {
  models: ImageModel[];
  fetchedAt: number;
}

/** Where the cache persists between sessions (globalState in the extension, memory in tests). */
export interface CatalogStore {
  load(): CatalogSnapshot | undefined;
  save(snapshot: CatalogSnapshot): PromiseLike<void> | void;
}

export type FetchModels = () => Promise<ImageModel[]>;

export class CatalogCache {
  private snapshot: CatalogSnapshot | undefined;
  private inFlight: Promise<ImageModel[]> | undefined;
  private readonly listeners = new Set<(models: ImageModel[]) => void>();

  constructor(
    private readonly fetchModels: FetchModels,
    private readonly store?: CatalogStore,
    private readonly maxAgeMs = 60 * 60_000,
    private readonly now: () => number = Date.now,
  ) {
    this.snapshot = store?.load();
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
    this.inFlight ??= this.fetchModels()
      .then(async (models) => {
        this.snapshot = { models, fetchedAt: this.now() };
        await this.store?.save(this.snapshot);
        for (const listener of this.listeners) listener(models);
        return models;
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  /** Finds a model, fetching the catalog once more when the id is not in the cache (it may be new). */
  async find(id: string): Promise<ImageModel | undefined> {
    const cached = (await this.get()).find((m) => m.id === id);
    if (cached) return cached;
    return (await this.refresh()).find((m) => m.id === id);
  }

  onDidChange(listener: (models: ImageModel[]) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }
}
