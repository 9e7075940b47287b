// Edit Image with AI: from the explorer (one or several images), the image preview's title bar,
// the palette, or without prompts from arguments. Results are saved next to the first source.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { canEdit } from '../../core/gateway/catalog';
import type { ImageModel } from '../../core/gateway/types';
import { ValidationError } from '../../core/gateway/errors';
import { readPathSetting, readSettings } from '../../host/settings';
import { aspectDefaultFor, withAspectDefault } from '../../jobs/editShape';
import type { ImageJob } from '../../jobs/jobTypes';
import type { StyledRequest } from '../../jobs/styledRequest';
import { type Services } from '../../services';
import { type EditArgs, isArgsObject, styleInputOf, toGenerateArgs } from '../common/commandArgs';
import { type CommandResult, type RunExtras, runJobCommand } from './jobRunner';
import { resolveEditOutputFolder } from '../common/outputFolder';
import { askPrompt, pickModel, REGION_CHOICE, reviewRequest } from './pickers';
import { runCommandBody } from '../common/showError';
import { applyStyle, askStyle, showStyleNotes, styledJob } from '../styles/styles';
import { trPlural } from '../../core/common/plural';
import { regionArgsOf, resolveMaskPath } from '../../core/files/maskInput';
import { regionEditCode } from '../../jobs/regionEditChunk';
import { markRegionEditSent } from '../../jobs/regionPending';
import type { JobResult } from '../../jobs/jobTypes';

export const EDIT_FILE_NAME_PATTERN_DEFAULT = '{name}.edit-{index}';
const IMAGE_EXTENSIONS = ['png', 'jpg', 'jpeg', 'webp'];

export function registerEditImage(services: Services): vscode.Disposable {
  return vscode.commands.registerCommand('gatewayImages.editImage', (first?: unknown, selected?: unknown) => editImageCommand(services, first, selected));
}

export async function editImageCommand(services: Services, first?: unknown, selected?: unknown): Promise<CommandResult | undefined> {
  if (isArgsObject(first)) return runCommandBody(services, true, (errorActions) => editImage(services, toEditArgs(first), false, { errorActions }));
  return runCommandBody(services, false, async (errorActions) => {
    const images = await imagesFromInvocation(first, selected);
    const args = images.length ? await askEditArgs(services, images) : undefined;
    return args ? editImage(services, args, true, { errorActions }) : undefined;
  });
}

/**
 * Runs an edit; shared by the command, the public API, the studio and the chat tool. The sources are
 * the first references (a style's follow); results go next to the first source unless the style names a folder.
 */
/** A mask the studio's editor painted: a file of ours (outside the workspace), named in messages by `shown`. */
export interface PaintedMask {
  file: string;
  shown: string;
}

export async function editImage(
  services: Services,
  args: EditArgs,
  interactive: boolean,
  { paintedMask, ...extra }: RunExtras & { paintedMask?: PaintedMask } = {},
): Promise<CommandResult> {
  const { job: plain, styled, source, sourceUri } = await editJobOf(services, args);
  // A mask (a region edit) is checked and the crop decided before anything is estimated or reserved.
  const region = await regionEditOf(services, args, plain, paintedMask);
  if (interactive) showStyleNotes(styled);
  const title = region
    ? vscode.l10n.t('Editing a region of {0} with {1}', path.basename(source), styled.request.model)
    : vscode.l10n.t('Editing {0} with {1}', path.basename(source), styled.request.model);
  const result = await runJobCommand(services, region?.job ?? plain, {
    title,
    interactive,
    openBeside: sourceUri,
    forceConfirm: styled.confirm,
    origin: { kind: 'edit' },
    ...(region ? { finish: region.finish } : {}),
    ...extra,
  });
  // Kept after a failure: the retry the error offers sends the same crop.
  await region?.dispose();
  return result;
}

/** The region edit of `args.mask` (undefined without one): the mask confined to the workspace folders and checked, the crop written. */
async function regionEditOf(services: Services, args: EditArgs, job: ImageJob, painted?: PaintedMask) {
  if (args.mask === undefined && !painted) return undefined;
  const roots = (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath);
  const mask = painted?.file ?? (await resolveMaskPath(args.mask!, roots));
  const model = (await services.catalog.get().catch(() => [])).find((m) => m.id === job.request.model);
  const plan = await regionEditCode().planRegionEdit({
    images: job.references ?? [],
    mask,
    ...(painted ? { maskShown: painted.shown, maskKeptBeside: true } : {}),
    feather: args.feather,
    format: args.format,
    model,
  });
  const { job: regionJob, dispose } = await regionEditCode().regionJobOf(job, plan, model);
  // A start in the next days looks for a region edit a closed window left half done (regionRecoveryStart.ts).
  await markRegionEditSent(services.history.file);
  const finish = async (result: JobResult): Promise<JobResult> => {
    const outcome = await regionEditCode().finishRegionEdit(plan, result);
    // A paid answer that could not be pasted is kept as it came: said, not thrown.
    for (const note of outcome.notes) {
      services.log.warn(note);
      void vscode.window.showWarningMessage(note);
    }
    const notes = [...(result.notes ?? []), ...outcome.notes];
    // A painted mask's own file is the studio's, and goes: the journal names the copy kept beside the result.
    const region = plan.maskKeptBeside && outcome.masks[0] ? { ...plan.record, mask: outcome.masks[0] } : plan.record;
    return { ...result, files: outcome.files, region, ...(notes.length ? { notes } : {}) };
  };
  return { job: regionJob, finish, dispose };
}

