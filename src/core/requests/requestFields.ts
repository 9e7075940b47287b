// The one list of a request's option fields (the contract's names, docs/gateway-contract.md): what a
// style may set under "options" (styleFile.ts) and, with the request's own fields, the names no
// provider parameter may take (validation.ts). Pure: no vscode import.
import type { GenerationRequest } from '../gateway/types';

/** The request's options, in the order they are listed to people, with the kind of value each takes. */
const REQUEST_OPTIONS = {
  n: 'number',
  resolution: 'text',
  aspect_ratio: 'text',
  size: 'text',
  quality: 'text',
  output_format: 'text',
  background: 'text',
  seed: 'number',
  output_compression: 'number',
} as const satisfies { [K in keyof GenerationRequest]?: 'text' | 'number' };

type Kinds = typeof REQUEST_OPTIONS;
export type RequestOption = keyof Kinds;
export type RequestTextOption = { [K in RequestOption]: Kinds[K] extends 'text' ? K : never }[RequestOption];
export type RequestNumberOption = { [K in RequestOption]: Kinds[K] extends 'number' ? K : never }[RequestOption];

export const REQUEST_OPTION_FIELDS = Object.keys(REQUEST_OPTIONS) as RequestOption[];
export const REQUEST_TEXT_OPTIONS = REQUEST_OPTION_FIELDS.filter((f): f is RequestTextOption => REQUEST_OPTIONS[f] === 'text');
export const REQUEST_NUMBER_OPTIONS = REQUEST_OPTION_FIELDS.filter((f): f is RequestNumberOption => REQUEST_OPTIONS[f] === 'number');

/** Every standard field of a request body: the options, the request's own fields and the edits' image uploads. */
export const STANDARD_FIELDS: ReadonlySet<string> = new Set(['model', 'prompt', ...REQUEST_OPTION_FIELDS, 'input_references', 'image', 'image[]']);
