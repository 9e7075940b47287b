// The page's copy of the gallery list: its length and the items loaded so far, by index (newest
// first). Pages fill it, splices change it in the host's order. Pure TypeScript: no DOM, no vscode
// (the page compiles it, the unit tests run it).

export interface Splice<T> {
  start: number;
  deleteCount: number;
  items: T[];
}

export class GalleryList<T> {
  private items: (T | undefined)[] = [];

  get total(): number {
    return this.items.length;
  }

  at(index: number): T | undefined {
    return this.items[index];
  }

  /** Starts over: `total` items, of which `items` are known from `start`. */
  reset(total: number, start: number, items: readonly T[]): void {
    this.items = new Array<T | undefined>(total);
    this.fill(start, items);
  }

  /**
   * A page from the host. False when the host's list has another length than this one (a change
   * was missed): the caller starts over.
   */
  page(total: number, start: number, items: readonly T[]): boolean {
    if (total !== this.items.length) return false;
    this.fill(start, items);
    return true;
  }

  /** A change from the host; false when the result's length is not `total` (start over). */
  apply(splices: readonly Splice<T>[], total: number): boolean {
    for (const { start, deleteCount, items } of splices) {
      if (start > this.items.length) return false;
      this.items.splice(start, deleteCount, ...items);
    }
    return this.items.length === total;
  }

  /** The first run of unknown items in [from, to), as a start and a count (at most `max`). */
  missing(from: number, to: number, max: number): { start: number; count: number } | undefined {
    const end = Math.min(to, this.items.length);
    let start = from;
    while (start < end && this.items[start] !== undefined) start++;
    if (start >= end) return undefined;
    let stop = start;
    while (stop < end && stop - start < max && this.items[stop] === undefined) stop++;
    return { start, count: stop - start };
  }

  private fill(start: number, items: readonly T[]): void {
    items.forEach((item, i) => {
      if (start + i < this.items.length) this.items[start + i] = item;
    });
  }
}
