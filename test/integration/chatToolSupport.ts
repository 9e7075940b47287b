// What the chat tools' tests read from a tool's result: its text, and the image parts VS Code
// carries where its API has LanguageModelDataPart; VS Code 1.100 has none, the text alone.
import * as assert from 'assert';
import * as vscode from 'vscode';
import { imageHeaderOf } from '../../src/core/images/imageHeader';

export interface ImagePart {
  mimeType: string;
  data: Uint8Array;
}

/** Whether this VS Code's API has LanguageModelDataPart.image (the tools then return previews). */
export const HAS_DATA_PARTS = typeof (vscode as unknown as { LanguageModelDataPart?: { image?: unknown } }).LanguageModelDataPart?.image === 'function';
export const NO_DATA_PARTS_REASON = `VS Code ${vscode.version} has no vscode.LanguageModelDataPart: the chat tools answer with text alone`;

export function textOf(result: vscode.LanguageModelToolResult): string {
  return result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('\n');
}

export function imagePartsOf(result: vscode.LanguageModelToolResult): ImagePart[] {
  return result.content.filter(
    (part): part is ImagePart =>
      !(part instanceof vscode.LanguageModelTextPart) && typeof (part as ImagePart).mimeType === 'string' && (part as ImagePart).data instanceof Uint8Array,
  );
}

/**
 * On a VS Code with data parts: `expected` image parts (at least one), PNG or JPEG, each at most
 * about a megapixel decoded. Without: no part but text, and the reason printed.
 */
export async function assertPreviews(result: vscode.LanguageModelToolResult, expected: number): Promise<void> {
  const images = imagePartsOf(result);
  if (!HAS_DATA_PARTS) {
    console.log(`      (previews skipped: ${NO_DATA_PARTS_REASON})`);
    assert.ok(
      result.content.every((part) => part instanceof vscode.LanguageModelTextPart),
      'a part other than text on a VS Code without data parts',
    );
    return;
  }
  assert.strictEqual(images.length, expected, `image parts: ${images.map((i) => i.mimeType).join(', ')}`);
  for (const image of images) {
    assert.ok(['image/png', 'image/jpeg'].includes(image.mimeType), image.mimeType);
    const header = await imageHeaderOf(image.data);
    assert.ok(header, 'the image part is not an image');
    assert.strictEqual(header.mediaType, image.mimeType);
    assert.ok(header.width * header.height <= 1024 * 1024, `preview of ${header.width}×${header.height}`);
  }
}
