// Project styles: named presets in the repository (.gateway-images/styles.json), so a team shares
// one look. This module reads the file, checks each style's fields and follows `extends`; the
// request is made from a style in jobs/styledRequest.ts. Pure: no vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { type LocalRefusalKind, ValidationError } from '../gateway/errors';
import { isRecord } from '../common/json';
import { parseJson } from '../common/jsonc';
import { confine } from '../files/outputPath';
import { STYLES_FILE } from './stylesPath';
import { REQUEST_NUMBER_OPTIONS, REQUEST_OPTION_FIELDS, REQUEST_TEXT_OPTIONS, type RequestNumberOption, type RequestTextOption } from './requestFields';
import { OUTPUT_FORMAT_VALUES, QUALITY_VALUES } from '../gateway/types';

export { STYLES_FILE };

/** The options a style may set (the request's own names, requestFields.ts), and params. */
export const STYLE_TEXT_OPTIONS: readonly StyleTextOption[] = REQUEST_TEXT_OPTIONS;
export const STYLE_NUMBER_OPTIONS: readonly StyleNumberOption[] = REQUEST_NUMBER_OPTIONS;
export type StyleTextOption = RequestTextOption;
export type StyleNumberOption = RequestNumberOption;
export type StyleOptionField = StyleTextOption | StyleNumberOption | 'params';
export const STYLE_OPTION_FIELDS: readonly StyleOptionField[] = [...REQUEST_OPTION_FIELDS, 'params'];

export type StyleParams = Record<string, string | number | boolean>;
export type StyleOptions = Partial<Record<StyleTextOption, string> & Record<StyleNumberOption, number>> & { params?: StyleParams };

/** A style as written (or, resolved, with `extends` applied). References are workspace-relative paths. */
export interface StyleValues {
  description?: string;
  promptPrefix?: string;
  promptSuffix?: string;
  model?: string;
  options?: StyleOptions;
  references?: string[];
  outputFolder?: string;
  fileNamePattern?: string;
}

export interface StyleDefinition extends StyleValues {
  extends?: string;
}

/** A style's name, where it is written, and the values it resolved to: what provenance and the history keep. */
export interface StyleRecord {
  name: string;
  /** The styles file, relative to the workspace folder. */
  file: string;
  values: StyleValues;
}

/** The styles of one workspace folder, as read from its file. */
export interface StylesSource {
  /** The workspace folder the file belongs to (its references and output folder are inside it). */
  root: string;
  /** The file as people see it: relative to the workspace folder. */
  file: string;
  /** Whether the workspace is trusted: a style from an untrusted one never sends on its own. */
  trusted: boolean;
  styles: ReadonlyMap<string, StyleDefinition>;
  /** The first problem of each style that is written wrongly (it cannot be used). */
  broken: ReadonlyMap<string, ValidationError>;
  /** A problem of the whole file (not JSON, no "styles" object): no style can be used. */
  fileError?: ValidationError;
}

export const STYLE_DEFINITION_FIELDS = [
  'description',
  'extends',
  'promptPrefix',
  'promptSuffix',
  'model',
  'options',
  'references',
  'outputFolder',
  'fileNamePattern',
];
const TEXT_FIELDS = ['description', 'extends', 'promptPrefix', 'promptSuffix', 'model', 'outputFolder', 'fileNamePattern'] as const;
const MAX_NAME = 64;
const NUMBER_RANGES: Record<StyleNumberOption, [number, number]> = {
  n: [1, 10],
  seed: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  output_compression: [0, 100],
};

/** A refusal that names the styles file, the style and its field. */
export function styleError(
  file: string,
  style: string,
  field: string,
  message: string,
  allowed?: readonly (string | number)[],
  kind?: LocalRefusalKind,
): ValidationError {
  return new ValidationError(`style.${field}`, l10n.t('{0}, style "{1}", "{2}": {3}', file, style, field, message), allowed, kind);
}

/** The file's error (no style named): its JSON or its shape. */
function fileError(file: string, message: string): ValidationError {
  return new ValidationError('style', l10n.t('{0}: {1}', file, message));
}

