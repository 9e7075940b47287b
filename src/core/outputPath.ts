// Where images may be written, and the one confinement check of a path to a folder. Output stays
// inside the workspace folder unless the user's own settings (not a workspace's) name an absolute
// folder; symbolic links are resolved, so a link shipped in a repository cannot lead the writes out.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ValidationError } from './errors';
import * as l10n from '@vscode/l10n';

export interface OutputLocation {
  /** The setting's value as configured. */
  configured: string;
  /** True when the value comes from the user's settings (or a command argument), not the workspace. */
  trustedSource: boolean;
  /** The workspace folder the output belongs to, when one is open. */
  workspaceFolder?: string;
}

export async function resolveOutputDirectory(location: OutputLocation): Promise<string> {
  const configured = location.configured.trim() || 'generated-images';
  const root = location.workspaceFolder;
  if (path.isAbsolute(configured) || /^~[/\\]/.test(configured)) {
    if (!location.trustedSource) {
      throw new ValidationError(
        'outputDirectory',
        l10n.t(
          '"gatewayImages.outputDirectory" is an absolute folder ({0}) set by the workspace; only your user settings may name a folder outside the workspace.',
          configured,
        ),
      );
    }
    return path.resolve(configured.replace(/^~(?=[/\\])/, os.homedir()));
  }
  if (!root) {
    throw new ValidationError('outputDirectory', l10n.t('No workspace folder is open, so a relative output folder has no place. Choose a folder.'));
  }
  const resolved = path.resolve(root, configured);
  const confined = await confine(root, resolved);
  if (!confined.inside) {
    throw new ValidationError(
      'outputDirectory',
      confined.throughLink
        ? l10n.t('"gatewayImages.outputDirectory" ({0}) leads outside the workspace folder through a symbolic link; use a folder inside it.', configured)
        : l10n.t('"gatewayImages.outputDirectory" ({0}) leads outside the workspace folder; use a folder inside it.', configured),
    );
  }
  return resolved;
}

export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(path.resolve(root), path.resolve(candidate));
  // `..` or `../x` leaves the root; a name that merely starts with dots (`..data`) does not.
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

/** Where a path really leads, and whether that is inside the folder (`throughLink`: only once links are resolved). */
export type Confinement = { inside: true; real: string } | { inside: false; throughLink: boolean };

/**
 * The one check that a path (relative to `root`, or absolute) stays inside `root`: by its text, then
 * by its real path, symbolic links resolved (those of the part that exists; the rest is yet to be
 * made). Used for the output folder, the studio's files and the MCP server's paths alike.
 */
export async function confine(root: string, candidate: string): Promise<Confinement> {
  const resolved = path.resolve(root, candidate);
  const realRoot = await fs.realpath(root).catch(() => path.resolve(root));
  if (!isInside(root, resolved) && !isInside(realRoot, resolved)) return { inside: false, throughLink: false };
  const real = await realpathOfDeepestExisting(resolved);
  return isInside(realRoot, real) ? { inside: true, real } : { inside: false, throughLink: true };
}

/**
 * The real path of `file`, or of its deepest existing ancestor joined with the rest. A link whose
 * target does not exist yet is followed too: making the folder would create it there.
 */
async function realpathOfDeepestExisting(file: string): Promise<string> {
  let current = file;
  const rest: string[] = [];
  // Bounded like the system's own link resolution (a loop of links ends here).
  for (let links = 0; links < 40;) {
    try {
      return path.join(await fs.realpath(current), ...rest);
    } catch {
      const target = await fs.readlink(current).catch(() => undefined);
      if (target !== undefined) {
        links++;
        current = path.resolve(path.dirname(current), target);
        continue;
      }
      const parent = path.dirname(current);
      if (parent === current) return file;
      rest.unshift(path.basename(current));
      current = parent;
    }
  }
  return file;
}
