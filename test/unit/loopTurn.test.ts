import * as assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import type { ImageSink } from '../../src/core/gateway/imageSink';
import { decodeGenerationStream } from '../../src/core/answers/generationStream';
import { TurnBudget } from '../../src/core/common/loopTurn';

/** Counts check phases: each one is the end of an event-loop turn. */
function turnCounter(): { readonly turn: number; stop(): void } {
  let turn = 0;
  let running = true;
  const tick = (): void => {
    turn++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    get turn() {
      return turn;
    },
    stop() {
      running = false;
    },
  };
}

const afterCheckPhase = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('TurnBudget (one budget of work per event-loop turn)', function () {
  it('is spent once the turn has run longer than the budget, and fresh in the next turn', async function () {
    let now = 1000;
    const budget = new TurnBudget(6, () => now);
    assert.equal(budget.spent(), false, 'the first call starts the turn');
    now += 6;
    assert.equal(budget.spent(), false, 'exactly the budget is not over it');
    now += 1;
    assert.equal(budget.spent(), true);
    await afterCheckPhase();
    assert.equal(budget.spent(), false, 'a new turn starts with the whole budget');
    now += 3;
    assert.equal(budget.spent(), false);
  });

  it('next() resolves two check phases later, so timers and I/O of a turn come first', async function () {
    const turns = turnCounter();
    try {
      await afterCheckPhase();
      const before = turns.turn;
      await new TurnBudget().next();
      assert.ok(turns.turn - before >= 2, `resolved after ${turns.turn - before} check phase(s)`);
    } finally {
      turns.stop();
    }
  });
});

describe('decodeGenerationStream shares one budget per turn among all the answers being decoded', function () {
  const STREAMS = 8;
  const CHUNK = 64 * 1024;
  /** Decoding costs 1 ms per 12 KiB on the fake clock: a chunk of 64 KiB of base64 (48 KiB of image) costs 4 ms. */
  const KIB_PER_MS = 12;
  const SLICE_BYTES = (CHUNK / 4) * 3;

  /** One answer of one image of 384 KiB: 8 chunks of base64. */
  function answer(seed: number): { body: AsyncIterable<Uint8Array>; image: Buffer } {
    const image = Buffer.concat(Array.from({ length: 6 * 1024 }, (_, i) => crypto.createHash('sha512').update(`${seed}/${i}`).digest()));
    const json = Buffer.from(JSON.stringify({ created: 1, data: [{ b64_json: image.toString('base64') }] }));
    async function* chunks(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < json.length; i += CHUNK) yield json.subarray(i, i + CHUNK);
    }
    return { body: chunks(), image };
  }

  /**
   * Decodes STREAMS answers at once, the fake clock advancing with every decoded byte. Returns the
   * most bytes any one turn decoded, all streams together.
   */
  async function mostBytesInOneTurn(budgets: (clock: { now: number }) => TurnBudget[]): Promise<number> {
    const clock = { now: 0 };
    const perStream = budgets(clock);
    const turns = turnCounter();
    const bytesInTurn = new Map<number, number>();
    try {
      await Promise.all(
        Array.from({ length: STREAMS }, async (_, s) => {
          const { body, image } = answer(s);
          const written: Buffer[] = [];
          const sink: ImageSink = {
            open: () => ({
              write: (bytes) => {
                clock.now += bytes.length / 1024 / KIB_PER_MS;
                bytesInTurn.set(turns.turn, (bytesInTurn.get(turns.turn) ?? 0) + bytes.length);
                written.push(Buffer.from(bytes));
              },
              close: async () => undefined,
              abort: async () => undefined,
            }),
          };
          await decodeGenerationStream(body, sink, { turn: perStream[s] });
          assert.ok(Buffer.concat(written).equals(image), `stream ${s}: the image is byte-exact`);
        }),
      );
    } finally {
      turns.stop();
    }
    return Math.max(...bytesInTurn.values());
  }

  it('answers decoded at once share the turn: the budget, plus one step of each stream that waited', async function () {
    const shared = await mostBytesInOneTurn((clock) => {
      const budget = new TurnBudget(6, () => clock.now);
      return Array.from({ length: STREAMS }, () => budget);
    });
    // A 6 ms budget and 4 ms chunks: two chunks spend a turn. A stream that waited for the turn takes
    // one step when it resumes (so that none starves), hence at most 2 + STREAMS chunks in a turn.
    const most = shared / SLICE_BYTES;
    assert.ok(most <= 2 + STREAMS, `at most ${2 + STREAMS} chunks decoded in one turn, saw ${most.toFixed(2)}`);
    // The control: a budget per stream lets every stream spend its own 6 ms in the same turn.
    const separateBytes = await mostBytesInOneTurn((clock) => Array.from({ length: STREAMS }, () => new TurnBudget(6, () => clock.now)));
    const separate = separateBytes / SLICE_BYTES;
    assert.ok(separate >= 2 * STREAMS, `budgets per stream: ${separate.toFixed(2)} chunks in one turn (shared: ${most.toFixed(2)})`);
  });
});