/** The styles of a file's text; problems are kept per style (the others stay usable). */
export function parseStyles(text: string, file: string, root: string, trusted: boolean): StylesSource {
  const source = { root, file, trusted, styles: new Map<string, StyleDefinition>(), broken: new Map<string, ValidationError>() };
  const read = parseJson(text);
  if ('problem' in read) return { ...source, fileError: fileError(file, l10n.t('not valid JSON ({0})', read.problem.message)) };
  const value = read.value;
  if (!isRecord(value) || !isRecord(value.styles)) {
    return { ...source, fileError: fileError(file, l10n.t('the file must be a JSON object with a "styles" object: {"styles": {"name": {…}}}')) };
  }
  const unknownTop = Object.keys(value).find((k) => k !== 'styles' && k !== '$schema');
  if (unknownTop) return { ...source, fileError: fileError(file, l10n.t('unknown field "{0}"; allowed: styles, $schema', unknownTop)) };
  for (const [name, raw] of Object.entries(value.styles)) {
    if (!name.trim() || name !== name.trim() || name.length > MAX_NAME) {
      source.broken.set(name, styleError(file, name, 'name', l10n.t('a style name must be 1 to {0} characters without spaces around it', MAX_NAME)));
      continue;
    }
    const problem = checkDefinition(raw, (field, message, allowed) => styleError(file, name, field, message, allowed));
    if (problem) source.broken.set(name, problem);
    else source.styles.set(name, raw as StyleDefinition);
  }
  return source;
}

type Refuse = (field: string, message: string, allowed?: readonly (string | number)[]) => ValidationError;

/** The first problem of a style's shape (types, ranges, unknown fields); undefined when it is well formed. */
function checkDefinition(raw: unknown, refuse: Refuse): ValidationError | undefined {
  if (!isRecord(raw)) return refuse('style', l10n.t('a style must be an object such as {"model": "…", "options": {…}}'));
  const unknown = Object.keys(raw).find((k) => !STYLE_DEFINITION_FIELDS.includes(k));
  if (unknown) return refuse(unknown, l10n.t('unknown field; allowed: {0}', STYLE_DEFINITION_FIELDS.join(', ')), STYLE_DEFINITION_FIELDS);
  for (const field of TEXT_FIELDS) {
    if (raw[field] !== undefined && typeof raw[field] !== 'string') return refuse(field, l10n.t('must be a text'));
  }
  if (raw.references !== undefined && !(Array.isArray(raw.references) && raw.references.every((r) => typeof r === 'string' && r.trim()))) {
    return refuse('references', l10n.t('must be a list of image paths relative to the workspace folder'));
  }
  if (raw.options === undefined) return undefined;
  if (!isRecord(raw.options)) return refuse('options', l10n.t('must be an object of request options'));
  return checkOptions(raw.options, refuse);
}

function checkOptions(options: Record<string, unknown>, refuse: Refuse): ValidationError | undefined {
  const allowed: string[] = [...STYLE_OPTION_FIELDS];
  const unknown = Object.keys(options).find((k) => !allowed.includes(k));
  if (unknown) return refuse(`options.${unknown}`, l10n.t('unknown option; allowed: {0}', allowed.join(', ')), allowed);
  for (const field of STYLE_TEXT_OPTIONS) {
    if (options[field] !== undefined && typeof options[field] !== 'string') return refuse(`options.${field}`, l10n.t('must be a text'));
  }
  const lists = { quality: QUALITY_VALUES, output_format: OUTPUT_FORMAT_VALUES } as const;
  for (const [field, values] of Object.entries(lists)) {
    const value = options[field];
    if (value !== undefined && !(values as readonly unknown[]).includes(value)) {
      return refuse(`options.${field}`, l10n.t('must be one of {0}; got {1}', values.join(', '), JSON.stringify(value)), values);
    }
  }
  for (const field of STYLE_NUMBER_OPTIONS) {
    const value = options[field];
    const [min, max] = NUMBER_RANGES[field];
    if (value !== undefined && !(Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max)) {
      return field === 'seed'
        ? refuse(`options.${field}`, l10n.t('must be a whole number; got {0}', JSON.stringify(value)))
        : refuse(`options.${field}`, l10n.t('must be a whole number from {0} to {1}; got {2}', min, max, JSON.stringify(value)));
    }
  }
  const params = options.params;
  if (params !== undefined && !(isRecord(params) && Object.values(params).every((v) => ['string', 'number', 'boolean'].includes(typeof v)))) {
    return refuse('options.params', l10n.t('must be an object whose values are texts, numbers or true/false'));
  }
  return undefined;
}

