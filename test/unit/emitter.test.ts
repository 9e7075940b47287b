// The pure modules' event emitter (history, account model, catalog cache).
import * as assert from 'node:assert/strict';
import { Emitter } from '../../src/core/common/emitter';

describe('Emitter', () => {
  it('calls every listener with the value, in subscription order', () => {
    const emitter = new Emitter<number>();
    const seen: string[] = [];
    emitter.event((v) => seen.push(`a${v}`));
    emitter.event((v) => seen.push(`b${v}`));
    emitter.fire(1);
    assert.deepEqual(seen, ['a1', 'b1']);
  });

  it('a throwing listener does not stop the others', () => {
    const emitter = new Emitter<void>();
    let called = 0;
    emitter.event(() => {
      throw new Error('bad listener');
    });
    emitter.event(() => called++);
    emitter.fire();
    assert.equal(called, 1);
  });

  it('disposing one subscription leaves another of the same function', () => {
    const emitter = new Emitter<void>();
    let called = 0;
    const listener = () => called++;
    const first = emitter.event(listener);
    emitter.event(listener);
    first.dispose();
    emitter.fire();
    assert.equal(called, 1);
  });

  it('a listener added while firing is not called for that value; dispose() removes all', () => {
    const emitter = new Emitter<string>();
    const seen: string[] = [];
    emitter.event((v) => {
      seen.push(`outer ${v}`);
      emitter.event((w) => seen.push(`inner ${w}`));
    });
    emitter.fire('x');
    assert.deepEqual(seen, ['outer x']);
    emitter.dispose();
    emitter.fire('y');
    assert.deepEqual(seen, ['outer x']);
  });
});
