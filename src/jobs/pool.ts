// Runs tasks with at most `limit` at a time. Once the signal is aborted no further task starts;
// the ones running finish (or fail) on their own terms. No vscode import.

export async function runBounded<T, R>(
  items: readonly T[],
  limit: number,
  worker: (item: T, index: number) => Promise<R>,
  signal?: AbortSignal,
): Promise<(R | undefined)[]> {
  const results = new Array<R | undefined>(items.length).fill(undefined);
  let next = 0;
  const lane = async () => {
    while (next < items.length && !signal?.aborted) {
      const index = next++;
      results[index] = await worker(items[index] as T, index); // index < items.length (the loop's condition)
    }
  };
  const lanes = Math.max(1, Math.min(Math.trunc(limit) || 1, items.length));
  await Promise.all(Array.from({ length: lanes }, lane));
  return results;
}
