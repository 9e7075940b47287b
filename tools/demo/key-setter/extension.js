// Installed only by `npm run demo` (tools/demo/main.ts), never shipped: sets the emulator's demo key
// in Gateway Images through its public command, as a person or another extension would. The
// product itself reads no key from the environment. Once per demo profile, and only while the base
// URL is on loopback (the emulator), so the key can never be sent anywhere else.
const vscode = require('vscode');

const DONE = 'demoKeySet';
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

exports.activate = async function (context) {
  const key = process.env.GATEWAY_IMAGES_DEMO_KEY;
  if (!key || context.globalState.get(DONE)) return;
  let host;
  try {
    host = new URL(vscode.workspace.getConfiguration('gatewayImages').get('baseUrl', '')).hostname;
  } catch {
    return;
  }
  if (!LOOPBACK.has(host)) return;
  try {
    // No extensionDependencies (the install would ask a gallery for it): the command activates Gateway Images.
    await vscode.commands.executeCommand('gatewayImages.setApiKey', key);
    await context.globalState.update(DONE, true);
  } catch (error) {
    console.error(`[demo] the demo key was not accepted: ${error instanceof Error ? error.message : String(error)}`);
  }
};
