// `node out/test/harness/withVscode.js <oldest|current> <command> [args…]`: runs the command
// (e.g. mocha for the e2e suite) with GATEWAY_IMAGES_TEST_VSCODE set, portably (no `VAR=x cmd`).
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { REPO_ROOT, vscodeTarget } from './paths';

const [name, command, ...args] = process.argv.slice(2);
if (!name || !command) {
  process.stderr.write('usage: node out/test/harness/withVscode.js <oldest|current> <command> [args…]\n');
  process.exit(2);
}
const target = vscodeTarget(name);
const bin = path.join(REPO_ROOT, 'node_modules', '.bin', command);
const r = spawnSync(fs.existsSync(bin) ? bin : command, args, {
  stdio: 'inherit',
  env: { ...process.env, GATEWAY_IMAGES_TEST_VSCODE: target.name },
});
process.exit(r.status ?? 1);
