// Outside text stays text: an MCP client's name, a prompt, a model's or a file's name, a gateway's
// message are plain text in the Markdown VS Code renders (the Account and Usage page, the prompt
// file's report, tooltips, the chat tool's confirmation), in notifications and in the CSV export.
// The real renderer is in test/integration/outsideText.test.ts; here the source itself is checked:
// nothing in it can start a link, emphasis, tag or table cell, and it reads back as the same text.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { markdownText, messageText } from '../../src/core/common/markdownText';
import { batchReport } from '../../src/jobs/promptFiles/batchReport';
import type { LineOutcome } from '../../src/jobs/promptFiles/batch';
import { resultsCsv } from '../../src/jobs/results/resultsCsv';
import type { HistoryEntry } from '../../src/jobs/results/resultsIndex';
import { spendLedger } from '../../src/jobs/results/spendLedger';
import { spendLedgerMarkdown } from '../../src/jobs/results/spendLedgerMarkdown';

const HOSTILE = [
  'Agent https://evil.example/login',
  '**x** <img src=x onerror=alert(1)> [a](https://e.example)',
  'www.evil.example and <https://evil.example> and <a@b.example>',
  'write to a@b.example or mailto:a@b.example',
  'http://localhost:8080/admin',
  '_x_ ~~y~~ `z` $x^2$ &lt;b&gt; &#x41; | cell | ![i](https://e.example/i.png)',
  '# heading\n- item\n\n> quote\r\n1. one',
  'evil.com/path ftp://x.org //evil.example/a',
  '[r]: https://e.example',
  '$(warning) an icon $(sync~spin)',
];

