// The catalog's rules on every line of a prompt file. Apart from batchFile.ts, which loads with the
// results chunk (dist/results.js): validation stays the extension's one copy. Pure: no vscode import.
import type { BatchLine, BatchLineIssue } from './batchFile';
import type { ImageModel } from '../gateway/types';
import { collectIssues } from './validation';

/** Checks every parsed line against the catalog; returns all issues, in line order. */
export function validateBatch(lines: readonly BatchLine[], models: readonly ImageModel[]): BatchLineIssue[] {
  const issues: BatchLineIssue[] = [];
  for (const { line, request, styled } of lines) {
    const referenceCount = styled?.references.length ?? 0;
    for (const issue of collectIssues(request, { models, referenceCount })) issues.push({ line, field: issue.field, message: issue.message });
  }
  return issues;
}
