// Regenerate and Variations on a generated image (explorer context menu): the record of how it was
// made (the PNG's provenance chunk first, else the workspace history) fills the Image Studio's form.
// Nothing is ever sent from here: the person reviews the form and presses Generate.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { summarizeError } from '../../core/gateway/errors';
import { readPngTextChunk } from '../../core/files/pngText';
import { type GenerationRequest } from '../../core/gateway/types';
import { PROVENANCE_KEYWORD } from '../../jobs/provenance';
import { type Services } from '../../services';
import { isRecord } from '../../core/common/json';
import type { StyleRecord } from '../../core/requests/styleFile';
import { stylesRoot } from '../styles/styles';
import { messageText } from '../../core/common/markdownText';

export interface ImageRecord {
  request: GenerationRequest;
  /** Local reference images as sent (from the history; else a style's, from the PNG chunk). */
  references: string[];
  source: 'png' | 'history';
  /** The style it was made with: the request holds the values it resolved to then. */
  style?: StyleRecord;
}

/** What the commands resolve to (for keybindings and tests): the record the studio was filled with. */
export type PrefillResult = ImageRecord;

const VARIATIONS_MAX_N = 4;

/** Opens the Image Studio with its form filled (lent by the composition root: commands do not import the studio). */
export type OpenStudioWith = (request: GenerationRequest, references: string[], madeWithStyle?: string) => Promise<void>;

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
      messageText(vscode.l10n.t('{0} has no generation record: it has no provenance data and is not in this workspace’s history.', path.basename(uri.fsPath))),
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
  // The request as it was sent (the style's values then): the style is named, not applied again.
  await openStudioWith(request, record.references, record.style?.name);
  return { request, references: record.references, source: record.source, ...(record.style ? { style: record.style } : {}) };
}

/** The record of a generated image: its PNG chunk when it has one, else the history entry of the file. */
export async function readImageRecord(services: Services, file: string): Promise<ImageRecord | undefined> {
  const entry = (await services.history.index()).findByFile(file);
  const references = entry?.references ?? [];
  if (path.extname(file).toLowerCase() === '.png') {
    try {
      const text = await readPngTextChunk(file, PROVENANCE_KEYWORD);
      const request = text === undefined ? undefined : requestFromProvenance(text);
      if (request) {
        const style = styleFromProvenance(text!) ?? entry?.style;
        // An image made elsewhere (a teammate's, through git): the style's references, where the style had them.
        const sent = entry ? references : styleReferences(style, text!, file);
        return { request, references: sent, source: 'png', ...(style ? { style } : {}) };
      }
    } catch (error) {
      services.log.warn(`Could not read the provenance of ${path.basename(file)}: ${summarizeError(error).message}`);
    }
  }
  return entry ? { request: entry.request, references, source: 'history', ...(entry.style ? { style: entry.style } : {}) } : undefined;
}

/** The style of a provenance chunk, when it has the shape of one (the file is untrusted). */
function styleFromProvenance(text: string): StyleRecord | undefined {
  const style = (JSON.parse(text) as { style?: unknown }).style;
  if (!isRecord(style) || typeof style.name !== 'string' || typeof style.file !== 'string' || !isRecord(style.values)) return undefined;
  return { name: style.name, file: style.file, values: style.values };
}

/** The style's references in the workspace folder of `file`, when the request sent as many references as the style had. */
function styleReferences(style: StyleRecord | undefined, text: string, file: string): string[] {
  const listed = style?.values.references;
  const sent = (JSON.parse(text) as { references?: unknown }).references;
  const root = stylesRoot(vscode.Uri.file(file));
  if (!Array.isArray(listed) || root === undefined || sent !== listed.length) return [];
  return listed.filter((r): r is string => typeof r === 'string').map((r) => path.resolve(root, r));
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
