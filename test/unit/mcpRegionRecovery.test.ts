// A region edit the MCP server was killed in (the paid answer saved and recorded, not yet pasted into
// the original) is finished at the server's next start, without a window and without sending
// anything: the composite in place of the answer, the mask beside it, the journal's entry finished,
// the log line. Driven through the real dist/mcp.js with the SDK's client. Needs `npm run build` first.
import * as assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { isCompositeFile } from '../../src/jobs/regionEdit';
import { markRegionEditSent } from '../../src/jobs/regionPending';
import { HistoryStore } from '../../src/jobs/results/history';
import { DEMO_KEYS, gatewaySuite, paidRequests } from './support/gateway';
import { launch, SERVER, type ServerOutput } from './support/mcp';
import { until } from './support/pause';
import { journalCode, regionEditStoppedBeforeFinish } from './support/regionStopped';

describe('MCP server: interrupted region edits finished at its start', function () {
  this.timeout(60_000);
  const gw = gatewaySuite({ models: true });
  let client: Client | undefined;

  afterEach(async () => {
    await client?.close();
    client = undefined;
  });

  const start = async (workspace: string, journal: string): Promise<ServerOutput> => {
    if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run "npm run build" first.`);
    const launched = await launch({
      GATEWAY_IMAGES_BASE_URL: gw.emu.url,
      GATEWAY_IMAGES_API_KEY: DEMO_KEYS.unlimited,
      GATEWAY_IMAGES_WORKSPACE: workspace,
      GATEWAY_IMAGES_RESULTS_JOURNAL: journal,
      GATEWAY_IMAGES_RECOVERY_DIR: path.join(gw.dir, 'mcp-recovery'),
    });
    client = launched.client;
    return launched.output;
  };

  const stopped = async (name: string) => {
    const dir = await fs.realpath(await fs.mkdir(path.join(gw.dir, name), { recursive: true }).then(() => path.join(gw.dir, name)));
    const mask = path.join(dir, 'door.png');
    const edit = await regionEditStoppedBeforeFinish(gw, { dir, mask, size: { width: 300, height: 200 }, box: { x: 40, y: 30, width: 24, height: 20 } });
    return { dir, journal: path.join(dir, 'results.jsonl'), ...edit };
  };

  it('pastes the saved answer into the original, saves the mask beside it, finishes its entry in the journal and logs it; nothing is sent', async () => {
    const { dir, journal, mask, result, answer } = await stopped('killed-mid-edit');
    await markRegionEditSent(journal); // as the killed server did when it sent the edit
    const paid = paidRequests(gw.emu).length;
    const output = await start(dir, journal);
    const file = result.files[0]!;
    await until(async () => /an interrupted region edit is finished/.test(output.stderr) && (await isCompositeFile(file)), 'the server to finish the edit');
    assert.match(output.stderr, /an interrupted region edit is finished \(pasted into its original, nothing sent\): photo\.region-1\.png/);
    assert.ok(!(await fs.readFile(file)).equals(answer), 'the answer was pasted');
    const beside = path.join(dir, 'photo.region-1.mask.png');
    assert.ok(existsSync(beside), 'the mask beside the result');
    assert.equal(paidRequests(gw.emu).length, paid, 'nothing sent');
    const store = new HistoryStore(journal, { load: journalCode });
    const entry = (await store.index()).findByFile(file);
    await store.close();
    // The mask an agent gave is a workspace file that stays: the journal goes on naming it; the copy is beside the result.
    assert.equal(entry?.region?.mask, mask);
    assert.equal(entry?.region?.kept, undefined, 'finished, not kept as it came');
    assert.ok((await fs.readFile(beside)).equals(await fs.readFile(mask)));
  });
});