/** The usable and the broken styles' names, in the file's order. */
export function styleNames(source: StylesSource): string[] {
  return [...source.styles.keys(), ...source.broken.keys()];
}

/**
 * The style with its `extends` chain applied: each style's own fields replace those it extends;
 * `options` (and `options.params`) are merged field by field. A loop or a missing parent is refused.
 */
export function resolveStyle(source: StylesSource, name: string): StyleValues {
  if (source.fileError) throw source.fileError;
  const chain: string[] = [];
  let resolved: StyleValues = {};
  for (let current: string | undefined = name; current !== undefined;) {
    const broken = source.broken.get(current);
    if (broken) throw broken;
    const definition = source.styles.get(current);
    if (!definition) {
      const child = chain[chain.length - 1];
      const names = styleNames(source);
      if (child === undefined)
        throw new ValidationError('style', l10n.t('{0} has no style "{1}"; its styles: {2}', source.file, name, names.join(', ') || '—'), names);
      throw styleError(source.file, child, 'extends', l10n.t('extends "{0}", which {1} does not define', current, source.file), names);
    }
    if (chain.includes(current)) {
      throw styleError(source.file, name, 'extends', l10n.t('the styles extend each other in a loop: {0}', [...chain, current].join(' → ')));
    }
    chain.push(current);
    const { extends: parent, ...own } = definition;
    resolved = mergeStyle(own, resolved);
    current = parent;
  }
  return resolved;
}

/** `child` over `parent`: fields replace, options merge. */
function mergeStyle(parent: StyleValues, child: StyleValues): StyleValues {
  const merged: StyleValues = { ...parent, ...child };
  if (parent.options || child.options) {
    const params = parent.options?.params || child.options?.params ? { ...parent.options?.params, ...child.options?.params } : undefined;
    merged.options = { ...parent.options, ...child.options, ...(params ? { params } : {}) };
  }
  return merged;
}

/**
 * Reads the styles file of a workspace folder; undefined when there is none. A file that leads
 * outside the folder (a symbolic link) is refused like any path of a style.
 */
export async function readStyles(root: string, trusted: boolean): Promise<StylesSource | undefined> {
  const file = path.join(root, STYLES_FILE);
  if (!(await confine(root, file)).inside) {
    const empty = parseStyles('{"styles": {}}', STYLES_FILE, root, trusted);
    return { ...empty, fileError: fileError(STYLES_FILE, l10n.t('leads outside the workspace folder through a symbolic link; it is not read')) };
  }
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fileError(STYLES_FILE, l10n.t('cannot be read ({0})', error instanceof Error ? error.message : String(error)));
  }
  return parseStyles(text, STYLES_FILE, root, trusted);
}

/**
 * The styles file's text with `name` set to `definition` (added, or replacing a style of that name),
 * for "Save as Style…". A file that cannot be read as styles is refused, not overwritten.
 */
export function withStyle(text: string | undefined, name: string, definition: StyleDefinition): string {
  let value: unknown = { styles: {} };
  if (text !== undefined && text.trim()) {
    const read = parseJson(text);
    if ('problem' in read) throw fileError(STYLES_FILE, l10n.t('not valid JSON ({0}); fix it before saving a style into it', read.problem.message));
    value = read.value;
  }
  if (!isRecord(value) || !isRecord(value.styles)) throw fileError(STYLES_FILE, l10n.t('has no "styles" object; fix it before saving a style into it'));
  return `${JSON.stringify({ ...value, styles: { ...value.styles, [name]: definition } }, null, 2)}\n`;
}
