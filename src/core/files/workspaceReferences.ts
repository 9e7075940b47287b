// An agent's reference images (the chat tool gatewayImages_editImage): paths relative to a workspace
// folder, absolute ones or file URIs inside one. Anything that leads out (`..`, another folder, a
// symbolic link) is refused by the one confinement check (outputPath.ts confine), as the MCP
// server's paths are (mcp/server/workspacePaths.ts), before anything is read or sent.
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as l10n from '@vscode/l10n';
import { ValidationError } from '../gateway/errors';
import { confine } from './outputPath';

const FIELD = 'images';
/** More references than any model takes: a longer list is refused before the disk is touched. */
const MAX_REFERENCES = 16;

/** The real paths of `images` (a list of texts), each inside one of `roots`, or a ValidationError naming "images". */
export async function resolveWorkspaceReferences(images: unknown, roots: readonly string[]): Promise<string[]> {
  if (!Array.isArray(images) || !images.length || !images.every((image) => typeof image === 'string')) {
    throw new ValidationError(FIELD, l10n.t('"images" must be a list of image paths relative to the workspace folder.'));
  }
  if (images.length > MAX_REFERENCES)
    throw new ValidationError(FIELD, l10n.t('"images" holds {0} paths; at most {1} are taken.', images.length, MAX_REFERENCES));
  if (!roots.length) throw new ValidationError(FIELD, l10n.t('Open a workspace folder first: reference images are read from it only.'));
  const resolved: string[] = [];
  for (const image of images) resolved.push(await resolveOne(image, roots));
  return resolved;
}

async function resolveOne(input: string, roots: readonly string[]): Promise<string> {
  const text = input.trim();
  if (!text) throw new ValidationError(FIELD, l10n.t('An image path in "images" is empty; give paths relative to the workspace folder.'));
  const place = await placeInWorkspace(text, roots);
  if ('inside' in place) return place.inside;
  if ('invalidUri' in place) throw new ValidationError(FIELD, l10n.t('"{0}" is not a valid file URI; give a path relative to the workspace folder.', text));
  const { throughLink } = place;
  throw new ValidationError(
    FIELD,
    throughLink
      ? l10n.t('"{0}" leads outside the workspace folder through a symbolic link; only images inside the workspace are read.', text)
      : l10n.t('"{0}" leads outside the workspace folder; only images inside the workspace are read.', text),
  );
}

/** Where a path, absolute path or file URI from outside lands: inside one of `roots` (links resolved), or why not. */
export type WorkspacePlace = { inside: string } | { invalidUri: true } | { outside: true; throughLink: boolean };

export async function placeInWorkspace(text: string, roots: readonly string[]): Promise<WorkspacePlace> {
  let local = text;
  try {
    if (/^file:/i.test(text)) local = fileURLToPath(text);
  } catch {
    return { invalidUri: true };
  }
  let throughLink = false;
  for (const root of roots) {
    const candidate = path.resolve(root, local);
    const confined = await confine(root, candidate);
    if (confined.inside) return { inside: candidate };
    throughLink ||= confined.throughLink;
  }
  return { outside: true, throughLink };
}
