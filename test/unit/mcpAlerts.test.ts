// get_account carries the user's money alerts in force (issue 42), so that an agent can stop: the
// server runs as `node dist/mcp.js` under the SDK's Client, against the emulator. Needs `npm run build`.
import * as assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import { readAlerts } from '../../src/mcp/server/config';
import { removeDir, type RunningEmulator, startEmulator, tempDir } from './support/gateway';
import { launch, SERVER, textOf, type ToolResult } from './support/mcp';

type Warning = { kind: string; message: string; threshold?: number; paceOver?: string; limit?: number };

describe('MCP get_account: the money alerts in force', function () {
  this.timeout(60_000);
  let emu: RunningEmulator;
  let workspace: string;
  let recovery: string;
  const key = 'gw-alerts-mcp-test';
  const env = (extra: Record<string, string> = {}) => ({
    GATEWAY_IMAGES_BASE_URL: emu.url,
    GATEWAY_IMAGES_API_KEY: key,
    GATEWAY_IMAGES_WORKSPACE: workspace,
    GATEWAY_IMAGES_RECOVERY_DIR: recovery,
    GATEWAY_IMAGES_EMBED_PROVENANCE: '0',
    ...extra,
  });
  const account = async (client: Awaited<ReturnType<typeof launch>>['client']) => {
    const result = (await client.callTool({ name: 'get_account', arguments: {} })) as ToolResult;
    assert.ok(!result.isError, textOf(result));
    return { text: textOf(result), warnings: result.structuredContent?.warnings as Warning[] };
  };

  before(async () => {
    if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run "npm run build" first.`);
  });

  beforeEach(async () => {
    emu = await startEmulator();
    emu.state.addKey(key, 'budget');
    // 1,000 ₽ budget, 899 ₽ of it spent: past 75 %, just under 90 %.
    emu.state.setKeyBudget(key, 101);
    workspace = await fs.realpath(await tempDir('gwi-mcp-alerts-'));
    recovery = await tempDir('gwi-mcp-alerts-recovery-');
  });

  afterEach(async () => {
    await emu.close();
    await Promise.all([workspace, recovery].map((d) => removeDir(d)));
  });

  it("by default the budget's highest threshold crossed; an agent's own spend takes it past 90 %, with this week's pace and the daily amount", async () => {
    const { client } = await launch(env({ GATEWAY_IMAGES_ALERT_RUNWAY_DAYS: '30', GATEWAY_IMAGES_ALERT_DAILY_SPEND: '1' }));
    try {
      const before = await account(client);
      assert.deepEqual(
        before.warnings.map((w) => [w.kind, w.threshold]),
        [['budget', 75]],
      );
      assert.match(before.text, /WARNING: The key has used 89 % of its budget: ₽899\.00 of ₽1,000\.00 spent, ₽101\.00 left until its reset on /);
      assert.match(before.text, /make no more paid calls unless they say so/);

      emu.state.setBalance(6);
      const made = (await client.callTool({ name: 'generate_image', arguments: { prompt: 'Spend a little', model: 'aurora-1', size: '64x64' } })) as ToolResult;
      assert.ok(!made.isError, textOf(made));

      const after = await account(client);
      assert.deepEqual(
        after.warnings.map((w) => w.kind),
        ['budget', 'runway', 'dailySpend'],
      );
      assert.equal(after.warnings[0]!.threshold, 90);
      // The journal's result of this key (7 days) is a faster pace than the gateway's 30-day average.
      assert.equal(after.warnings[1]!.paceOver, 'week');
      assert.equal(after.warnings[2]!.limit, 1);
      assert.match(after.text, /Today's spend ₽[\d.]+ has reached your daily amount of ₽1\.00/);
    } finally {
      await client.close();
    }
  });

  it('each alert is switched off by its variable; none in force: an empty list and no warning line', async () => {
    const { client } = await launch(env({ GATEWAY_IMAGES_ALERT_BUDGET_THRESHOLDS: 'none', GATEWAY_IMAGES_ALERT_RUNWAY_DAYS: '0' }));
    try {
      const { text, warnings } = await account(client);
      assert.deepEqual(warnings, []);
      assert.doesNotMatch(text, /WARNING/);
    } finally {
      await client.close();
    }
  });

  it('reads the variables: defaults, percent lists, off, and refuses what is not a percent', () => {
    assert.deepEqual(readAlerts({}), { budgetThresholds: [50, 75, 90], runwayDays: 3, dailySpend: 0 });
    assert.deepEqual(
      readAlerts({ GATEWAY_IMAGES_ALERT_BUDGET_THRESHOLDS: '95, 80,80', GATEWAY_IMAGES_ALERT_RUNWAY_DAYS: '5', GATEWAY_IMAGES_ALERT_DAILY_SPEND: '250,5' }),
      { budgetThresholds: [80, 95], runwayDays: 5, dailySpend: 250.5 },
    );
    assert.deepEqual(readAlerts({ GATEWAY_IMAGES_ALERT_BUDGET_THRESHOLDS: 'off' }).budgetThresholds, []);
    assert.throws(() => readAlerts({ GATEWAY_IMAGES_ALERT_BUDGET_THRESHOLDS: '50,150' }), /GATEWAY_IMAGES_ALERT_BUDGET_THRESHOLDS: must be percents/);
    assert.throws(() => readAlerts({ GATEWAY_IMAGES_ALERT_RUNWAY_DAYS: '-1' }), /GATEWAY_IMAGES_ALERT_RUNWAY_DAYS/);
  });
});
