// The chat tools' code, dist/chatToolCode.js: loaded by chatTools.ts when an agent first uses a tool
// (or VS Code first asks its confirmation), not at activation. One session cap for both tools.
import { SpendingCap } from '../core/money/spendingCap';
import { readAgentCaps } from '../host/settings';
import { type Services } from '../services';
import { createEditImageTool } from './editImageTool';
import { createGenerateImageTool } from './generateImageTool';

export function createChatTools(services: Services) {
  // "Always Allow" skips the confirmations: the agents' caps bound the spending (this window's session).
  const cap = new SpendingCap(readAgentCaps, services.locale);
  return { generate: createGenerateImageTool(services, cap), edit: createEditImageTool(services, cap) };
}
