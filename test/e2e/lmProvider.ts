// The language model provider fixture (LM_PROVIDER_FIXTURE) in the e2e windows: the shared
// window loads it where VS Code has the provider API, without a model offered; the suite that needs
// the model offers it (gatewayImagesTest.setLanguageModelAvailable) and takes it back when it ends.
import * as fs from 'fs';
import * as path from 'path';
import { selectedVscodeTarget } from '../harness/paths';

/** The version of the VS Code under test, from its product.json. */
export function vscodeVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(selectedVscodeTarget().vscodeDir, 'product.json'), 'utf8')) as { version: string }).version;
}

/** The language model provider API is stable from VS Code 1.104 (1.100 does not load the fixture). */
export function hasProviderApi(version = vscodeVersion()): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 1 || (major === 1 && minor >= 104);
}
