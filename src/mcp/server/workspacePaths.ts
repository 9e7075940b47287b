// Every path the MCP server reads or writes is confined to the workspace root it was started for:
// relative paths are taken from the root, `..` and absolute paths that leave it are refused, and so
// are symbolic links that lead outside (core/files/outputPath.ts confine: the extension's own check). Output
// folders are decided by the extension's one rule (core/files/outputFolder.ts), with the origin of an agent.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ValidationError } from '../../core/gateway/errors';
import { decideOutputFolder } from '../../core/files/outputFolder';
import { confine } from '../../core/files/outputPath';

export class WorkspacePaths {
  /** `root` must already be a real path (readConfig resolves it). */
  constructor(readonly root: string) {}

  /** The absolute path of `input` (workspace-relative, or absolute inside the root), or a ValidationError naming `field`. */
  async resolve(field: string, input: string): Promise<string> {
    const text = input.trim();
    if (!text) throw new ValidationError(field, `"${field}" must not be empty; give a path relative to the workspace folder.`);
    let local = text;
    try {
      if (/^file:/i.test(text)) local = fileURLToPath(text);
    } catch {
      throw new ValidationError(field, `"${field}" (${text}) is not a valid file URI; give a path relative to the workspace folder.`);
    }
    const candidate = path.resolve(this.root, local);
    const confined = await confine(this.root, candidate);
    if (!confined.inside) throw this.outside(field, text, confined.throughLink);
    return candidate;
  }

  /**
   * The folder an agent's images go to: `input` relative to the workspace root (or `base`: an edit's
   * source folder), decided by the extension's one rule for agents: inside the root, links resolved.
   */
  async outputFolder(field: string, input: string, base = this.root): Promise<string> {
    let local = input.trim();
    try {
      if (/^file:/i.test(local)) local = fileURLToPath(local);
    } catch {
      throw new ValidationError(field, `"${field}" (${input}) is not a valid file URI; give a path relative to the workspace folder.`);
    }
    return decideOutputFolder({ value: local, origin: 'agent', base, workspaceFolders: [this.root], field });
  }

  /** Creates the decided folder and decides again once it exists: no link made meanwhile may lead outside. */
  async ensureDirectory(field: string, dir: string): Promise<string> {
    await fs.mkdir(dir, { recursive: true });
    return this.outputFolder(field, dir);
  }

  /** The path relative to the root, with forward slashes (what agents and people click). */
  relative(file: string): string {
    return path.relative(this.root, file).split(path.sep).join('/');
  }

  fileUri(file: string): string {
    return pathToFileURL(file).href;
  }

  private outside(field: string, input: string, link = false): ValidationError {
    const why = link ? ' (through a symbolic link)' : '';
    return new ValidationError(field, `"${field}" (${input}) leads outside the workspace folder${why}; only paths inside ${this.root} are allowed.`);
  }
}
