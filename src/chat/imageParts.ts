// The chat tools' results carry what they made: LanguageModelDataPart.image, a preview of at most about
// a megapixel (core/files/imagePreview.ts, loaded from dist/imagePreview.js on the first result), so
// a model can judge its image and try again. VS Code 1.100's API has no data parts: the text alone then.
import * as vscode from 'vscode';
import type * as ImagePreviewModule from '../core/files/imagePreview';

/** Previews per result: a model judges a few images, it does not need ten megapixels of them. */
const MAX_PREVIEWS = 4;

type ImagePart = (data: Uint8Array, mimeType: string) => unknown;

/** LanguageModelDataPart.image of this VS Code, or undefined where the API has no data parts (1.100). */
export function imagePartFactory(): ImagePart | undefined {
  try {
    const dataPart = (vscode as unknown as { LanguageModelDataPart?: { image?: ImagePart } }).LanguageModelDataPart;
    return typeof dataPart?.image === 'function' ? dataPart.image.bind(dataPart) : undefined;
  } catch {
    // A host that guards the name (a proposed API there): no data parts.
    return undefined;
  }
}

let previewCode: typeof ImagePreviewModule | undefined;
/** Loads dist/imagePreview.js on the first result; esbuild leaves this require alone. */
function imagePreview(): typeof ImagePreviewModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  previewCode ??= require('./imagePreview.js') as typeof ImagePreviewModule;
  return previewCode;
}

/** Image parts of the first saved files (none without data parts, or when no preview can be made). */
export async function previewParts(files: readonly string[], log: (message: string) => void): Promise<unknown[]> {
  const image = imagePartFactory();
  if (!image || !files.length) return [];
  const parts: unknown[] = [];
  try {
    for (const file of files.slice(0, MAX_PREVIEWS)) {
      const preview = await imagePreview().agentPreviewOf(file);
      if (preview) parts.push(image(new Uint8Array(preview.data), preview.mimeType));
    }
  } catch (error) {
    // A missing chunk or decoder must not lose the paid result's text.
    log(`No preview for the chat tool's result: ${String(error)}`);
  }
  return parts;
}
