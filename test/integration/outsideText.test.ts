// Outside text stays text, rendered by VS Code's own Markdown renderer (`markdown.api.render`: the
// markdown-it of the Markdown preview, with its linkify, HTML and math): a URL, Markdown and HTML in
// every outside field makes no link, emphasis or tag. The fields: an MCP client's name (from a real
// MCP session through the server the extension defines, onto Account and Usage), and, through the
// extension's own page and report builders, the gateway's e-mail address, key name, reset interval
// and model names, the journal's models, and a prompt file's prompts, models, errors and file names.
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { AccountSnapshot } from '../../src/account/accountModel';
import { renderAccount } from '../../src/commands/account/accountPage';
import type { LineOutcome } from '../../src/jobs/promptFiles/batch';
import { batchReport } from '../../src/jobs/promptFiles/batchReport';
import { admin, api, closeAllEditors, prepareSuite, useKey, waitUntil } from './support';

/** Under 100 characters each (the MCP server keeps the first 100 of a client's name). */
const HOSTILE = [
  'Agent https://evil.example/login',
  '**bold-marker** <img src=x onerror=alert(1)> [link-marker](https://e.example)',
  '_em-marker_ ~~del-marker~~ `code-marker` $x^2$ www.evil.example <https://auto.example>',
  'mail@evil.example <b>b-marker</b> http://localhost:8080/x',
];

/** The HTML VS Code's Markdown renderer makes of `markdown`. */
async function rendered(markdown: string): Promise<string> {
  const html = await vscode.commands.executeCommand<string>('markdown.api.render', markdown);
  assert.strictEqual(typeof html, 'string', 'markdown.api.render gave no HTML');
  return html;
}

/** What the reader sees: the tags gone, the references decoded. */
function visibleText(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_, code: string) => String.fromCharCode(parseInt(code, 16)))
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
}

/**
 * No link but `links` (this extension's own), no image, code, strike-through, math, bold or HTML
 * tag made of the outside text, and emphasis only around this extension's words; each outside text
 * is on the page as text.
 */
function assertPlain(html: string, texts: readonly string[], links: RegExp[] = []): void {
  const anchors = [...html.matchAll(/<a\b[^>]*>/g)].map((m) => m[0]);
  assert.strictEqual(anchors.length, links.length, `links: ${anchors.join('\n')}`);
  links.forEach((link, i) => assert.match(anchors[i]!, link));
  assert.doesNotMatch(html, /<(img|code|del|s|b|script)\b|class="katex/, 'a tag made of outside text');
  for (const [, inner] of html.matchAll(/<(?:strong|em)>(.*?)<\/(?:strong|em)>/g))
    assert.doesNotMatch(inner!, /marker/, `emphasis made of outside text: ${inner}`);
  const visible = visibleText(html);
  for (const text of texts) assert.ok(visible.includes(text), `"${text}" is not on the page as text:\n${visible}`);
}

describe('Outside text stays text in VS Code’s Markdown renderer', function () {
  this.timeout(120_000);
  const key = `gw-outside-${Date.now()}`;

  before(async () => {
    await prepareSuite();
    await admin('POST', 'keys', { key, like: 'unlimited' });
    await useKey(key);
    // The renderer's extension (built in) starts with the first Markdown document.
    await vscode.workspace.openTextDocument({ language: 'markdown', content: '# start' });
    await waitUntil(async () => (await vscode.commands.getCommands(true)).includes('markdown.api.render'), 30_000, 'markdown.api.render');
  });
  after(closeAllEditors);

  it('an MCP client named with a URL, Markdown and HTML is text on Account and Usage', async () => {
    const [definition] = await (await api()).mcp.definitions();
    assert.ok(definition, 'no MCP server definition');
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', GATEWAY_IMAGES_API_KEY: key };
    for (const [name, value] of Object.entries(definition.env)) if (value !== null) env[name] = String(value);
    for (const name of HOSTILE) {
      const client = new Client({ name, version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({ command: definition.command, args: definition.args, env, cwd: definition.cwd?.fsPath, stderr: 'ignore' }),
      );
      try {
        const result = (await client.callTool({
          name: 'generate_image',
          arguments: { model: 'sketch-mini', prompt: 'outside text: a kite', size: '64x64' },
        })) as {
          isError?: boolean;
        };
        assert.ok(!result.isError, JSON.stringify(result));
      } finally {
        await client.close();
      }
    }
    await (await api()).refreshAccount();
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse('gateway-images:/Account.md'));
    await waitUntil(() => HOSTILE.every((name) => visibleText(doc.getText()).includes(`MCP: ${name}`)), 15_000, `every client on the page\n${doc.getText()}`);
    assertPlain(
      await rendered(doc.getText()),
      HOSTILE.map((name) => `MCP: ${name}`),
    );
  });

  it("every outside field of Account and Usage: the gateway's e-mail, key, interval and models, the journal's models and clients", async () => {
    const now = new Date();
    const snapshot: AccountSnapshot = {
      status: 'ready',
      user: { email: HOSTILE[3]!, id: 42 },
      balance: 100,
      budget: 50,
      key: { name: HOSTILE[1]!, budget: { remaining: 50, initial: 80, reset_interval: HOSTILE[2]!, reset_at: now.toISOString() } },
      stats: {
        today_spend: 3,
        today_requests: 2,
        month_spend: 9,
        month_requests: 6,
        avg_daily_spend: 0.3,
        top_model_by_spend: HOSTILE[0]!,
        top_model_by_spend_value: 9,
        top_model_by_requests: HOSTILE[2]!,
        top_model_by_requests_value: 6,
      },
      statsAt: now.getTime(),
      updatedAt: now.getTime(),
    };
    const history = HOSTILE.map((name, i) => ({
      createdAt: new Date(now.getTime() - (i + 1) * 3_600_000).toISOString(),
      model: HOSTILE[(i + 1) % HOSTILE.length]!,
      costRub: 1 + i,
      origin: { kind: 'mcp' as const, client: name },
    }));
    const page = renderAccount(snapshot, 'en', history, now);
    assertPlain(await rendered(page), HOSTILE);
  });

  it("a prompt file's report: prompts, models, errors and file names are text, and its one link is the file's", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gwi-outside-'));
    try {
      const promptFile = path.join(dir, 'prompts.txt');
      const outcomes: LineOutcome[] = [
        { line: 1, prompt: HOSTILE[1]!, model: HOSTILE[0]!, status: 'done', files: [path.join(dir, 'command:workbench.action.quit.png')], costRub: 1 },
        { line: 2, prompt: `${HOSTILE[2]!}\n# heading-marker\n- list-marker`, model: HOSTILE[3]!, status: 'failed', files: [], error: HOSTILE[0]! },
        { line: 3, prompt: HOSTILE[3]!, model: 'sketch-mini', status: 'outcome-unknown', files: [], error: HOSTILE[1]! },
      ];
      const html = await rendered(batchReport(promptFile, outcomes, new Date(), 'en'));
      assertPlain(html, [...HOSTILE, 'command:workbench.action.quit.png'], [/\.\/command:workbench\.action\.quit\.png/]);
      assert.doesNotMatch(html, /<(h[2-6]|ul|li)\b/, 'a line break in a prompt starts no heading or list');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
