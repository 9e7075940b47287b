// The page's link to the extension host: typed posting, request ids, state and strings.
import type { FormInteraction, FormValues, FromWebviewMessage, StudioStrings } from '../../src/studio/protocol/protocol';
import { parseFormInteraction, parseFormValues } from '../../src/studio/protocol/protocolValidation';

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

export interface SavedForm {
  form: FormValues;
  /** What was edited and whether Generate was pressed: errors show after a reload as before it. */
  interaction: FormInteraction;
}

/** The page's saved state: the form (and what was edited), and the region editor when it is open. */
function savedState(): Record<string, unknown> {
  const saved = api.getState();
  return typeof saved === 'object' && saved !== null && !Array.isArray(saved) ? (saved as Record<string, unknown>) : {};
}

/** The form kept across hide/show and window reloads (checked like any message: a bad one starts fresh). */
export function loadForm(): SavedForm {
  const saved = savedState();
  const form = parseFormValues(saved.form);
  if (!form) return { form: emptyForm(), interaction: { edited: [], submitted: false } };
  return { form, interaction: parseFormInteraction(saved.interaction) ?? { edited: [], submitted: false } };
}

export function saveForm(saved: SavedForm): void {
  api.setState({ ...savedState(), ...saved });
}

/** The region editor's saved state, as it was put (its reader checks it: media/studio/region/savedRegion.ts). */
export function loadRegionState(): unknown {
  return savedState().region;
}

/** Keeps the open region editor (undefined: it is closed). */
export function saveRegionState(region: unknown): void {
  const { region: _old, ...rest } = savedState();
  api.setState(region === undefined ? rest : { ...rest, region });
}

let strings: StudioStrings = {};

export function setStrings(table: StudioStrings): void {
  strings = table;
}

/** A counted string: the plural form of `count` in the page's language (`<key>.one`, `.few`, `.many`, `.other`). */
export function tn(key: string, count: number, ...args: (string | number)[]): string {
  let category = 'other';
  try {
    category = new Intl.PluralRules(document.documentElement.lang || 'en').select(count);
  } catch {
    // an unknown language tag: the other form
  }
  return t(`${key}.${category}` in strings ? `${key}.${category}` : `${key}.other`, ...args);
}

/** A translated string with {0}, {1}… filled in; the key itself when the host sent none. */
export function t(key: string, ...args: (string | number)[]): string {
  const text = strings[key] ?? key;
  return text.replace(/\{(\d+)\}/g, (match, i: string) => (args[Number(i)] === undefined ? match : String(args[Number(i)])));
}
