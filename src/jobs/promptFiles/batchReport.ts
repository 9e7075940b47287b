// The Markdown report written next to a prompt file after a batch: one row per line with its
// prompt, model, files (as links), cost and error, and the totals. No vscode import.
import * as path from 'node:path';
import { formatRubles } from '../../core/money/cost';
import { markdownText } from '../../core/common/markdownText';
import * as l10n from '@vscode/l10n';
import { type LineOutcome, type SkipReason, summarize } from './batch';

/** `prompts.txt` → `prompts.report.md` in the same folder. */
export function reportPathFor(promptFile: string): string {
  const ext = path.extname(promptFile);
  return path.join(path.dirname(promptFile), `${path.basename(promptFile, ext)}.report.md`);
}

/** A prompt, a model's or a file's name, an error: plain text in the report (no link, emphasis or tag made of it). */
const cell = (text: string) => markdownText(text);

function statusText(outcome: LineOutcome): string {
  switch (outcome.status) {
    case 'done':
      return outcome.recovered ? l10n.t('done: images in the recovery folder') : l10n.t('done');
    case 'skipped':
      return outcome.meanwhile ? l10n.t('done meanwhile by another run (skipped)') : skipText(outcome.skipReason);
    case 'failed':
      return outcome.recovered ? l10n.t('failed after it was paid for: what arrived waits in the recovery folder') : l10n.t('failed');
    case 'outcome-unknown':
      return outcome.recovered
        ? l10n.t('outcome unknown (may have been charged): what arrived waits in the recovery folder')
        : l10n.t('outcome unknown (may have been charged)');
    case 'not-sent':
      return outcome.takenOver ? l10n.t('not sent: another window took the run over') : l10n.t('not sent');
  }
}

function skipText(reason: SkipReason | undefined): string {
  switch (reason) {
    case 'recovery':
      return l10n.t('done earlier (skipped): images in the recovery folder');
    case 'provenance':
      return l10n.t('done earlier (skipped): found by the provenance in its PNGs');
    default:
      return l10n.t('done earlier (skipped)');
  }
}

/** How many lines were skipped and why (empty when none was). */
export function skippedSummary(outcomes: readonly LineOutcome[]): string {
  const { skipped, skippedBy } = summarize(outcomes);
  if (!skipped) return '';
  return l10n.t(
    'Skipped because they were paid for before: {0} with images in the workspace, {1} with images in the recovery folder (Recover Unsaved Images saves them), {2} found by the provenance in their PNGs.',
    skippedBy.files,
    skippedBy.recovery,
    skippedBy.provenance,
  );
}

/** `takenOver`: what the user was told when another window took the run over (PromptFileOutcome.takenOver). */
export function batchReport(promptFile: string, outcomes: readonly LineOutcome[], date: Date, locale = 'ru', takenOver?: string): string {
  const dir = path.dirname(reportPathFor(promptFile));
  const link = (file: string) => {
    const relative = path.relative(dir, file).split(path.sep).join('/');
    // `./`: a file named `command:x` or `https:x` stays a file beside the report, never a scheme.
    const target = encodeURI(relative.startsWith('../') ? relative : `./${relative}`);
    return `[${cell(path.basename(file))}](${target.replace(/\(/g, '%28').replace(/\)/g, '%29')})`;
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
        statusText(o),
        o.files.map(link).join(' ') || '—',
        o.costRub === undefined ? '—' : formatRubles(o.costRub, locale),
        o.error ? cell(o.error) : '',
      ].join(' | '),
    )
    .map((row) => `| ${row} |`);
  return [
    `# ${l10n.t('Batch report: {0}', cell(path.basename(promptFile)))}`,
    '',
    l10n.t('Run {0}.', date.toLocaleString(locale)),
    l10n.t(
      '{0} done, {1} skipped (done earlier), {2} failed, {3} with unknown outcome, {4} not sent. Spent in this run: {5}.',
      sum.done,
      sum.skipped,
      sum.failed,
      sum['outcome-unknown'],
      sum['not-sent'],
      formatRubles(sum.spent, locale),
    ),
    ...(sum.skipped ? ['', skippedSummary(outcomes)] : []),
    ...(takenOver ? ['', `**${cell(takenOver)}**`] : []),
    '',
    `| ${[l10n.t('Line'), l10n.t('Prompt'), l10n.t('Model'), l10n.t('Status'), l10n.t('Files'), l10n.t('Cost'), l10n.t('Error')].join(' | ')} |`,
    '|---:|---|---|---|---|---:|---|',
    ...rows,
    '',
  ].join('\n');
}
