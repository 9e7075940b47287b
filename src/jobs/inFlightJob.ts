// One job's in-flight record (inFlight.ts) around its paid request: written before the request goes
// out (without it nothing is sent); removed when the job fails (a paid failure recorded first); when the job ends with a result,
// marked finished, the result recorded by the caller (RunOptions.settle: the results journal syncs
// it), and only then removed. A crash at any point leaves the record or the recorded result. No vscode import.
import * as l10n from '@vscode/l10n';
import { NotRecordedError } from '../core/gateway/errors';
import type { InFlightHandle, InFlightJournal } from './inFlight';
import { describeFsError } from './jobFiles';
import type { ImageJob, JobResult } from './jobTypes';

/** Writes the job's record (synced); a record that cannot be written refuses the request (NotRecordedError). */
export async function beginJobRecord(
  journal: InFlightJournal | undefined,
  job: ImageJob,
  start: { id: string; reservation: number; stagingDir: string },
): Promise<InFlightHandle | undefined> {
  if (!journal) return undefined;
  const { input_references: _data, ...request } = job.request;
  try {
    return await journal.begin({
      ...start,
      request,
      ...(job.references?.length ? { references: job.references } : {}),
      outputDirectory: job.output.directory,
      namePattern: job.output.pattern,
      ...(job.output.sourceName ? { sourceName: job.output.sourceName } : {}),
      ...(job.batch ? { batch: job.batch } : {}),
    });
  } catch (error) {
    throw new NotRecordedError(
      l10n.t('Not sent: the record of the request could not be written to {0} ({1}). Nothing was charged.', journal.dir, describeFsError(error, journal.dir)),
    );
  }
}

/**
 * Runs the job under its record, then settles its result before the record goes (see above). A paid
 * failure (`settleFailure`) is recorded before the record goes too; when that fails the record stays.
 */
export async function runUnderRecord(
  record: InFlightHandle | undefined,
  send: () => Promise<JobResult>,
  { settle, settleFailure }: { settle?: (result: JobResult) => Promise<void>; settleFailure?: () => Promise<void> } = {},
): Promise<JobResult> {
  let result: JobResult;
  try {
    result = await send();
  } catch (error) {
    const recorded = await (settleFailure?.() ?? Promise.resolve()).then(
      () => true,
      () => false,
    );
    if (recorded) await record?.end().catch(() => undefined);
    throw error;
  }
  await record?.finish(result);
  try {
    await settle?.(result);
  } catch {
    // Not recorded: the record stays, and the next start records the result from it.
    return result;
  }
  await record?.end().catch(() => undefined);
  return result;
}
