// Interrupted region edits finished at the next start (issue 41): the paid answer for the crop was
// saved and recorded, and the process stopped before finishRegionEdit. recoverRegionEdits pastes it
// into the original as the edit would have (outside pixels the original's), records the composite
// and the mask beside it, pays nothing; a composite is never pasted again; an original changed or
// gone keeps the answer as it came, said once; two starters at once paste it once.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { decodeImage } from '../../src/core/images/codecs';
import { readPngTextChunk } from '../../src/core/files/pngText';
import { COMPOSITE_KEYWORD, compositeInto, finishRegionEdit, isCompositeFile, recoverRegionEdits } from '../../src/jobs/regionEdit';
import { interruptedRegionEdits, markRegionEditSent, pendingRegionEdits, regionEditSentRecently, removeOldPaintedMasks } from '../../src/jobs/regionPending';
import { HistoryStore } from '../../src/jobs/results/history';
import { gatewaySuite, paidRequests } from './support/gateway';
import { boxMask, gradient, rgbaPng } from './support/maskImages';
import { runLiveEditChild, runRecoveryChild } from './support/regionRecoveryChild';
import { journalCode, regionEditStoppedBeforeFinish } from './support/regionStopped';
import { startLeaseHolder } from './support/leaseHolder';
import { isStopped, leasesStale, resumeProcess, until } from './support/pause';
import { createHash } from 'node:crypto';