/** The job an edit would run (the style applied, the folder decided, the source's shape kept); sends nothing. */
export async function editJobOf(services: Services, args: EditArgs): Promise<{ job: ImageJob; styled: StyledRequest; source: string; sourceUri: vscode.Uri }> {
  const images = args.images.map(toFilePath);
  const source = images[0];
  if (source === undefined) throw new ValidationError('images', vscode.l10n.t('Give at least one image to edit.'));
  const sourceUri = vscode.Uri.file(source);
  const { images: _images, mask: _mask, feather: _feather, format: _format, wholeImage: _wholeImage, ...rest } = args;
  const styled = await applyStyle(services, args.style, { ...styleInputOf(rest), references: images }, sourceUri);
  const directory = await resolveEditOutputFolder(source, args.outputDirectory, styled.output.directory);
  const pattern = styled.output.pattern ?? readPathSetting('editFileNamePattern', EDIT_FILE_NAME_PATTERN_DEFAULT, sourceUri).value;
  // No aspect ratio chosen (nor by the style): keep the source's shape (the model's nearest ratio). An unknown model is left to validation.
  const model = (await services.catalog.get().catch(() => [])).find((m) => m.id === styled.request.model);
  const job = styledJob(styled, { directory, pattern, sourceName: path.basename(source, path.extname(source)) }, readSettings().editTransport);
  job.request = await withAspectDefault(job.request, model, source);
  return { job, styled, source, sourceUri };
}

function toEditArgs(args: Record<string, unknown>): EditArgs {
  const images = args.images;
  if (!Array.isArray(images)) throw new ValidationError('images', vscode.l10n.t('"images" must be a list of image files (Uri or path).'));
  return { ...toGenerateArgs(args), images, ...regionArgsOf(args) };
}

function toFilePath(value: unknown): string {
  if (value instanceof vscode.Uri) return value.fsPath;
  if (typeof value === 'string') return value.startsWith('file:') ? vscode.Uri.parse(value).fsPath : value;
  if (typeof value === 'object' && value && 'fsPath' in value && typeof value.fsPath === 'string') return value.fsPath;
  throw new ValidationError('images', vscode.l10n.t('"images" must contain Uri objects or file paths.'));
}

/** The explorer passes (clicked, allSelected); the editor title passes the open image; the palette nothing. */
async function imagesFromInvocation(first?: unknown, selected?: unknown): Promise<vscode.Uri[]> {
  if (Array.isArray(selected) && selected.length && selected.every((u) => u instanceof vscode.Uri)) return selected;
  if (first instanceof vscode.Uri) return [first];
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: true,
    filters: { [vscode.l10n.t('Images')]: IMAGE_EXTENSIONS },
    openLabel: vscode.l10n.t('Edit'),
    defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
  });
  return picked ?? [];
}

/** The questions of an edit; undefined when the person chose to change only a region (the studio's editor takes over). */
async function askEditArgs(services: Services, images: vscode.Uri[]): Promise<EditArgs | undefined> {
  await services.connection.assertReady();
  const count = images.length;
  const first = images[0];
  if (!first) throw new ValidationError('images', vscode.l10n.t('Give at least one image to edit.'));
  const title =
    count === 1
      ? vscode.l10n.t('Edit {0}', path.basename(first.fsPath))
      : trPlural(count, { one: 'Edit with {0} reference', other: 'Edit with {0} references' }, count);
  const asked = await askStyle(services, title, first);
  const canTake = (m: ImageModel) => canEdit(m) && m.max_input_references >= count;
  const model = count === 1 ? await pickModel(services, canTake, title, asked, { offerRegion: true }) : await pickModel(services, canTake, title, asked);
  if (model === REGION_CHOICE) {
    await vscode.commands.executeCommand('gatewayImages.editRegion', first);
    return undefined;
  }
  const prompt = await askPrompt(title, '', vscode.l10n.t('What should change? e.g. make the sky stormy'));
  const aspectDefault = await aspectDefaultFor(model, first.fsPath);
  const references = images.map((u) => u.fsPath);
  const { options, style } = await reviewRequest(services, model, { prompt, style: asked, references, styleUri: first }, title, aspectDefault);
  return { ...options, model: model.id, prompt, images, ...(style ? { style } : {}) };
}
