// "Save as Project Style…": a built-in starter style copied into the project's styles file. Bundled
// as dist/starterStyles.js, loaded on first use (starterStylesChunk.ts), so activation does not read it.
import * as vscode from 'vscode';
import { ValidationError } from '../../core/gateway/errors';
import { STYLES_FILE } from '../../core/requests/stylesPath';
import { type Services } from '../../services';
import { saveStyle } from './editStyles';
import type { StarterStylesCode } from './starterStylesChunk';
import { stylesCode } from './styles';

/**
 * "Save as Project Style…": copies a built-in starter style into the project's styles file (made
 * when missing; its other styles kept) under its own name or `as`, so the team can change it.
 * By arguments `{ style, as? }`; without, the person picks one. Resolves the saved name.
 */
export async function saveStarterStyle(services: Services, args?: unknown): Promise<string | undefined> {
  const given = typeof args === 'object' && args !== null ? (args as { style?: unknown; as?: unknown }) : undefined;
  const starters = stylesCode().starterStyles(await services.catalog.get());
  let name = typeof given?.style === 'string' ? given.style : undefined;
  if (name === undefined) {
    const picked = await vscode.window.showQuickPick(
      [...starters].map(([label, style]) => ({ label, description: style.model, detail: style.description })),
      {
        title: vscode.l10n.t('Save as Project Style'),
        placeHolder: vscode.l10n.t('Choose a built-in style to copy into {0}', STYLES_FILE),
        ignoreFocusOut: true,
      },
    );
    if (!picked) return undefined;
    name = picked.label;
  }
  const definition = starters.get(name);
  if (!definition) {
    const names = [...starters.keys()];
    throw new ValidationError(
      'style',
      vscode.l10n.t('There is no built-in style "{0}" for this catalog; built-in styles: {1}', name, names.join(', ') || '—'),
      names,
    );
  }
  const as = typeof given?.as === 'string' ? given.as : given ? name : undefined;
  return saveStyle(definition, name, as);
}

/** The chunk's API as its loader names it (starterStylesChunk.ts): if the two drift apart, this does not compile. */
export const starterStylesApi: StarterStylesCode = { saveStarterStyle };
