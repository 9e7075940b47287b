// The Markdown report written next to a prompt file after a batch: one row per line with its
// prompt, model, files (as links), cost and error, and the totals. No vscode import.
import * as path from 'node:path';
import { formatRubles } from '../core/cost';
import { tr } from '../core/i18n';
import { type LineOutcome, type LineStatus, summarize } from './batch';

/** `prompts.txt` → `prompts.report.md` in the same folder. */
export function reportPathFor(promptFile: string): string {
  const ext = path.extname(promptFile);
  return path.join(path.dirname(promptFile), `${path.basename(promptFile, ext)}.report.md`);
}

const cell = (text: string) => text.replace(/\r?\n/g, ' ').replace(/[|\\<>[\]`*_]/g, (c) => `\\${c}`);

function statusText(status: LineStatus): string {
  switch (status) {
    case 'done':
      return tr('done');
    case 'skipped':
      return tr('done earlier (skipped)');
    case 'failed':
      return tr('failed');
    case 'outcome-unknown':
      return tr('outcome unknown (may have been charged)');
    case 'not-sent':
      return tr('not sent');
  }
}

export function batchReport(promptFile: string, outcomes: readonly LineOutcome[], date: Date, locale = 'ru'): string {
  const dir = path.dirname(reportPathFor(promptFile));
  const link = (file: string) => {
    const relative = path.relative(dir, file).split(path.sep).join('/');
    return `[${cell(path.basename(file))}](${encodeURI(relative).replace(/\(/g, '%28').replace(/\)/g, '%29')})`;
  };
  const sum = summarize(outcomes);
  const prompt = (text: string) => cell(text.length > 120 ? `${text.slice(0, 120)}…` : text);
  const rows = [...outcomes]
    .sort((a, b) => a.line - b.line)
    .map((o) =>
      [
        String(o.line),
        prompt(o.prompt),
        cell(o.model),
        statusText(o.status),
        o.files.map(link).join(' ') || '—',
        o.costRub === undefined ? '—' : formatRubles(o.costRub, locale),
        o.error ? cell(o.error) : '',
      ].join(' | '),
    )
    .map((row) => `| ${row} |`);
  return [
    `# ${tr('Batch report: {0}', cell(path.basename(promptFile)))}`,
    '',
    tr('Run {0}.', date.toLocaleString(locale)),
    tr('{0} done, {1} skipped (done earlier), {2} failed, {3} with unknown outcome, {4} not sent. Spent in this run: {5}.', sum.done, sum.skipped, sum.failed, sum['outcome-unknown'], sum['not-sent'], formatRubles(sum.spent, locale)),
    '',
    `| ${[tr('Line'), tr('Prompt'), tr('Model'), tr('Status'), tr('Files'), tr('Cost'), tr('Error')].join(' | ')} |`,
    '|---:|---|---|---|---|---:|---|',
    ...rows,
    '',
  ].join('\n');
}
