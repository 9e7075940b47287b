// Registers the Image Studio cheaply: the command and the serializer only. The panel's code
// (HTML, message handling) is loaded on first open, so activation stays light.
import * as vscode from 'vscode';
import type { GenerationRequest } from '../core/types';
import { type Services } from '../services';
import { STUDIO_VIEW_TYPE } from './protocol';

/** Opens the Image Studio with its form filled from `request` (regenerate, variations; `madeWithStyle`: said, not applied again). Never sends. */
export async function openStudioWith(services: Services, request: GenerationRequest, references: string[] = [], madeWithStyle?: string): Promise<void> {
  (await import('./studioPanel')).StudioPanel.showWith(services, { request, references, madeWithStyle });
}

export function registerStudio(services: Services): vscode.Disposable {
  const load = () => import('./studioPanel');
  return vscode.Disposable.from(
    vscode.commands.registerCommand('gatewayImages.openStudio', async () => (await load()).StudioPanel.show(services)),
    vscode.window.registerWebviewPanelSerializer(STUDIO_VIEW_TYPE, {
      deserializeWebviewPanel: async (panel) => (await load()).StudioPanel.revive(panel, services),
    }),
  );
}
