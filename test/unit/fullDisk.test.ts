// A full disk, for real: small tmpfs mounts (the tests run as root here) as the output folder and
// as the recovery folder, and a 24 MiB paid image generated into them through the one job service.
// Without the rights to mount (not root, or a container without CAP_SYS_ADMIN) the tests are
// skipped, and say why.
import * as assert from 'node:assert/strict';
import { readdir, readFile, rm } from 'node:fs/promises';
import * as path from 'node:path';
import { FALLBACK_RECOVERY_DIR } from '../../src/core/files/imageStore';
import { filesUnder, sha256 } from './support/chaos';
import { gatewaySuite, newService, paidRequests } from './support/gateway';
import { orSkip, TmpfsMounts } from './support/tmpfs';

const MIB = 1024 * 1024;

describe('a full disk, for real (tmpfs)', function () {
  this.timeout(30_000);
  const suite = gatewaySuite({ dir: 'gwi-full-', models: true });
  const mounts = new TmpfsMounts();
  const mount = (name: string, megabytes: number) => mounts.mount(path.join(suite.dir, name), megabytes);
  afterEach(() => mounts.unmountAll());

  it(
    'the output folder is full: the 24 MiB paid image is kept byte-equal in the recovery folder (another disk), the reason names the full disk, nothing partial is left',
    orSkip(async () => {
      const out = await mount('full-output', 4);
      const recovery = path.join(suite.dir, 'recovery');
      suite.emu.state.recordImages = true;
      suite.emu.state.armFault({ fault: 'large', imageBytes: 24 * MIB });
      const rig = newService(suite.client, suite.models, recovery);
      const result = await rig.service.run({
        request: { model: 'aurora-1', prompt: 'a full disk', size: '64x64' },
        output: { directory: path.join(out, 'generated-images'), pattern: '{slug}-{index}' },
      });
      const sent = paidRequests(suite.emu)[0]!.images![0]!;
      assert.ok(sent.delivered);
      assert.deepEqual(result.files, []);
      assert.ok(result.recovered, 'the image is kept for recovery');
      assert.match(result.recovered.reason, /the disk is full/);
      const kept = result.recovered.files[0]!;
      assert.ok(kept.startsWith(recovery), `kept in the recovery folder: ${kept}`);
      assert.equal(sha256(await readFile(kept)), sent.sha256, 'byte-equal to what the gateway sent');
      const left = await filesUnder(out);
      console.log(
        `      full output folder (4 MiB tmpfs): ${(sent.bytes / MIB).toFixed(1)} MiB image kept byte-equal in ${path.relative(suite.dir, kept)}; ` +
          `left in the output folder: ${left.length} files, ${(await readdir(out)).length} entries; reason: ${result.recovered.reason}`,
      );
      assert.deepEqual(await readdir(out), [], 'nothing partial (and no empty folder) is left in the output folder');
    }),
  );

  it(
    'the recovery folder fills up too, mid-image: the bytes go on in the fallback folder, the user is told where, no unhandled error',
    orSkip(async () => {
      const out = await mount('full-output', 4);
      const recovery = await mount('full-recovery', 8);
      suite.emu.state.recordImages = true;
      suite.emu.state.armFault({ fault: 'large', imageBytes: 24 * MIB });
      const rig = newService(suite.client, suite.models, recovery);
      const result = await rig.service.run({
        request: { model: 'aurora-1', prompt: 'two full disks', size: '64x64' },
        output: { directory: path.join(out, 'generated-images'), pattern: '{slug}-{index}' },
      });
      const sent = paidRequests(suite.emu)[0]!.images![0]!;
      assert.ok(result.recovered, 'the image is kept for recovery');
      const kept = result.recovered.files[0]!;
      try {
        assert.ok(kept.startsWith(FALLBACK_RECOVERY_DIR + path.sep), `kept in the fallback folder on another disk: ${kept}`);
        assert.ok(result.recovered.manifestPath.startsWith(FALLBACK_RECOVERY_DIR), 'its manifest beside it, where Recover looks');
        assert.equal(sha256(await readFile(kept)), sent.sha256, 'byte-equal to what the gateway sent');
        assert.deepEqual(
          (await filesUnder(recovery)).filter((f) => f.endsWith('.part')),
          [],
          'no partial file left in the full recovery folder',
        );
        assert.deepEqual(await readdir(out), [], 'nothing left in the output folder');
        console.log(
          `      full output (4 MiB) and recovery (8 MiB) folders: the image went on in ${path.dirname(kept)} after ${8} MiB, byte-equal; manifest ${result.recovered.manifestPath}`,
        );
      } finally {
        for (const file of [...result.recovered.files, result.recovered.manifestPath]) await rm(file, { force: true });
      }
    }),
  );
});
