// Compare Models through the real job service against the emulator: one paid request per model,
// each fails on its own, Cancel stops all; the catalog offers only models that accept the request.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { estimateCost } from '../../src/core/money/cost';
import type { ImageModel } from '../../src/core/gateway/types';
import { type CompareEntry, eligibleModels, runComparison } from '../../src/jobs/compare';
import { ComparisonFeed } from '../../src/jobs/comparisonFeed';
import { parseFromWebviewMessage } from '../../src/studio/protocol/protocolValidation';
import { gatewaySuite, newService, paidRequests, SMALL } from './support/gateway';

describe('compare models', () => {
  const gw = gatewaySuite({ models: true });

  const jobsFor = (ids: string[], out: string) =>
    ids.map((model) => ({
      request: { model, prompt: 'a lighthouse', size: SMALL },
      output: { directory: path.join(gw.dir, out), pattern: '{model}-{index}' },
    }));
  /** The reservation of one image of each model at the catalog's prices: what a confirmation showed. */
  const confirmedFor = (ids: string[], models = gw.models) =>
    ids.map(
      (id) =>
        estimateCost(
          models.find((m) => m.id === id)!,
          1,
        ).reservation,
    );

  it('offers only models that accept the request (generation, editing, the options set)', () => {
    const ids = (list: ImageModel[]) => list.map((m) => m.id);
    const generating = ids(eligibleModels(gw.models, 'p', {}, 0));
    assert.deepEqual(generating, ids(gw.models.filter((m) => m.supports_generation)));
    const transparent = ids(eligibleModels(gw.models, 'p', { background: 'transparent' }, 0));
    assert.deepEqual(transparent, ids(gw.models.filter((m) => m.supports_generation && m.supported_background.includes('transparent'))));
    const editingTwo = eligibleModels(gw.models, 'p', {}, 2);
    assert.ok(editingTwo.length > 0);
    assert.ok(editingTwo.every((m) => m.supports_edit && m.max_input_references >= 2));
    assert.ok(
      ids(eligibleModels(gw.models, 'p', { aspect_ratio: '21:9' }, 0)).every((id) =>
        gw.models.find((m) => m.id === id)!.supported_aspect_ratios.includes('21:9'),
      ),
    );
  });

  it('sends one paid request per model, saves each model its images, and reports cost and time', async () => {
    const updates: (readonly CompareEntry[])[] = [];
    const entries = await runComparison(jobsFor(['aurora-1', 'sketch-mini', 'prism-2'], 'three'), {
      jobs: newService(gw.client, gw.models, path.join(gw.dir, 'recovery')).service,
      concurrency: 2,
      confirmedReservations: confirmedFor(['aurora-1', 'sketch-mini', 'prism-2']),
      onUpdate: (e) => updates.push(e),
    });
    assert.equal(paidRequests(gw.emu).length, 3);
    assert.deepEqual(
      entries.map((e) => [e.model, e.status, e.files.length]),
      [
        ['aurora-1', 'done', 1],
        ['sketch-mini', 'done', 1],
        ['prism-2', 'done', 1],
      ],
    );
    for (const e of entries) {
      assert.match(path.basename(e.files[0]!), new RegExp(`^${e.model}-1\\.png$`));
      assert.ok(e.costRub! > 0 && e.ms! >= 0);
    }
    assert.ok(
      updates.some((u) => u.some((e) => e.status === 'running')),
      'the grid saw models running',
    );
  });

  it('a model fails on its own with its own message', async () => {
    // The gateway's own refusal (a 500 would be an unknown outcome).
    gw.emu.state.armFault({ fault: 'rate-limit' });
    const entries = await runComparison(jobsFor(['aurora-1', 'sketch-mini'], 'fail'), {
      jobs: newService(gw.client, gw.models, path.join(gw.dir, 'recovery')).service,
      concurrency: 1,
      confirmedReservations: confirmedFor(['aurora-1', 'sketch-mini']),
    });
    assert.deepEqual(
      entries.map((e) => e.status),
      ['failed', 'done'],
    );
    assert.match(entries[0]!.error!, /Too many requests/);
  });

  it('Cancel stops all: models not started are never sent', async () => {
    const controller = new AbortController();
    const entries = await runComparison(jobsFor(['aurora-1', 'sketch-mini', 'prism-2'], 'cancel'), {
      jobs: newService(gw.client, gw.models, path.join(gw.dir, 'recovery')).service,
      concurrency: 1,
      confirmedReservations: confirmedFor(['aurora-1', 'sketch-mini', 'prism-2']),
      signal: controller.signal,
      onUpdate: (e) => e[0]!.status === 'done' && controller.abort(),
    });
    assert.deepEqual(
      entries.map((e) => e.status),
      ['done', 'not-sent', 'not-sent'],
    );
    assert.equal(paidRequests(gw.emu).length, 1);
  });

  it('sends at most what was confirmed: a model whose price rose after the confirmation is refused, not sent, and says so', async () => {
    const ids = ['aurora-1', 'sketch-mini'];
    const confirmed = confirmedFor(ids);
    // The catalog refreshed in the background between the confirmation and the send: sketch-mini costs more.
    const raised = gw.models.map((m) => (m.id === 'sketch-mini' ? { ...m, max_price_per_image: m.max_price_per_image + 1 } : m));
    // Asking is on for every cost: a confirmed job must not ask again, a raised one must not be sent.
    const rig = newService(gw.client, raised, path.join(gw.dir, 'recovery'), { confirmAbove: () => 0 });
    const entries = await runComparison(jobsFor(ids, 'rose'), { jobs: rig.service, concurrency: 1, confirmedReservations: confirmed });
    assert.deepEqual(
      entries.map((e) => e.status),
      ['done', 'not-sent'],
    );
    assert.match(entries[1]!.error!, /sketch-mini now reserves .+, more than the .+ confirmed/);
    assert.equal(paidRequests(gw.emu).length, 1, 'only aurora-1 was sent');
    assert.equal(rig.confirms, 0, 'the confirmed job asked again');
  });

  it('the comparison feed is claimed in one step: a second claim is refused until the first run releases it', () => {
    const feed = new ComparisonFeed();
    const seen: boolean[] = [];
    const subscription = feed.onDidChange((state) => seen.push(state.running));
    assert.equal(feed.claim(), true);
    assert.equal(feed.claim(), false, 'a second run took the feed');
    const controller = new AbortController();
    feed.start({ runId: 'r', prompt: 'p', estimateText: '', entries: [] }, controller);
    feed.cancel();
    assert.equal(controller.signal.aborted, true, 'Cancel All reaches the run that holds the feed');
    feed.finish([]);
    feed.release();
    assert.equal(feed.claim(), true);
    subscription.dispose();
    feed.start({ runId: 's', prompt: 'p', estimateText: '', entries: [] }, new AbortController());
    assert.deepEqual(seen, [true, false], 'listeners follow the runs until disposed');
  });

  it('the studio accepts only well-formed comparison messages', () => {
    const form = { model: '', prompt: 'p', n: 1, params: {}, references: [] };
    assert.deepEqual(parseFromWebviewMessage({ type: 'compare', requestId: 3, form }), { type: 'compare', requestId: 3, form });
    assert.deepEqual(parseFromWebviewMessage({ type: 'cancelCompare' }), { type: 'cancelCompare' });
    assert.deepEqual(parseFromWebviewMessage({ type: 'useModel', model: 'aurora-1' }), { type: 'useModel', model: 'aurora-1' });
    assert.equal(parseFromWebviewMessage({ type: 'useModel', model: '' }), undefined);
    assert.equal(parseFromWebviewMessage({ type: 'useModel', model: 'x', extra: 1 }), undefined);
    assert.equal(parseFromWebviewMessage({ type: 'compare', requestId: -1, form }), undefined);
    assert.equal(parseFromWebviewMessage({ type: 'cancelCompare', now: true }), undefined);
  });
});
