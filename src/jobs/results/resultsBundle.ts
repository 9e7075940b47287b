// Entry of the lazily loaded chunk (dist/results.js): reading, indexing and compacting the results
// journal, the gallery's thumbnails, and Generate Images from File (parsing the prompt file, the
// resume that reads the journal and holds the lines in flight when a window closed, the run and its
// report) load on first use, not at activation.
export { SharedJournal } from './journalFile';
export { journalLine, ResultsIndex } from './resultsIndex';
export { existsWith, filesIn, findLinesByProvenance } from '../promptFiles/batchProvenance';
export { ThumbnailCache } from '../../core/files/thumbnailCache';
export { batchFileKind, describeBatchIssues, parseBatchFile, requestKey } from '../../core/requests/batchFile';
export { planResume, runBatch, skipFoundByProvenance, summarize } from '../promptFiles/batch';
export { batchReport, reportPathFor, skippedSummary } from '../promptFiles/batchReport';
export { heldOutcome, holdPaidLines, paidWithoutImages, resendable } from '../promptFiles/heldLines';
export { PromptFileClaims } from '../promptFiles/promptFileClaim';
export { runPromptFile } from '../promptFiles/promptFileRun';
