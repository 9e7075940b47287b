// The one decision of where images may be written, for every entry point (commands, studio, chat
// tool, prompt files, styles, MCP server). Two rules:
// - a folder inside the workspace never leads outside it through a symbolic link (links resolved,
//   also those of the part not made yet);
// - a folder outside the workspace is named only by the person: their own settings, or an absolute
//   command argument (whose caller runs with their rights). The workspace's settings, its styles and
//   agents are confined to the workspace.
// No vscode import: the host adapter (commands/common/outputFolder.ts) supplies folders and settings.
import * as os from 'node:os';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { promises as fs } from 'node:fs';
import { ValidationError } from '../gateway/errors';
import { isInside, realpathOfDeepestExisting } from './outputPath';

/** Who named the folder: it decides whether the folder may lie outside the workspace. */
export type OutputFolderOrigin =
  /** A command's argument, or an image the caller gave (its folder): the caller runs with the user's rights. */
  | 'argument'
  /** The user's own settings (or the extension's default). */
  | 'user-settings'
  /** The workspace's settings: the repository's. */
  | 'workspace-settings'
  /** A project style: the repository's. */
  | 'style'
  /** The chat tool or the MCP server. */
  | 'agent';

export interface OutputFolderQuestion {
  /** The folder as given: relative, absolute, or `~/…`. */
  value: string;
  origin: OutputFolderOrigin;
  /** What a relative value is taken from (generation: the workspace folder; an edit: its first source's folder). */
  base?: string;
  /** The workspace folders (absolute paths); empty when none is open. */
  workspaceFolders: readonly string[];
  /** The field named in a refusal: `outputDirectory`, `gatewayImages.outputDirectory`, `output_directory`... */
  field: string;
}

export type OutputFolderRefusal = 'empty' | 'no-workspace' | 'through-link' | 'outside';

/** A refused output folder. `detail` says why without the field, for callers that name the field their own way (styles). */
export class OutputFolderError extends ValidationError {
  constructor(
    field: string,
    readonly reason: OutputFolderRefusal,
    readonly detail: string,
  ) {
    super(field, `"${field}": ${detail}`);
  }
}

const MAY_NAME_OUTSIDE: readonly OutputFolderOrigin[] = ['argument', 'user-settings'];

/**
 * The real path of the folder the images go to (symbolic links resolved; inside the workspace it is
 * written under the workspace folder's own path), or an OutputFolderError naming the field and what
 * is allowed. Reads the disk (links), writes nothing.
 */
export async function decideOutputFolder(question: OutputFolderQuestion): Promise<string> {
  const { origin, field } = question;
  const value = question.value.trim();
  const refuse = (reason: OutputFolderRefusal, detail: string) => new OutputFolderError(field, reason, detail);
  if (!value) throw refuse('empty', l10n.t('the value is empty; give a folder'));
  const expanded = /^~(?=$|[/\\])/.test(value) ? path.join(os.homedir(), value.slice(1)) : value;
  const absolute = path.isAbsolute(expanded);
  if (!absolute && question.base === undefined) {
    throw refuse('no-workspace', l10n.t('{0} is a relative folder, and no workspace folder is open to hold it; give an absolute folder', value));
  }
  const target = path.resolve(question.base ?? '', expanded);
  const roots = await Promise.all(question.workspaceFolders.map(async (folder) => ({ folder, real: await realFolder(folder) })));
  const insideByName = (file: string) => roots.some((root) => isInside(root.folder, file) || isInside(root.real, file));

  if (insideByName(target)) {
    // Named inside the workspace: wherever its links lead must be inside too.
    const real = await realpathOfDeepestExisting(target);
    const home = roots.find((root) => isInside(root.real, real));
    if (!home)
      throw refuse(
        'through-link',
        l10n.t('{0} leads outside the workspace folder through a symbolic link (to {1}); use a folder inside it whose links stay inside', value, real),
      );
    return path.join(home.folder, path.relative(home.real, real));
  }
  if (!MAY_NAME_OUTSIDE.includes(origin)) throw refuse('outside', outsideDetail(origin, value, question.workspaceFolders));
  // A relative value may not climb out of the workspace; from a base outside it (an image the caller chose there) it stays the caller's.
  if (!absolute && question.base !== undefined && insideByName(question.base)) {
    throw refuse(
      'outside',
      l10n.t('{0} leads outside the workspace folder; a relative folder must stay inside it (give an absolute folder to write elsewhere)', value),
    );
  }
  return realpathOfDeepestExisting(target);
}

function outsideDetail(origin: OutputFolderOrigin, value: string, workspaceFolders: readonly string[]): string {
  switch (origin) {
    case 'workspace-settings':
      return l10n.t(
        '{0} is outside the workspace folder; the workspace settings may only choose a folder inside it (only your user settings may name one elsewhere)',
        value,
      );
    case 'style':
      return l10n.t('{0} is outside the workspace folder; a project style may only choose a folder inside it', value);
    default:
      return l10n.t('{0} is outside the workspace folder; agents may only write inside {1}', value, workspaceFolders.join(', ') || '—');
  }
}

async function realFolder(folder: string): Promise<string> {
  return fs.realpath(folder).catch(() => path.resolve(folder));
}
