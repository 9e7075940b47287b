// Regenerate and Variations on a generated image (explorer context menu): the record of how it was
// made (the PNG's provenance chunk first, else the workspace history) fills the Image Studio's form.
// Nothing is ever sent from here: the person reviews the form and presses Generate.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { summarizeError } from '../core/errors';
import { readPngTextChunk } from '../core/pngText';
import { type GenerationRequest } from '../core/types';
import { PROVENANCE_KEYWORD } from '../jobs/provenance';
import { type Services } from '../services';
import { isRecord } from '../core/json';

export interface ImageRecord {
  request: GenerationRequest;
  /** Local source images of an edit (from the history; the PNG chunk holds none). */
  references: string[];
  source: 'png' | 'history';
}

/** What the commands resolve to (for keybindings and tests): the record the studio was filled with. */
export type PrefillResult = ImageRecord;

const VARIATIONS_MAX_N = 4;

/** Opens the Image Studio with its form filled (lent by the composition root: commands do not import the studio). */
export type OpenStudioWith = (request: GenerationRequest, references: string[]) => Promise<void>;

export function registerProvenance(services: Services, openStudioWith: OpenStudioWith): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.commands.registerCommand('gatewayImages.regenerate', (uri?: unknown) => prefillFrom(services, openStudioWith, uri, 'regenerate')),
    vscode.commands.registerCommand('gatewayImages.variations', (uri?: unknown) => prefillFrom(services, openStudioWith, uri, 'variations')),
  );
}

async function prefillFrom(
  services: Services,
  openStudioWith: OpenStudioWith,
  arg: unknown,
  mode: 'regenerate' | 'variations',
): Promise<PrefillResult | undefined> {
  const uri = toFileUri(arg) ?? activeImageUri();
  if (!uri) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Choose a generated image in the Explorer to use its settings.'));
    return undefined;
  }
  const record = await readImageRecord(services, uri.fsPath);
  if (!record) {
    void vscode.window.showInformationMessage(
      vscode.l10n.t('{0} has no generation record: it has no provenance data and is not in this workspace’s history.', path.basename(uri.fsPath)),
    );
    return undefined;
  }
  let request = record.request;
  if (mode === 'variations') {
    const models = await services.catalog.get().catch(() => services.catalog.peek());
    const maxN = models.find((m) => m.id === request.model)?.max_n ?? VARIATIONS_MAX_N;
    const { seed: _seed, ...rest } = request;
    request = { ...rest, n: Math.max(1, Math.min(VARIATIONS_MAX_N, maxN)) };
  }
  await openStudioWith(request, record.references);
  return { request, references: record.references, source: record.source };
}

/** The record of a generated image: its PNG chunk when it has one, else the history entry of the file. */
export async function readImageRecord(services: Services, file: string): Promise<ImageRecord | undefined> {
  const entry = (await services.history.index()).findByFile(file);
  const references = entry?.references ?? [];
  if (path.extname(file).toLowerCase() === '.png') {
    try {
      const text = await readPngTextChunk(file, PROVENANCE_KEYWORD);
      const request = text === undefined ? undefined : requestFromProvenance(text);
      if (request) return { request, references, source: 'png' };
    } catch (error) {
      services.log.warn(`Could not read the provenance of ${path.basename(file)}: ${summarizeError(error).message}`);
    }
  }
  return entry ? { request: entry.request, references, source: 'history' } : undefined;
}

const TEXT_FIELDS = ['resolution', 'aspect_ratio', 'size', 'quality', 'output_format', 'background'] as const;

/** A request from the JSON of a provenance chunk; only known fields of the right type are taken (the file is untrusted). */
export function requestFromProvenance(text: string): GenerationRequest | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(value) || typeof value.model !== 'string' || typeof value.prompt !== 'string') return undefined;
  const request: GenerationRequest = { model: value.model, prompt: value.prompt };
  if (Number.isSafeInteger(value.seed)) request.seed = value.seed as number;
  const parameters = isRecord(value.parameters) ? value.parameters : {};
  if (Number.isSafeInteger(parameters.n)) request.n = parameters.n as number;
  if (Number.isSafeInteger(parameters.output_compression)) request.output_compression = parameters.output_compression as number;
  for (const key of TEXT_FIELDS) if (typeof parameters[key] === 'string') request[key] = parameters[key];
  if (isRecord(parameters.params)) {
    const params = Object.entries(parameters.params).filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v));
    if (params.length) request.params = Object.fromEntries(params) as GenerationRequest['params'];
  }
  return request;
}

function toFileUri(arg: unknown): vscode.Uri | undefined {
  if (arg instanceof vscode.Uri) return arg.scheme === 'file' ? arg : undefined;
  if (typeof arg === 'string' && arg) return arg.startsWith('file:') ? vscode.Uri.parse(arg) : vscode.Uri.file(arg);
  return undefined;
}

/** The image open in the active tab (the image preview), when the command runs from the palette. */
function activeImageUri(): vscode.Uri | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  const uri = input instanceof vscode.TabInputCustom || input instanceof vscode.TabInputText ? input.uri : undefined;
  return uri?.scheme === 'file' && /\.(png|jpe?g|webp)$/i.test(uri.path) ? uri : undefined;
}
