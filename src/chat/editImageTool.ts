// The language model tool `gatewayImages_editImage`: chat agents edit workspace images through the
// same job as the Edit Image with AI command. The references are confined to the workspace's folders
// (core/files/workspaceReferences.ts) and checked with the estimate before anything is sent; the
// confirmation shows the model, the references, the reservation and the range (toolParts.ts).
import * as vscode from 'vscode';
import { canEdit } from '../core/gateway/catalog';
import { ValidationError } from '../core/gateway/errors';
import { type SpendingCap } from '../core/money/spendingCap';
import { resolveWorkspaceReferences } from '../core/files/workspaceReferences';
import { type EditArgs, toGenerateArgs } from '../commands/common/commandArgs';
import { editImage, editJobOf } from '../commands/images/editImage';
import { styleValues } from '../commands/styles/styles';
import { type Services } from '../services';
import { trPlural } from '../core/common/plural';
import { markdownText } from '../core/common/markdownText';
import { ConfirmedReservations, confirmationMessage, invokeImageTool } from './toolParts';
import { byPrice, type GenerateImageInput, keyOf, LAST_MODEL_KEY } from './generateImageTool';

/** The tool's input (package.json `languageModelTools[].inputSchema`): the generation's fields and the images. */
export interface EditImageInput extends GenerateImageInput {
  /** Workspace-relative paths (or file URIs inside the workspace) of the images to edit; the first is the source. */
  images: string[];
}

export function createEditImageTool(services: Services, cap: SpendingCap): vscode.LanguageModelTool<EditImageInput> {
  const confirmed = new ConfirmedReservations();
  return {
    async prepareInvocation({ input }) {
      try {
        const args = await resolveEditArgs(services, input);
        const { job, styled } = await editJobOf(services, args);
        const { model, estimate } = await services.jobs.prepare(job);
        confirmed.remember(keyOf(args), estimate.reservation);
        const references = (args.images as string[]).map((file) => vscode.workspace.asRelativePath(file, false));
        return {
          invocationMessage: new vscode.MarkdownString(markdownText(vscode.l10n.t('Editing {0} with {1}…', references[0] ?? '', model.id))),
          confirmationMessages: {
            title: trPlural(references.length, { one: 'Edit {0} image with {1}?', other: 'Edit {0} images with {1}?' }, references.length, model.id),
            message: confirmationMessage(services, styled, model, estimate, references),
          },
        };
      } catch {
        // Invalid input, a path outside the workspace, no key...: invoke() reports why, and sends nothing.
        return { invocationMessage: vscode.l10n.t('Checking the image request…') };
      }
    },

    invoke: ({ input }, token) =>
      invokeImageTool(services, token, {
        kind: 'edit',
        confirmed,
        cap,
        resolve: () => resolveEditArgs(services, input),
        keyOf,
        run: (withCap, args, extra) => editImage(withCap, args, false, extra),
      }),
  };
}

/** The input as Edit Image arguments: the references inside the workspace, a default model that edits that many. */
async function resolveEditArgs(services: Services, input: EditImageInput): Promise<EditArgs> {
  if (typeof input !== 'object' || input === null)
    throw new ValidationError('prompt', vscode.l10n.t('The tool input must be an object with a "prompt" and "images".'));
  const roots = (vscode.workspace.workspaceFolders ?? []).filter((folder) => folder.uri.scheme === 'file').map((folder) => folder.uri.fsPath);
  const images = await resolveWorkspaceReferences(input.images, roots);
  const given = typeof input.model === 'string' && input.model.trim() ? input.model.trim() : undefined;
  const styleModel = !given && typeof input.style === 'string' ? (await styleValues(input.style, undefined, services))?.model : undefined;
  const model = given ?? (styleModel ? '' : await defaultEditModel(services, images.length));
  const { images: _images, ...rest } = input;
  const args = toGenerateArgs({ ...rest, model, prompt: typeof input.prompt === 'string' ? input.prompt.trim() : input.prompt });
  // No folder of the agent's: the results go next to the first image, inside the workspace.
  delete args.outputDirectory;
  return { ...args, images };
}

/** The remembered last model when it edits this many references, else the cheapest that does. */
async function defaultEditModel(services: Services, references: number): Promise<string> {
  const models = (await services.catalog.get()).filter((m) => canEdit(m) && m.max_input_references >= references);
  const last = services.context.globalState.get<string>(LAST_MODEL_KEY);
  if (last && models.some((m) => m.id === last)) return last;
  const cheapest = [...models].sort(byPrice)[0];
  if (!cheapest)
    throw new ValidationError(
      'model',
      trPlural(
        references,
        { one: 'The gateway lists no model that edits with {0} reference image.', other: 'The gateway lists no model that edits with {0} reference images.' },
        references,
      ),
    );
  return cheapest.id;
}
