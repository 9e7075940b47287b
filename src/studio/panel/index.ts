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

export function registerStudio(services: Services): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.commands.registerCommand('gatewayImages.openStudio', () => load().StudioPanel.show(services)),
    vscode.window.registerWebviewPanelSerializer(STUDIO_VIEW_TYPE, {
      deserializeWebviewPanel: (panel) => Promise.resolve(load().StudioPanel.revive(panel, services)),
    }),
  );
}
