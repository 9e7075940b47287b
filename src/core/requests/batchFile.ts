// Prompt files for batch runs: `.txt` (one prompt per line; `#` lines and blank lines skipped) or
// `.jsonl` (one request object per line). Every line is parsed and validated before any money
// moves; each problem names its line and field. Pure: no vscode import.
import { createHash } from 'node:crypto';
import * as l10n from '@vscode/l10n';
import type { StyleRecord } from './styleFile';
import { parseJson } from '../common/jsonc';
import { type GenerationRequest } from '../gateway/types';
import { REQUEST_NUMBER_OPTIONS, REQUEST_TEXT_OPTIONS } from './requestFields';

export type BatchFileKind = 'txt' | 'jsonl';

export interface BatchLine {
  /** 1-based line number in the file. */
  line: number;
  request: GenerationRequest;
  /** Identity of the line's request: a changed line is a new line (resume compares it). */
  key: string;
  /** The style the line names (`style` of a .jsonl line), or the one chosen for the whole file. */
  style?: string;
  /** Once its style is applied (jobs/styledRequest.ts): the style's references, output and record. */
  styled?: { references: string[]; output: { directory?: string; pattern?: string }; record?: StyleRecord };
}

export interface BatchLineIssue {
  line: number;
  /** The field at fault; undefined when the line as a whole is wrong (bad JSON). */
  field?: string;
  message: string;
}

export interface BatchDefaults {
  /** Model for lines that name none (every `.txt` line). */
  model?: string;
  /** Options for lines that set none of their own. */
  options?: Omit<GenerationRequest, 'model' | 'prompt' | 'input_references'>;
  /** Style for lines that name none (a .txt file's). */
  style?: string;
}

const STRING_FIELDS = ['model', 'prompt', ...REQUEST_TEXT_OPTIONS, 'style'];
const INTEGER_FIELDS = REQUEST_NUMBER_OPTIONS;
const KNOWN_FIELDS = new Set<string>([...STRING_FIELDS, ...INTEGER_FIELDS, 'params']);

export function batchFileKind(fileName: string): BatchFileKind | undefined {
  const lower = fileName.toLowerCase();
  if (lower.endsWith('.txt')) return 'txt';
  if (lower.endsWith('.jsonl')) return 'jsonl';
  return undefined;
}

/** Parses the file's lines; issues are about form (JSON, field types, unknown fields), not the catalog. */
export function parseBatchFile(text: string, kind: BatchFileKind, defaults: BatchDefaults = {}): { lines: BatchLine[]; issues: BatchLineIssue[] } {
  const lines: BatchLine[] = [];
  const issues: BatchLineIssue[] = [];
  text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .forEach((raw, i) => {
      const line = i + 1;
      const trimmed = raw.trim();
      if (!trimmed || trimmed.startsWith('#')) return;
      const parsed = kind === 'txt' ? { prompt: trimmed } : parseJsonLine(trimmed, line, issues);
      if (!parsed) return;
      const { style, ...fields } = parsed;
      const request: GenerationRequest = { ...defaults.options, ...fields, model: fields.model ?? defaults.model ?? '' } as GenerationRequest;
      const lineStyle = style ?? defaults.style;
      lines.push({ line, request, key: requestKey(request), ...(lineStyle ? { style: lineStyle } : {}) });
    });
  return { lines, issues };
}

function parseJsonLine(text: string, line: number, issues: BatchLineIssue[]): (Partial<GenerationRequest> & { style?: string }) | undefined {
  const read = parseJson(text);
  if ('problem' in read) {
    issues.push({ line, message: l10n.t('not valid JSON (column {0}: {1})', read.problem.column, read.problem.what) });
    return undefined;
  }
  const value = read.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issues.push({ line, message: l10n.t('each line must be a JSON object such as {"prompt": "...", "model": "..."}') });
    return undefined;
  }
  const object = value as Record<string, unknown>;
  const before = issues.length;
  for (const field of Object.keys(object)) {
    if (!KNOWN_FIELDS.has(field)) issues.push({ line, field, message: l10n.t('unknown field "{0}"; allowed: {1}', field, [...KNOWN_FIELDS].join(', ')) });
  }
  for (const field of STRING_FIELDS) {
    if (object[field] !== undefined && typeof object[field] !== 'string') issues.push({ line, field, message: l10n.t('"{0}" must be a text', field) });
  }
  for (const field of INTEGER_FIELDS) {
    if (object[field] !== undefined && !Number.isInteger(object[field])) issues.push({ line, field, message: l10n.t('"{0}" must be a whole number', field) });
  }
  const params = object.params;
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) {
    issues.push({ line, field: 'params', message: l10n.t('"params" must be an object of provider-specific parameters') });
  }
  return issues.length === before ? object : undefined;
}

/** "line 3, n: …" lines for the refusal message, capped so a broken file does not flood it. */
export function describeBatchIssues(issues: readonly BatchLineIssue[], limit = 10): string {
  const sorted = [...issues].sort((a, b) => a.line - b.line);
  const shown = sorted
    .slice(0, limit)
    .map((i) => (i.field ? l10n.t('line {0}, {1}: {2}', i.line, i.field, i.message) : l10n.t('line {0}: {1}', i.line, i.message)));
  if (sorted.length > limit) shown.push(l10n.t('…and {0} more', sorted.length - limit));
  return shown.join('\n');
}

/** A stable digest of the request and its reference files (field order does not matter). */
export function requestKey(request: GenerationRequest, references: readonly string[] = []): string {
  const sorted = (value: unknown): unknown =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((k) => [k, sorted((value as Record<string, unknown>)[k])]),
        )
      : value;
  return createHash('sha256')
    .update(JSON.stringify(sorted(references.length ? { ...request, references } : request)))
    .digest('hex')
    .slice(0, 16);
}
