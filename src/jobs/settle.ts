// RunOptions.settle of the jobs that record their result in the results journal (single jobs,
// prompt-file lines, comparisons). No vscode import.

/**
 * Records a job's result with `record` before its in-flight record goes. A failure is logged and
 * passed on: the job service then keeps the in-flight record, and the next start records the result.
 */
export function settleBy<T>(record: (result: T) => Promise<void>, warn: (message: string) => void, what: string): (result: T) => Promise<void> {
  return (result) =>
    record(result).catch((error: unknown) => {
      warn(`${what} was not recorded in the results journal (its in-flight record stays for the next start): ${String(error)}`);
      throw error;
    });
}
