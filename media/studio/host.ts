// The page's link to the extension host: typed posting, request ids, state and strings.
import type { FormValues, FromWebviewMessage, StudioStrings } from '../../src/studio/protocol';
import { parseFormValues } from '../../src/studio/protocol';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const api = acquireVsCodeApi();
let nextRequestId = 1;

/** Distributive Omit, so each message of the union keeps its own fields. */
type WithoutId<T> = T extends unknown ? Omit<T, 'requestId'> : never;

export function post(message: FromWebviewMessage): void {
  api.postMessage(message);
}

/** Posts a request and returns its id (replies carry it back). */
export function request(message: WithoutId<Extract<FromWebviewMessage, { requestId: number }>>): number {
  const requestId = nextRequestId++;
  api.postMessage({ ...message, requestId });
  return requestId;
}

export function emptyForm(): FormValues {
  return { model: '', prompt: '', n: 1, params: {}, references: [] };
}

/** The form kept across hide/show and window reloads (checked like any message: a bad one starts fresh). */
export function loadForm(): FormValues {
  const saved = api.getState() as { form?: unknown } | undefined;
  return parseFormValues(saved?.form) ?? emptyForm();
}

export function saveForm(form: FormValues): void {
  api.setState({ form });
}

let strings: StudioStrings = {};

export function setStrings(table: StudioStrings): void {
  strings = table;
}

/** A translated string with {0}, {1}… filled in; the key itself when the host sent none. */
export function t(key: string, ...args: (string | number)[]): string {
  const text = strings[key] ?? key;
  return text.replace(/\{(\d+)\}/g, (match, i: string) => (args[Number(i)] === undefined ? match : String(args[Number(i)])));
}