describe('interrupted region edits finished at the next start', function () {
  this.timeout(60_000);
  const gw = gatewaySuite({ models: true });
  const W = 300;
  const H = 200;
  const BOX = { x: 200, y: 120, width: 20, height: 16 };
  let dir: string;
  let painted: string;
  let locks: string;
  let index = 0;

  beforeEach(async () => {
    dir = path.join(gw.dir, `recovery-${++index}`);
    painted = path.join(gw.dir, `painted-${index}`);
    locks = path.join(gw.dir, `locks-${index}`);
    await fs.mkdir(dir, { recursive: true });
    await fs.mkdir(painted, { recursive: true });
  });

  const storeOf = () => new HistoryStore(path.join(dir, 'results.jsonl'), { load: journalCode });

  /** A studio region edit whose answer was saved and recorded, and whose process stopped before finishRegionEdit. */
  const stoppedBeforeFinish = (box = BOX) =>
    regionEditStoppedBeforeFinish(gw, { dir, mask: path.join(painted, `${index}-painted.png`), size: { width: W, height: H }, box });

  const recentRegions = async (store: HistoryStore) => {
    const now = new Date();
    return (await store.index()).createdBetween(new Date(now.getTime() - 86_400_000), new Date(now.getTime() + 60_000)).filter((e) => e.region);
  };
  const recover = async (store: HistoryStore) =>
    recoverRegionEdits(store, await pendingRegionEdits(await recentRegions(store)), { paintedMasksDir: painted, lockDir: locks });

  const assertOutsideIsOriginal = async (file: string, mask: Uint8Array) => {
    const edited = await decodeImage(await fs.readFile(file));
    const source = gradient(W, H);
    assert.deepEqual([edited.width, edited.height], [W, H]);
    let changed = 0;
    for (let p = 0; p < W * H; p++) {
      const same = edited.data.subarray(p * 4, p * 4 + 4).every((v, i) => v === source.data[p * 4 + i]);
      if (mask[p] === 0) assert.ok(same, `pixel ${p % W},${Math.floor(p / W)} outside the region changed`);
      else if (!same) changed++;
    }
    assert.ok(changed > 0, 'the region took the answer');
  };

  it('an answer saved and recorded, stopped before finishRegionEdit: the next start pastes it, records the composite and the mask beside it, pays nothing', async () => {
    const { mask, plan, result, store } = await stoppedBeforeFinish();
    const file = result.files[0]!;
    assert.equal(paidRequests(gw.emu).length, 1);
    const pending = await pendingRegionEdits(await recentRegions(store));
    assert.equal(pending.length, 1, 'the journal has one unfinished region edit');

    const report = await recover(storeOf());
    assert.deepEqual(
      report.finished.map((f) => f.files),
      [[file]],
    );
    assert.deepEqual(report.kept, []);
    await assertOutsideIsOriginal(file, plan.mask.alpha);
    assert.equal(await readPngTextChunk(file, COMPOSITE_KEYWORD), 'region');
    const besideMask = file.replace(/\.png$/, '.mask.png');
    assert.deepEqual(await fs.readFile(besideMask), rgbaPng(boxMask(W, H, BOX)));
    const entry = (await storeOf().index()).findByFile(file)!;
    assert.deepEqual(entry.files, [file]);
    assert.equal(entry.region!.mask, besideMask, 'the journal names the mask kept beside the result');
    await assert.rejects(fs.stat(mask), 'the painted mask is removed once its copy is recorded');
    assert.equal(paidRequests(gw.emu).length, 1, 'nothing was sent again');
    assert.deepEqual(await pendingRegionEdits(await recentRegions(storeOf())), [], 'the next start has nothing to do');
  });

  it('a result finished by the edit itself is left alone: not pending, and its bytes unchanged when looked at anyway', async () => {
    const { plan, result, store } = await stoppedBeforeFinish();
    const outcome = await finishRegionEdit(plan, result);
    await store.update((await store.index()).findByFile(result.files[0]!)!.id, { files: outcome.files, region: { ...plan.record, mask: outcome.masks[0]! } });
    const before = await fs.readFile(outcome.files[0]!);
    assert.deepEqual(await pendingRegionEdits(await recentRegions(store)), []);
    const report = await recoverRegionEdits(storeOf(), await recentRegions(store), { paintedMasksDir: painted, lockDir: locks });
    assert.deepEqual(report, { finished: [], kept: [], busy: [] });
    assert.deepEqual(await fs.readFile(outcome.files[0]!), before);
  });

  it('pasted but stopped before the mask was saved: the composite is not pasted again, only its mask saved and recorded', async () => {
    const { plan, result, store } = await stoppedBeforeFinish();
    const file = await compositeInto(plan, result.files[0]!);
    const composite = await fs.readFile(file);
    const report = await recover(store);
    assert.deepEqual(report.finished, [], 'nothing was pasted');
    assert.deepEqual(await fs.readFile(file), composite, 'the composite is as it was');
    const entry = (await storeOf().index()).findByFile(file)!;
    assert.equal(entry.region!.mask, file.replace(/\.png$/, '.mask.png'));
    await fs.stat(entry.region!.mask);
  });

  it('a crop that is the whole image: the composite chunk, not the size, tells a composite from an answer of the same size', async () => {
    const whole = { x: 0, y: 0, width: W, height: H };
    const { plan, result, store } = await stoppedBeforeFinish(whole);
    assert.deepEqual([plan.record.crop.width, plan.record.crop.height], [W, H]);
    const file = result.files[0]!;
    // An answer of the original's size (the emulator answers at its own): white, without the chunk.
    await fs.writeFile(file, rgbaPng(boxMask(W, H, whole)));
    const report = await recover(store);
    assert.equal(report.finished.length, 1, 'an answer of the original size without the chunk is pasted');
    assert.equal(await readPngTextChunk(file, COMPOSITE_KEYWORD), 'region');
    const composite = await fs.readFile(file);
    // The mask beside it lost: the chunk still says composite, so it is not pasted a second time.
    await fs.rm(file.replace(/\.png$/, '.mask.png'));
    await storeOf().update((await storeOf().index()).findByFile(file)!.id, { region: plan.record });
    const again = await recoverRegionEdits(storeOf(), await recentRegions(storeOf()), { lockDir: locks });
    assert.deepEqual(again.finished, []);
    assert.deepEqual(await fs.readFile(file), composite);
  });

  it('a live edit that finds its result pasted meanwhile by another window starting does not paste it again', async () => {
    const { plan, result, store } = await stoppedBeforeFinish();
    await recover(store);
    const composite = await fs.readFile(result.files[0]!);
    const outcome = await finishRegionEdit(plan, result);
    assert.deepEqual(outcome.notes, []);
    assert.deepEqual(outcome.files, result.files);
    assert.deepEqual(await fs.readFile(result.files[0]!), composite, 'pasted once');
    assert.deepEqual(outcome.masks, [result.files[0]!.replace(/\.png$/, '.mask.png')], 'the same mask beside it, no second copy');
  });

  it('the original changed after the edit: the answer is kept as it came, the entry says why, told once', async () => {
    const { original, result, store, answer } = await stoppedBeforeFinish();
    await fs.writeFile(original, rgbaPng(gradient(W, H)));
    const later = new Date(Date.now() + 60_000);
    await fs.utimes(original, later, later);
    const report = await recover(store);
    assert.equal(report.kept.length, 1);
    assert.match(report.kept[0]!.reason, /photo\.png changed after the edit/);
    assert.deepEqual(await fs.readFile(result.files[0]!), answer, 'the paid answer is kept as it came');
    const entry = (await storeOf().index()).findByFile(result.files[0]!)!;
    assert.match(entry.region!.kept!, /changed/);
    assert.deepEqual(await recover(storeOf()), { finished: [], kept: [], busy: [] }, 'the next start does not tell again');
  });

  it('the original gone: the answer is kept as it came, with one note', async () => {
    const { original, result, store, answer } = await stoppedBeforeFinish();
    await fs.rm(original);
    const report = await recover(store);
    assert.equal(report.kept.length, 1);
    assert.match(report.kept[0]!.reason, /photo\.png is gone/);
    assert.deepEqual(await fs.readFile(result.files[0]!), answer);
    assert.equal((await recover(storeOf())).kept.length, 0);
  });

  it('the painted mask gone: the answer is kept as it came, with one note', async () => {
    const { mask, result, store, answer } = await stoppedBeforeFinish();
    await fs.rm(mask);
    const report = await recover(store);
    assert.equal(report.kept.length, 1);
    assert.deepEqual(await fs.readFile(result.files[0]!), answer);
  });

  it('two starters at once (two journals on one file, one lease folder): the result is pasted once, one mask beside it', async () => {
    const { plan, result, store } = await stoppedBeforeFinish();
    const pending = await pendingRegionEdits(await recentRegions(store));
    const options = { paintedMasksDir: painted, lockDir: locks };
    const [a, b] = await Promise.all([recoverRegionEdits(storeOf(), pending, options), recoverRegionEdits(storeOf(), pending, options)]);
    assert.equal(a.finished.length + b.finished.length, 1, `pasted once: ${JSON.stringify([a, b])}`);
    await assertOutsideIsOriginal(result.files[0]!, plan.mask.alpha);
    const names = (await fs.readdir(dir)).filter((n) => n.startsWith('photo.region-1'));
    assert.deepEqual(names.sort(), ['photo.region-1.mask.png', 'photo.region-1.png']);
  });

  it('two windows starting at once (two processes): the result is pasted once, the other leaves it', async () => {
    const { plan, result } = await stoppedBeforeFinish();
    let go!: () => void;
    const started = new Promise<void>((resolve) => (go = resolve));
    const children = [1, 2].map(() => runRecoveryChild(path.join(dir, 'results.jsonl'), painted, locks, started));
    await Promise.all(children.map((c) => c.ready));
    go();
    const reports = await Promise.all(children.map((c) => c.report));
    assert.equal(
      reports.reduce((n, r) => n + r.finished.length, 0),
      1,
      JSON.stringify(reports),
    );
    assert.deepEqual(
      reports.flatMap((r) => r.kept),
      [],
    );
    await assertOutsideIsOriginal(result.files[0]!, plan.mask.alpha);
    const names = (await fs.readdir(dir)).filter((n) => n.startsWith('photo.region-1'));
    assert.deepEqual(names.sort(), ['photo.region-1.mask.png', 'photo.region-1.png']);
    const entry = (await storeOf().index()).findByFile(result.files[0]!)!;
    assert.equal(entry.region!.mask, path.join(dir, 'photo.region-1.mask.png'));
  });

  it('a start stopped (SIGSTOP) at the fence past its lease: another start pastes the result; woken, it renames nothing, records nothing and leaves it to the other', async () => {
    const { plan, result } = await stoppedBeforeFinish();
    const journal = path.join(dir, 'results.jsonl');
    const staleMs = 2_000;
    const paused = runRecoveryChild(journal, painted, locks, Promise.resolve(), { staleMs, stopAtFence: true });
    await until(() => isStopped(paused.pid), 'the first start to stop at the fence');
    await leasesStale(locks, staleMs);
    const other = await runRecoveryChild(journal, painted, locks, Promise.resolve(), { staleMs }).report;
    assert.equal(other.finished.length, 1, JSON.stringify(other));
    const pasted = await fs.readFile(result.files[0]!);
    const recorded = (await storeOf().index()).findByFile(result.files[0]!)!;
    resumeProcess(paused.pid);
    const woken = await paused.report;
    assert.deepEqual([woken.finished, woken.kept, woken.busy], [[], [], [recorded.id]], JSON.stringify(woken));
    assert.ok((await fs.readFile(result.files[0]!)).equals(pasted), 'the woken start wrote over the pasted result');
    await assertOutsideIsOriginal(result.files[0]!, plan.mask.alpha);
    // Its composite, written before the fence, is gone with it; one mask beside the result.
    const names = (await fs.readdir(dir)).filter((n) => n.startsWith('photo.region-1'));
    assert.deepEqual(names.sort(), ['photo.region-1.mask.png', 'photo.region-1.png']);
    const entry = (await storeOf().index()).find(recorded.id)!;
    assert.deepEqual(entry.region, recorded.region, "the woken start changed the other's record");
    assert.equal(entry.region!.kept, undefined);
    assert.equal(entry.region!.mask, path.join(dir, 'photo.region-1.mask.png'));
  });

  describe('the edit itself stopped (SIGSTOP) at the fence past its lease, then woken (SIGCONT)', () => {
    const staleMs = 2_000;
    const stopLiveEdit = async () => {
      const stopped = await stoppedBeforeFinish();
      const model = { supported_aspect_ratios: gw.models.find((m) => m.id === 'prism-2')!.supported_aspect_ratios };
      const live = { original: stopped.original, mask: stopped.mask, model, files: stopped.result.files };
      const edit = runLiveEditChild(path.join(dir, 'results.jsonl'), locks, live, { staleMs, stopAtFence: true });
      await until(() => isStopped(edit.pid), 'the edit to stop at the fence');
      await leasesStale(locks, staleMs);
      return { ...stopped, edit };
    };
    const assertPastedOnce = async (file: string, alpha: Uint8Array, masks: string[]) => {
      assert.ok(await isCompositeFile(file), 'a composite');
      await assertOutsideIsOriginal(file, alpha);
      assert.deepEqual(masks, [file.replace(/\.png$/, '.mask.png')]);
      const names = (await fs.readdir(dir)).filter((n) => n.startsWith('photo.region-1'));
      assert.deepEqual(names.sort(), ['photo.region-1.mask.png', 'photo.region-1.png']);
    };

    it('nobody took it over: it pastes under a new lease, with no note (it kept the answer as it came, with the mask beside it)', async () => {
      const { plan, result, edit } = await stopLiveEdit();
      resumeProcess(edit.pid);
      const outcome = await edit.report;
      assert.deepEqual(outcome.notes, []);
      assert.deepEqual(outcome.files, result.files);
      await assertPastedOnce(result.files[0]!, plan.mask.alpha, outcome.masks);
    });

    it('a starting window took it over and pasted it: that composite stands, not pasted again', async () => {
      const { plan, result, edit } = await stopLiveEdit();
      const started = await runRecoveryChild(path.join(dir, 'results.jsonl'), painted, locks, Promise.resolve(), { staleMs }).report;
      assert.equal(started.finished.length, 1, JSON.stringify(started));
      const pasted = await fs.readFile(result.files[0]!);
      resumeProcess(edit.pid);
      const outcome = await edit.report;
      assert.deepEqual(outcome.notes, []);
      assert.ok((await fs.readFile(result.files[0]!)).equals(pasted), 'pasted again');
      await assertPastedOnce(result.files[0]!, plan.mask.alpha, outcome.masks);
    });
  });

  it('a result whose lease another process holds (a window finishing it) is left to it: untouched, pending for the next start', async () => {
    const { result, store, answer } = await stoppedBeforeFinish();
    const key = createHash('sha256').update(path.resolve(result.files[0]!)).digest('hex').slice(0, 32);
    await fs.mkdir(locks, { recursive: true });
    const holder = await startLeaseHolder(path.join(locks, key), path.join(locks, `${key}.lock`), 10_000);
    try {
      const report = await recover(store);
      assert.equal(report.busy.length, 1);
      assert.deepEqual(report.finished, []);
      assert.deepEqual(await fs.readFile(result.files[0]!), answer);
    } finally {
      await holder.kill();
    }
    assert.equal((await pendingRegionEdits(await recentRegions(storeOf()))).length, 1, 'still there for the next start');
  });
});

