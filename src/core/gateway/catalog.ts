// Reads the public catalog in whatever envelope the gateway uses. The spec shows neither the
// envelope nor the name of the model id field, so every plausible form is accepted (see README).
import { type CatalogEntry, type ImageModel } from './types';
import { isRecord } from '../common/json';

type Json = Record<string, unknown>;

const ID_FIELDS = ['id', 'model_id', 'modelId', 'model', 'slug', 'name', 'key'] as const;
const LIST_FIELDS = ['data', 'models', 'items', 'results', 'entries', 'list'] as const;
const GROUP_FIELDS = ['group', 'category', 'type', 'kind'] as const;
const GROUP_MAP_FIELDS = ['groups', 'categories', 'data', 'models'] as const;

/** The model id of an entry, from whichever field carries it. */
export function entryId(entry: Json, fallbackKey?: string): string | undefined {
  for (const field of ID_FIELDS) {
    // In a map of id -> entry the key is the id; `name` and `key` there are display labels.
    if (fallbackKey !== undefined && (field === 'name' || field === 'key')) return fallbackKey;
    const value = entry[field];
    if (typeof value === 'string' && value.trim()) return value.trim();
  }
  return fallbackKey;
}

/** Entries of one group: a bare array, a list under a common field, or a map of id -> entry. */
export function extractEntries(body: unknown, group?: string): CatalogEntry[] {
  const list = findEntryList(body, group);
  const entries: CatalogEntry[] = list.flatMap(([key, raw]) => {
    if (!isRecord(raw)) return [];
    const id = entryId(raw, key);
    return id ? [{ ...raw, id }] : [];
  });
  // A flat list of every group whose entries name their group: keep only the asked group.
  if (group && entries.some((e) => knownGroupOf(e))) return entries.filter((e) => (knownGroupOf(e) ?? group) === group);
  return entries;
}

function knownGroupOf(entry: Json): string | undefined {
  for (const field of GROUP_FIELDS) {
    const value = entry[field];
    if (typeof value === 'string' && KNOWN_GROUPS.has(value)) return value;
  }
  return undefined;
}

function findEntryList(body: unknown, group: string | undefined, depth = 0): [string | undefined, unknown][] {
  if (depth > 3) return [];
  if (Array.isArray(body)) return body.map((item) => [undefined, item]);
  if (!isRecord(body)) return [];
  if (group && group in body) return findEntryList(body[group], undefined, depth + 1);
  for (const field of LIST_FIELDS) {
    if (field in body) {
      const inner = findEntryList(body[field], group, depth + 1);
      if (inner.length) return inner;
    }
  }
  // A map of id -> entry: every value is an object that looks like a model entry.
  const values = Object.entries(body).filter(([, v]) => isRecord(v));
  if (values.length && values.length === Object.keys(body).length && values.every(([, v]) => looksLikeEntry(v as Json))) {
    return values;
  }
  return [];
}

function looksLikeEntry(value: Json): boolean {
  return ID_FIELDS.some((f) => typeof value[f] === 'string') || 'max_price_per_image' in value || 'provider' in value;
}

/**
 * The whole catalog, by group. Accepts a map of group -> entries (at the top or under
 * `data`/`groups`/`categories`/`models`), a list of `{group, models}` objects, or a flat
 * list of entries that each name their group.
 */
export function extractGroups(body: unknown): Map<string, CatalogEntry[]> {
  const groups = new Map<string, CatalogEntry[]>();
  const add = (group: string, entries: CatalogEntry[]) => {
    if (entries.length) groups.set(group, [...(groups.get(group) ?? []), ...entries]);
  };
  const visit = (value: unknown, depth: number): void => {
    if (depth > 3) return;
    if (Array.isArray(value)) {
      for (const item of value) {
        if (!isRecord(item)) continue;
        const group = groupName(item);
        const nested = LIST_FIELDS.map((f) => item[f]).find(Array.isArray);
        if (group && nested) add(group, extractEntries(nested));
        else if (group) add(group, extractEntries([item]));
      }
      return;
    }
    if (!isRecord(value)) return;
    const groupKeys = Object.keys(value).filter((k) => isGroupLike(k, value[k]));
    for (const key of groupKeys) add(key, extractEntries(value[key]));
    if (groupKeys.length) return;
    for (const field of GROUP_MAP_FIELDS) if (field in value) visit(value[field], depth + 1);
  };
  visit(body, 0);
  return groups;
}

const KNOWN_GROUPS = new Set(['chat', 'images', 'videos', 'embeddings', 'speech', 'transcriptions', 'moderation']);

function isGroupLike(key: string, value: unknown): boolean {
  return KNOWN_GROUPS.has(key) && (Array.isArray(value) || isRecord(value));
}

function groupName(item: Json): string | undefined {
  for (const field of GROUP_FIELDS) {
    const value = item[field];
    if (typeof value === 'string' && value) return value;
  }
  return undefined;
}

/** Image models from the `images` group answer (or from the whole catalog). */
export function parseImageModels(body: unknown): ImageModel[] {
  let entries = extractEntries(body, 'images');
  if (!entries.length) entries = extractGroups(body).get('images') ?? [];
  return entries.map(toImageModel);
}

/** Coerces an entry into an ImageModel; numbers may arrive as strings, lists may be absent. */
export function toImageModel(entry: CatalogEntry): ImageModel {
  const maxRefs = int(entry.max_input_references, 0);
  const minPrice = num(entry.min_price_per_image, num(entry.max_price_per_image, 0));
  return {
    id: entry.id,
    provider: str(entry.provider),
    description: str(entry.description),
    min_price_per_image: minPrice,
    max_price_per_image: Math.max(minPrice, num(entry.max_price_per_image, minPrice)),
    supported_resolutions: strings(entry.supported_resolutions),
    supported_aspect_ratios: strings(entry.supported_aspect_ratios),
    supported_quality: strings(entry.supported_quality),
    supported_output_formats: strings(entry.supported_output_formats),
    supported_background: strings(entry.supported_background),
    supports_seed: bool(entry.supports_seed, false),
    max_n: Math.max(1, Math.min(10, int(entry.max_n, 1))),
    max_input_references: maxRefs,
    supports_generation: bool(entry.supports_generation, true),
    supports_edit: bool(entry.supports_edit, maxRefs > 0),
    allowed_passthrough_parameters: strings(entry.allowed_passthrough_parameters),
  };
}

/** Whether the model can edit at all (both flags of the spec must allow it). */
export function canEdit(model: ImageModel): boolean {
  return model.supports_edit && model.max_input_references > 0;
}

function num(value: unknown, fallback: number): number {
  const n = typeof value === 'string' ? Number(value.replace(',', '.')) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : fallback;
}

function int(value: unknown, fallback: number): number {
  return Math.trunc(num(value, fallback));
}

function bool(value: unknown, fallback: boolean): boolean {
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 1) return true;
  if (value === 'false' || value === 0) return false;
  return fallback;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value ? value : undefined;
}

function strings(value: unknown): string[] {
  if (typeof value === 'string')
    return value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  if (!Array.isArray(value)) return [];
  return value.filter((v) => typeof v === 'string' || typeof v === 'number').map(String);
}
