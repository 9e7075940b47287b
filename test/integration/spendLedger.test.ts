// Where the money went, inside VS Code against the emulator, with a key only this suite uses: the
// ledger's figures equal the emulator's stats for the key when only this workspace spends; paid
// requests sent to the emulator from outside with the same key show as spent elsewhere, to the
// kopeck; an MCP session's spend (the server started from the extension's definition) shows under
// MCP with its client's name. The CSV export lists who made each result.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { formatRubles } from '../../src/core/money/cost';
import { admin, api, closeAllEditors, emulator, paidRequests, prepareSuite, useKey, waitUntil } from './support';

const ACCOUNT = vscode.Uri.parse('gateway-images:/Account.md');

describe('Where the money went (Account and Usage)', function () {
  this.timeout(120_000);
  const key = `gw-ledger-${Date.now()}`;
  let locale: string;
  /** What the requests from outside cost, in kopecks. */
  let outsideKopecks = 0;

  before(async () => {
    await prepareSuite();
    await admin('POST', 'keys', { key, like: 'unlimited' });
    await useKey(key);
    locale = vscode.env.language;
  });
  after(closeAllEditors);

  /** The key's figures as the emulator gives them to anyone holding the key. */
  const gatewayStats = async () => {
    const response = await fetch(`${emulator().url}/v1/gateway/stats/summary`, { headers: { authorization: `Bearer ${key}` } });
    assert.ok(response.ok);
    const body = (await response.json()) as { today_spend: number; month_spend: number; data?: { today_spend: number; month_spend: number } };
    return body.data ?? body;
  };
  const rub = (amount: number) => formatRubles(amount, locale);
  /** The page as shown after the account is read again: waits until it holds `row`. */
  const pageWith = async (row: RegExp | string) => {
    await (await api()).refreshAccount();
    const doc = await vscode.workspace.openTextDocument(ACCOUNT);
    const holds = () => (typeof row === 'string' ? doc.getText().includes(row) : row.test(doc.getText()));
    await waitUntil(holds, 15_000, `the Account page showing ${row}\n${doc.getText()}`);
    return doc.getText();
  };
  const gatewayRows = (gateway: { today_spend: number; month_spend: number }, recorded: [number, number], elsewhere: [number, number]) => [
    `| The gateway's figure for the key | ${rub(gateway.today_spend)} | ${rub(gateway.month_spend)} |`,
    `| Recorded by this workspace with this key | ${rub(recorded[0])} | ${rub(recorded[1])} |`,
    `| Spent elsewhere: not recorded by this workspace (other machines, other tools, other workspaces) | ${rub(elsewhere[0])} | ${rub(elsewhere[1])} |`,
  ];

  it("the ledger's total equals the emulator's stats for the key when only this workspace spends", async () => {
    await vscode.commands.executeCommand('gatewayImages.generate', { model: 'sketch-mini', prompt: 'ledger: a small boat', size: '64x64' });
    await vscode.commands.executeCommand('gatewayImages.generate', { model: 'aurora-1', prompt: 'ledger: a lighthouse', size: '64x64', n: 2 });
    const stats = await gatewayStats();
    assert.ok(stats.month_spend > 0, 'the emulator saw no spend');
    const rows = gatewayRows(stats, [stats.today_spend, stats.month_spend], [0, 0]);
    const text = await pageWith(rows.join('\n'));
    // Who and which model count every result of the workspace (other suites' too, with other keys): the rows are there.
    assert.match(text, /\| Palette or command \| ₽[\d.,]+ \(\d+\) \|/);
    assert.match(text, /\| sketch-mini \| /);
    assert.match(text, /\| aurora-1 \| /);
  });

  it('paid requests sent from outside with the same key show as spent elsewhere, to the kopeck', async () => {
    const before = await gatewayStats();
    const outside: number[] = [];
    for (const model of ['sketch-mini', 'prism-2']) {
      const response = await fetch(`${emulator().url}/v1/images/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, prompt: 'sent from another machine', size: '64x64' }),
      });
      assert.ok(response.ok, `the outside request answered ${response.status}`);
      await response.arrayBuffer();
      outside.push((await paidRequests()).at(-1)!.chargedRub);
    }
    const kopecks = (outsideKopecks = outside.reduce((sum, rub) => sum + Math.round(rub * 100), 0));
    assert.ok(kopecks > 0);
    const stats = await gatewayStats();
    assert.strictEqual(Math.round(stats.month_spend * 100), Math.round(before.month_spend * 100) + kopecks);
    const rows = gatewayRows(stats, [before.today_spend, before.month_spend], [kopecks / 100, kopecks / 100]);
    await pageWith(rows.join('\n'));
  });

  it("an MCP session's spend appears under MCP with its client's name", async () => {
    const [definition] = await (await api()).mcp.definitions();
    assert.ok(definition, 'no MCP server definition');
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', GATEWAY_IMAGES_API_KEY: key };
    for (const [name, value] of Object.entries(definition.env)) if (value !== null) env[name] = String(value);
    const client = new Client({ name: 'ledger-agent', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: definition.command, args: definition.args, env, cwd: definition.cwd?.fsPath, stderr: 'ignore' }));
    let cost: number;
    try {
      const result = (await client.callTool({
        name: 'generate_image',
        arguments: { model: 'sketch-mini', prompt: 'ledger: an agent’s kite', size: '64x64' },
      })) as {
        isError?: boolean;
        structuredContent?: { cost_rub?: number };
      };
      assert.ok(!result.isError, JSON.stringify(result));
      cost = result.structuredContent!.cost_rub!;
    } finally {
      await client.close();
    }
    const text = await pageWith(new RegExp(`\\| MCP: ledger-agent \\| ${escape(rub(cost))} \\(1\\) \\|`));
    // Recorded by this workspace: what is spent elsewhere stays what the requests from outside cost.
    const stats = await gatewayStats();
    const mine = (spend: number) => (Math.round(spend * 100) - outsideKopecks) / 100;
    const rows = gatewayRows(stats, [mine(stats.today_spend), mine(stats.month_spend)], [outsideKopecks / 100, outsideKopecks / 100]);
    assert.ok(text.includes(rows.join('\n')) || (await pageWith(rows.join('\n'))), text);
    const csv = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gwi-csv-')), 'results.csv');
    await vscode.commands.executeCommand('gatewayImages.exportResultsCsv', vscode.Uri.file(csv));
    const lines = fs.readFileSync(csv, 'utf8').split('\r\n');
    assert.strictEqual(lines[0], 'time,who,model,prompt,n,cost_rub,files,request_id');
    assert.ok(
      lines.some((l) => l.includes(',mcp:ledger-agent,sketch-mini,') && l.includes(cost.toFixed(2))),
      'the CSV has no row of the MCP result',
    );
    fs.rmSync(path.dirname(csv), { recursive: true, force: true });
  });

  it('Find Image Results… finds these results by prompt words, model and who made them, over the whole journal', async () => {
    type Found = { total: number; found: { file: string; id: string }[]; problems: string[] };
    const find = (query: string) => vscode.commands.executeCommand<Found>('gatewayImages.findResults', { query });
    const byAgent = await find('ledger who:ledger-agent');
    assert.strictEqual(byAgent.total, 1);
    assert.match(path.basename(byAgent.found[0]!.file), /kite/);
    const lighthouse = await find('ledger LIGHTHOUSE model:aurora who:palette');
    assert.strictEqual(lighthouse.total, 2, 'one result of two images');
    assert.strictEqual(new Set(lighthouse.found.map((f) => f.id)).size, 1);
    assert.strictEqual((await find('ledger lighthouse model:sketch')).total, 0);
    assert.deepStrictEqual((await find('from:2026-13-01')).problems, ['"from:" takes a date as YYYY-MM-DD; got "2026-13-01".']);
  });
});

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