/** What the reader sees: the numeric references decoded, line breaks as spaces. */
const decoded = (markdown: string) => markdown.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
/** The source without its references: what a Markdown reader could take as syntax or a link. */
const bare = (markdown: string) => markdown.replace(/&#\d+;/g, ' ');
/** Markup, entities, HTML, table cells, math, and what starts a link: a scheme, `www.`, a domain, an e-mail address. */
const MARKUP = /[\\`*_[\]<>|~&$#@/]|[.:](?=\S)|localhost/i;

describe('outside text stays text', () => {
  it('in Markdown: no character that makes markup or starts a link, and the same text to read', () => {
    for (const text of HOSTILE) {
      const markdown = markdownText(text);
      assert.doesNotMatch(bare(markdown), MARKUP, markdown);
      assert.doesNotMatch(markdown, /[\r\n\u2028\u2029]/, 'one line: no new paragraph, heading, list or table row');
      assert.equal(decoded(markdown), text.replace(/\r\n|[\r\n]/g, ' '));
    }
    // A block made at the start of a line: indentation (code), a list, a setext heading.
    assert.equal(markdownText('    code'), '&#32;&#32;&#32;&#32;code');
    assert.equal(markdownText('- item'), '&#45; item');
    assert.equal(markdownText('+ item'), '&#43; item');
    assert.equal(markdownText('==='), '&#61;==');
    assert.equal(markdownText('12) twelve'), '12&#41; twelve');
    assert.equal(markdownText('1. one - two'), '1&#46; one - two');
    // Prose stays readable in a report read as a file: a dot or colon before a space, commas, dashes.
    assert.equal(
      markdownText('A lighthouse at dawn, cinematic. Wide shot: fog (soft) - 50% "grey"!'),
      'A lighthouse at dawn, cinematic. Wide shot: fog (soft) - 50% "grey"!',
    );
  });

  it('in a tooltip with theme icons: an icon written in the text is shown as written', () => {
    // VS Code shows `\$(name)` as the text `$(name)`; with a modifier a word joiner keeps it text.
    assert.equal(markdownText('key $(warning) x', { themeIcons: true }), 'key \\$(warning) x');
    assert.equal(markdownText('$(sync~spin) $(a~spin)', { themeIcons: true }), '$\u2060(sync&#126;spin) $\u2060(a&#126;spin)');
    assert.equal(markdownText('- a.b $(x)', { themeIcons: true }), '&#45; a&#46;b \\$(x)');
  });

  it("in a notification: a Markdown link of the gateway's message is no link", () => {
    // VS Code's notifications turn this form into a link (vs/base/common/linkedText.ts); a command link runs the command.
    const LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/gi;
    for (const text of [
      '[Top up](https://evil.example/pay)',
      'Refused: [details](command:workbench.action.terminal.sendSequence?%7B%7D)',
      '[a](file:///etc/passwd "t")',
    ]) {
      const shown = messageText(text);
      assert.equal(shown.match(LINK), null, shown);
      assert.equal(shown.replace('] (', ']('), text, 'the words stay as they are');
    }
  });

  it('in Account and Usage: an MCP client or a model named with a URL, Markdown or HTML makes no link, emphasis or tag', () => {
    const now = new Date();
    const records = HOSTILE.slice(0, 3).map((client, i) => ({
      createdAt: new Date(now.getTime() - (i + 1) * 3_600_000).toISOString(),
      model: i === 0 ? 'evil.example/**model**' : 'aurora-1',
      costRub: 1 + i,
      origin: { kind: 'mcp' as const, client },
    }));
    const markdown = spendLedgerMarkdown(spendLedger(records, now), 'en');
    for (const text of [...HOSTILE.slice(0, 3), 'evil.example/**model**']) {
      const shown = markdownText(text.startsWith('evil') ? text : `MCP: ${text}`);
      assert.ok(markdown.includes(`| ${shown} |`), `the table names ${text} as plain text`);
    }
    assert.ok(!markdown.includes('https://'), 'no scheme left to link');
    assert.ok(!/<img|<https|\*\*x\*\*|\[a\]/.test(markdown), 'no tag, autolink, emphasis or link');
    // The chart is inline HTML in a paragraph: the text between its tags is Markdown too.
    const chart = /<svg[^\n]*<\/svg>/.exec(markdown)![0];
    const texts = [...chart.matchAll(/>([^<]+)</g)].map((m) => m[1]!);
    assert.ok(texts.some((t) => decoded(t).startsWith('MCP: Agent https://evil.')));
    for (const t of texts) assert.doesNotMatch(bare(t), MARKUP, t);
  });

  it("in the prompt file's report: prompts, models, errors and file names are text, and a file link is never a scheme", () => {
    const file = path.join('/w', 'prompts', 'set.txt');
    const outcomes: LineOutcome[] = [
      { line: 1, prompt: HOSTILE[1]!, model: 'aurora-1', status: 'done', files: [path.join('/w', 'prompts', 'command:workbench.action.x.png')], costRub: 1 },
      { line: 2, prompt: HOSTILE[6]!, model: HOSTILE[0]!, status: 'failed', files: [], error: 'Refused: see https://evil.example/why <b>now</b>' },
    ];
    const report = batchReport(file, outcomes, new Date(2026, 0, 1), 'en');
    const rows = report.split('\n').filter((l) => /^\| \d/.test(l));
    assert.equal(rows.length, 2, 'a line break in a prompt starts no row, heading or list');
    assert.ok(rows[0]!.includes('[command&#58;workbench&#46;action&#46;x&#46;png](./command:workbench.action.x.png)'), rows[0]);
    for (const row of rows) {
      const [, prompt, model, , , , error] = row.split(' | ');
      for (const cell of [prompt!, model!, error!.replace(/ ?\|$/, '')]) assert.doesNotMatch(bare(cell), MARKUP, cell);
    }
    assert.ok(rows[1]!.includes(markdownText('Refused: see https://evil.example/why <b>now</b>')));
  });

  it('in the CSV: a formula after leading spaces or in full-width forms is kept as text', () => {
    const entry = (prompt: string, over: Partial<HistoryEntry> = {}): HistoryEntry => ({
      id: prompt,
      createdAt: '2026-11-20T10:00:00.000Z',
      request: { model: 'aurora-1', prompt },
      model: 'aurora-1',
      files: [],
      costRub: 1,
      ...over,
    });
    const promptCell = (prompt: string) =>
      resultsCsv([entry(prompt)])
        .split('\r\n')[1]!
        .split(',aurora-1,')[1]!
        .replace(/,1,1\.00,,$/, '');
    for (const [prompt, cell] of [
      [' =1+1', `"' =1+1"`],
      ['\t=cmd', `"'\t=cmd"`],
      ['  \t-2+3', `"'  \t-2+3"`],
      ['\u3000+1', `"'\u3000+1"`],
      ['\u200b@SUM(A1)', `"'\u200b@SUM(A1)"`],
      ['＝HYPERLINK("https://evil.example")', `"'＝HYPERLINK(""https://evil.example"")"`],
      ['＋1', `"'＋1"`],
      ['－1', `"'－1"`],
      ['＠SUM(A1)', `"'＠SUM(A1)"`],
      ['\nfoo', `"'\nfoo"`],
      // Not formulas: left as they are.
      ['a = b', 'a = b'],
      ['1-2 cats', '1-2 cats'],
      [' a cat', ' a cat'],
    ] as const)
      assert.equal(promptCell(prompt), cell, JSON.stringify(prompt));
    const row = resultsCsv([entry('x', { model: ' @evil', origin: { kind: 'mcp', client: "=cmd|' /C calc'!A0" } })]).split('\r\n')[1]!;
    assert.equal(row, `2026-11-20T10:00:00.000Z,mcp:=cmd|' /C calc'!A0,"' @evil",x,1,1.00,,`);
  });
});
