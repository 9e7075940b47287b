// Where images may be written. Output stays inside the workspace folder unless the user's own
// settings (not a workspace's) name an absolute folder.
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

export function resolveOutputDirectory(location: OutputLocation): string {
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
    return path.resolve(configured.replace(/^~(?=[/\\])/, process.env.HOME ?? '~'));
  }
  if (!root) {
    throw new ValidationError('outputDirectory', l10n.t('No workspace folder is open, so a relative output folder has no place. Choose a folder.'));
  }
  const resolved = path.resolve(root, configured);
  if (!isInside(root, resolved)) {
    throw new ValidationError(
      'outputDirectory',
      l10n.t('"gatewayImages.outputDirectory" ({0}) leads outside the workspace folder; use a folder inside it.', configured),
    );
  }
  return resolved;
}

export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(path.resolve(root), path.resolve(candidate));
  // `..` or `../x` leaves the root; a name that merely starts with dots (`..data`) does not.
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}