describe('painted masks left by crashes', () => {
  it('go after seven days unless a pending result names them', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gwi-painted-'));
    const old = new Date(Date.now() - 8 * 86_400_000);
    const names = ['old.png', 'old-needed.png', 'recent.png'];
    for (const name of names) await fs.writeFile(path.join(dir, name), 'x');
    for (const name of names.slice(0, 2)) await fs.utimes(path.join(dir, name), old, old);
    const region = {
      original: '/o.png',
      mask: path.join(dir, 'old-needed.png'),
      feather: 0,
      box: { x: 0, y: 0, width: 1, height: 1 },
      crop: { x: 0, y: 0, width: 1, height: 1, ratio: '1:1' },
      description: '',
    };
    assert.equal(await removeOldPaintedMasks(dir, [{ region }]), 1);
    assert.deepEqual((await fs.readdir(dir)).sort(), ['old-needed.png', 'recent.png']);
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('a start reads the journal for region edits only in the seven days after one was sent into it (the stamp beside the journal)', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gwi-stamp-'));
    const journal = path.join(dir, 'results.jsonl');
    assert.equal(await regionEditSentRecently([journal, undefined]), false, 'never sent: the journal is not read');
    await markRegionEditSent(journal);
    assert.equal(await regionEditSentRecently([undefined, journal]), true);
    assert.equal(await regionEditSentRecently([journal], new Date(Date.now() + 8 * 86_400_000)), false, 'a week later: not read again');
    // What a start asks (the window's and the MCP server's): without the stamp the journal is not even read.
    let reads = 0;
    const store = new HistoryStore(journal, { load: journalCode });
    const history = { index: async () => (reads++, await store.index()) };
    assert.equal(await interruptedRegionEdits(history, [path.join(dir, 'other.jsonl')]), undefined);
    assert.equal(reads, 0);
    assert.deepEqual(await interruptedRegionEdits(history, [journal]), []);
    assert.equal(reads, 1);
    await store.close();
    await fs.rm(dir, { recursive: true, force: true });
  });
});
