// Messages of the studio's comparison grid (Compare Models). Pure: no vscode and no DOM import.
import type { FormValues } from './formProtocol';

export type CompareStatusView = 'waiting' | 'running' | 'done' | 'failed' | 'outcome-unknown' | 'not-sent';

export interface CompareImageView {
  file: string;
  name: string;
  /** webview.asWebviewUri of the file. */
  src: string;
}

export interface CompareEntryView {
  model: string;
  status: CompareStatusView;
  images: CompareImageView[];
  costText?: string;
  timeText?: string;
  error?: string;
}

export interface ComparisonView {
  runId: string;
  prompt: string;
  running: boolean;
  /** The combined estimate, preformatted ("reserved ₽…, expected ₽…"). */
  estimateText: string;
  entries: CompareEntryView[];
}

/** host -> page: the grid (undefined hides it). */
export interface ComparisonMessage {
  type: 'comparison';
  view?: ComparisonView;
}

/** page -> host: compare the form's prompt, options and references across models the host asks for. */
export interface CompareMessage {
  type: 'compare';
  requestId: number;
  form: FormValues;
}

export interface CancelCompareMessage {
  type: 'cancelCompare';
}

export interface UseModelMessage {
  type: 'useModel';
  model: string;
}

export type CompareFromWebviewMessage = CompareMessage | CancelCompareMessage | UseModelMessage;

export function parseCompareMessage(
  value: Record<string, unknown>,
  parseForm: (form: unknown) => FormValues | undefined,
  maxId: number,
): CompareFromWebviewMessage | undefined {
  const keys = Object.keys(value);
  const only = (...allowed: string[]) => keys.every((k) => k === 'type' || allowed.includes(k));
  switch (value.type) {
    case 'compare': {
      const id = value.requestId;
      if (!only('requestId', 'form') || typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) return undefined;
      const form = parseForm(value.form);
      return form && { type: 'compare', requestId: id, form };
    }
    case 'cancelCompare':
      return only() ? { type: 'cancelCompare' } : undefined;
    case 'useModel':
      return only('model') && typeof value.model === 'string' && value.model.length > 0 && value.model.length <= maxId
        ? { type: 'useModel', model: value.model }
        : undefined;
    default:
      return undefined;
  }
}
