import * as assert from 'node:assert/strict';
import { axisMaximum, dailySpend, spendChartMarkdown, spendChartSvg } from '../../src/core/money/spendChart';

const now = new Date(2026, 10, 20, 15, 0, 0); // local time
const at = (daysAgo: number, hour = 10) => new Date(2026, 10, 20 - daysAgo, hour).toISOString();

describe('spend chart', () => {
  it('buckets local spend per day over the last 30 days, oldest first', () => {
    const series = dailySpend(
      [
        { createdAt: at(0), costRub: 1.1 },
        { createdAt: at(0, 1), costRub: 2.2 },
        { createdAt: at(3), costRub: 0.5 },
        { createdAt: at(3) },
        { createdAt: at(30), costRub: 99 }, // outside the window
        { createdAt: 'not a date', costRub: 5 },
      ],
      now,
    );
    assert.equal(series.days.length, 30);
    assert.equal(series.days[29]!.day, '2026-11-20');
    assert.equal(series.days[0]!.day, '2026-10-22');
    assert.deepEqual(series.days[29], { day: '2026-11-20', amount: 3.3, jobs: 2 });
    assert.deepEqual(series.days[26], { day: '2026-11-17', amount: 0.5, jobs: 2 });
    assert.equal(series.total, 3.8);
    assert.equal(series.jobs, 4);
    assert.equal(series.unknownCost, 1);
  });

  it('rounds the axis up to a readable maximum', () => {
    assert.equal(axisMaximum(0), 1);
    assert.equal(axisMaximum(3.3), 5);
    assert.equal(axisMaximum(18), 20);
    assert.equal(axisMaximum(240), 250);
    assert.equal(axisMaximum(1000), 1000);
  });

  it('draws one bar per day with spend, labelled axes and theme colours', () => {
    const series = dailySpend(
      [
        { createdAt: at(0), costRub: 4 },
        { createdAt: at(5), costRub: 2 },
      ],
      now,
    );
    const svg = spendChartSvg(series, 'en');
    assert.equal((svg.match(/<rect /g) ?? []).length, 2);
    assert.match(svg, /var\(--vscode-charts-blue/);
    assert.match(svg, /var\(--vscode-foreground/);
    assert.match(svg, />Day</);
    assert.match(svg, />Rubles</);
    assert.match(svg, />5\.00</); // axis top
    assert.doesNotMatch(svg, /<script/);
  });

  it('gives totals and says that it counts this machine, the figures above are the gateway', () => {
    const md = spendChartMarkdown(dailySpend([{ createdAt: at(1), costRub: 2.5 }], now), 'en');
    assert.match(md, /Total ₽2\.50 over 1 jobs/);
    assert.match(md, /only the jobs recorded by this machine/);
    assert.match(md, /figures above it are the gateway's/);
  });
});
