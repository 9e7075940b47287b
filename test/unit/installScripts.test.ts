// `npm ci` prints no warning the project can prevent: package.json's allowScripts reviews every
// dependency's install script (docs/building.md, "Install scripts"). npm 11 lists the unreviewed
// ones after each install (npm 12 skips them); `npm install-scripts ls` lists the same, read-only.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

describe("install scripts: every dependency's is approved or refused in package.json", function () {
  this.timeout(60_000);

  it('npm install-scripts ls finds none left to review (so npm ci warns about none)', function () {
    const [major = 0, minor = 0] = execFileSync(NPM, ['--version'], { encoding: 'utf8' }).trim().split('.').map(Number);
    if (major < 11 || (major === 11 && minor < 16)) {
      console.log(`      skipped: npm ${major}.${minor} has no allowScripts (npm 11.16 and later)`);
      this.skip();
    }
    const listed = JSON.parse(execFileSync(NPM, ['install-scripts', 'ls', '--json'], { cwd: ROOT, encoding: 'utf8' })) as {
      allowScripts: { name: string }[];
    };
    assert.deepEqual(
      listed.allowScripts.map((p) => p.name),
      [],
      'approve or deny each in package.json (npm install-scripts approve|deny NAME) and say why in docs/building.md',
    );
  });
});
