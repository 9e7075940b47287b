// axe-core (Deque's accessibility engine) run inside a webview's frame: its source is evaluated in the
// frame through the DevTools protocol, which the page's CSP (no inline script, no eval) does not govern.
import * as fs from 'fs';
import type { Frame } from 'playwright-core';

const AXE_SOURCE = () => fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeFinding {
  id: string;
  impact: string;
  help: string;
  targets: string[];
  /** axe's own words for the first node (for a contrast: both colours and the ratio). */
  detail: string;
}

/** The serious and critical findings of axe-core in the frame's document (WCAG 2 A and AA rules, best practices). */
export async function seriousAxeFindings(frame: Frame): Promise<AxeFinding[]> {
  if (!(await frame.evaluate(() => 'axe' in globalThis))) await frame.evaluate(AXE_SOURCE());
  const violations = await frame.evaluate(async () => {
    type Result = { id: string; impact?: string | null; help: string; nodes: { target: unknown[]; failureSummary?: string }[] };
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: Result[] }> } }).axe;
    const document = (globalThis as unknown as { document: unknown }).document;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? 'unknown',
      help: v.help,
      targets: v.nodes.map((n) => n.target.join(' ')),
      detail: v.nodes[0]?.failureSummary ?? '',
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
