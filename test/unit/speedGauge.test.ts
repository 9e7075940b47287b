// The speed gauge of `npm test`'s summary (test/harness/speedGauge.ts): a reading is the CPU time of
// real work, and the summary's line puts the layers' CPU in gauges. No time is asserted: a slow
// machine only reads higher.
import * as assert from 'node:assert/strict';
import { readSpeedGauge, speedGaugeLine } from '../harness/speedGauge';

describe("speed gauge (npm test's summary)", () => {
  it('reads the CPU time the fixed work took: a positive, finite number of milliseconds', () => {
    const reading = readSpeedGauge();
    assert.ok(Number.isFinite(reading) && reading > 0, `read ${reading}`);
  });

  it("says both readings and the layers' CPU over their mean, in gauges", () => {
    assert.equal(
      speedGaugeLine(400, 410, 751),
      "speed gauge (CPU of a fixed piece of work; lower is a faster machine): 400 ms at the start, 410 ms at the end; the layers' CPU is 1854 gauges",
    );
  });

  it("leaves out the gauges where the layers' CPU was not measured (no control group)", () => {
    assert.equal(
      speedGaugeLine(250, 260, undefined),
      'speed gauge (CPU of a fixed piece of work; lower is a faster machine): 250 ms at the start, 260 ms at the end',
    );
  });
});
