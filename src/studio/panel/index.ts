// Registers the Image Studio cheaply: the command and the serializer only. The panel's code
// (HTML, message handling, the gallery feed) is its own chunk, dist/studioHost.js, loaded when the
// studio first opens, so activation stays light.
import * as vscode from 'vscode';
import type { GenerationRequest } from '../../core/gateway/types';
import { type Services } from '../../services';
import { STUDIO_VIEW_TYPE } from '../protocol/protocol';
import type * as StudioPanelModule from './studioPanel';

type StudioHost = typeof StudioPanelModule;
let studioHost: StudioHost | undefined;

/** dist/studioHost.js (esbuild.mjs); a dynamic import would be inlined into extension.js. */
function load(): StudioHost {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a chunk of its own, loaded on first use
  studioHost ??= require('./studioHost.js') as StudioHost;
  return studioHost;
}

/** Opens the Image Studio with its form filled from `request` (regenerate, variations; `madeWithStyle`: said, not applied again). Never sends. */
export function openStudioWith(services: Services, request: GenerationRequest, references: string[] = [], madeWithStyle?: string): Promise<void> {
  load().StudioPanel.showWith(services, { request, references, madeWithStyle });
  return Promise.resolve();
}

/** Change Only a Region…: the explorer's image, the open image, or one chosen in a dialog, in the studio's region editor. */
async function editRegion(services: Services, uri?: unknown): Promise<void> {
  let file = uri instanceof vscode.Uri ? uri : undefined;
  file ??= activeImage();
  if (!file) {
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: false,
      filters: { [vscode.l10n.t('Images')]: ['png', 'jpg', 'jpeg', 'webp'] },
      openLabel: vscode.l10n.t('Change a Region'),
      defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
    });
    file = picked?.[0];
  }
  if (file) load().StudioPanel.showRegionEditor(services, file.fsPath);
}

/** The image open in the active tab (VS Code's image preview is a custom editor). */
function activeImage(): vscode.Uri | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  const uri = input instanceof vscode.TabInputCustom || input instanceof vscode.TabInputText ? input.uri : undefined;
  return uri && /\.(png|jpe?g|webp)$/i.test(uri.path) ? uri : undefined;
}

export function registerStudio(services: Services): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.commands.registerCommand('gatewayImages.openStudio', () => load().StudioPanel.show(services)),
    vscode.commands.registerCommand('gatewayImages.editRegion', (uri?: unknown) => editRegion(services, uri)),
    vscode.window.registerWebviewPanelSerializer(STUDIO_VIEW_TYPE, {
      deserializeWebviewPanel: (panel) => Promise.resolve(load().StudioPanel.revive(panel, services)),
    }),
  );
}
