// The one confinement check of a path to a folder, symbolic links resolved, so a link shipped in a
// repository cannot lead reads or writes out. Where images may be written is decided with it by
// decideOutputFolder (core/files/outputFolder.ts).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

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
 * made). Used by the output folder decision, the studio's files and the MCP server's paths alike.
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
export async function realpathOfDeepestExisting(file: string): Promise<string> {
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
