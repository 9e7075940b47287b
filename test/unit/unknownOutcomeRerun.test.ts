// A prompt-file line answered 500, 503 or 524 after its body left (issue 40): the gateway may have
// charged it, so the results journal records it as a paid failure of unknown outcome, and the next
// run holds the line instead of paying for it again. The run is the real one (promptFileRun.ts, as
// Generate Images from File runs it by arguments) against the emulator.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { type BatchLine, requestKey } from '../../src/core/requests/batchFile';
import { HistoryStore } from '../../src/jobs/results/history';
import * as resultsCode from '../../src/jobs/results/resultsBundle';
import { gatewaySuite, paidRequests, SMALL } from './support/gateway';
import { promptFileWorld, runFileAsCommand } from './support/promptFileChild';

const lineOf = (line: number, prompt: string): BatchLine => {
  const request = { model: 'sketch-mini', prompt, size: SMALL };
  return { line, request, key: requestKey(request) };
};

describe('A prompt-file line answered 5xx after its body left', function () {
  this.timeout(30_000);
  const gw = gatewaySuite({ dir: 'gwi-unknown-rerun-' });

  for (const status of [500, 503, 524]) {
    it(`${status}: recorded as a paid failure of unknown outcome, held by the next run, sent again only when told`, async () => {
      const world = promptFileWorld(path.join(gw.dir, `s${status}`), { url: gw.emu.url, key: gw.emu.keys.unlimited }, [
        lineOf(1, 'a lighthouse'),
        lineOf(2, 'a harbour'),
      ]);
      // A proxy's page for the first paid request, once the emulator has read its body.
      gw.emu.state.armFault({ fault: 'status', status });
      const first = await runFileAsCommand(world);
      assert.deepEqual(
        first.lines.map((l) => l.status),
        ['outcome-unknown', 'done'],
      );
      assert.equal(paidRequests(gw.emu)[0]!.status, status);

      const history = new HistoryStore(world.resultsFile, { load: () => resultsCode });
      const [entry] = (await history.index()).findBatch({ file: world.promptFile, line: 1, key: world.lines[0]!.key });
      await history.close();
      assert.ok(entry, 'line 1 is in the journal');
      assert.equal(entry.outcomeUnknown, true);
      assert.match(entry.failed ?? '', new RegExp(`HTTP ${status}`));

      const again = await runFileAsCommand(world);
      assert.deepEqual(
        again.lines.map((l) => [l.line, l.status]).sort(([a], [b]) => Number(a) - Number(b)),
        [
          [1, 'outcome-unknown'],
          [2, 'skipped'],
        ],
      );
      assert.match(again.lines.find((l) => l.line === 1)!.error!, /may have been charged .*: not sent again/);
      assert.equal(paidRequests(gw.emu).length, 2, 'the held line was not paid again');

      const told = await runFileAsCommand({ ...world, resendInterrupted: true });
      assert.equal(told.lines.find((l) => l.line === 1)!.status, 'done');
      assert.equal(paidRequests(gw.emu).length, 3);
    });
  }
});
