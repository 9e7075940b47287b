// The studio form's round-trip with the host (media/studio/formEvaluation.ts), run as the page runs
// it: bundled by esbuild for the browser, with a stand-in for acquireVsCodeApi that records what the
// page posts. An answer counts only when it answers the latest question; a press decided on an
// older answer was lost in e2e runs (the press revealed issues the edit had already removed).
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vm from 'node:vm';
import { buildSync } from 'esbuild';
import type { EvaluationMessage } from '../../src/studio/protocol/protocol';

interface Posted {
  type: string;
  requestId: number;
}

interface EvaluationInstance {
  issues: string[];
  hiddenIssues: number;
  soon(): void;
  accept(message: EvaluationMessage): boolean;
  current(): boolean;
  takeDeferredSubmit(): boolean;
}

const ENTRY = path.join(__dirname, '..', '..', '..', 'media', 'studio', 'formEvaluation.ts');
let bundle: string | undefined;

/** A fresh page: its own request counter, posted messages and estimate element. */
function loadPage(): { evaluation: EvaluationInstance; posted: Posted[]; busy: () => string | undefined } {
  bundle ??= buildSync({ entryPoints: [ENTRY], bundle: true, format: 'cjs', platform: 'browser', write: false, logLevel: 'silent' }).outputFiles[0]?.text;
  if (!bundle) throw new Error(`esbuild wrote no bundle of ${ENTRY}`);
  const posted: Posted[] = [];
  const module = { exports: {} as { FormEvaluation: new (estimate: unknown, question: () => unknown) => EvaluationInstance } };
  const api = { postMessage: (m: Posted) => posted.push(m), getState: () => undefined, setState: () => undefined };
  vm.runInNewContext(bundle, { module, exports: module.exports, acquireVsCodeApi: () => api, setTimeout, clearTimeout });
  const attributes = new Map<string, string>();
  const estimate = { setAttribute: (name: string, value: string) => attributes.set(name, value) };
  const question = () => ({ form: { model: 'aurora-1', prompt: 'p', n: 1, params: {}, references: [] }, interaction: { edited: [], submitted: false } });
  return { evaluation: new module.exports.FormEvaluation(estimate, question), posted, busy: () => attributes.get('aria-busy') };
}

function answer(requestId: number, issues: string[] = [], hiddenIssues = 0): EvaluationMessage {
  return { type: 'evaluation', requestId, issues: issues.map((message) => ({ field: 'prompt', message })), hiddenIssues } as unknown as EvaluationMessage;
}

function idOf(posted: Posted[], index: number): number {
  const message = posted[index];
  if (!message) throw new Error(`No message ${index} was posted: ${JSON.stringify(posted)}`);
  return message.requestId;
}

const pause = () => new Promise((resolve) => setTimeout(resolve, 200));

describe('studio form: evaluation round-trip (the page bundle)', function () {
  this.timeout(30_000);

  it('an answer to the latest question counts, and a press then is decided at once', async () => {
    const { evaluation, posted, busy } = loadPage();
    evaluation.soon();
    await pause();
    assert.equal(posted.length, 1);
    assert.equal(busy(), 'true');
    assert.equal(evaluation.accept(answer(idOf(posted, 0))), true);
    assert.equal(busy(), 'false');
    assert.equal(evaluation.current(), true);
    assert.equal(evaluation.takeDeferredSubmit(), false);
  });

  it('an older answer arriving in the pause before the next question is asked does not count', async () => {
    const { evaluation, posted, busy } = loadPage();
    evaluation.soon();
    await pause();
    const before = idOf(posted, 0);
    evaluation.soon(); // an edit: its question goes out after the pause
    // The answer to the question before the edit: it said the (then empty) prompt had a hidden issue.
    assert.equal(evaluation.accept(answer(before, [], 1)), false);
    assert.equal(busy(), 'true');
    // A press now waits for the answer to the edit instead of revealing stale issues.
    assert.equal(evaluation.current(), false);
    await pause();
    assert.equal(posted.length, 2);
    assert.equal(evaluation.accept(answer(idOf(posted, 1))), true);
    assert.equal(evaluation.takeDeferredSubmit(), true);
    assert.equal(evaluation.current(), true);
    assert.deepEqual(evaluation.issues, []);
    assert.equal(evaluation.hiddenIssues, 0);
  });

  it('an answer to a question superseded after it was asked does not count either', async () => {
    const { evaluation, posted } = loadPage();
    evaluation.soon();
    await pause();
    evaluation.soon();
    await pause();
    assert.equal(posted.length, 2);
    assert.equal(evaluation.accept(answer(idOf(posted, 0), ['old'])), false);
    assert.equal(evaluation.accept(answer(idOf(posted, 1), ['new'])), true);
    assert.deepEqual(evaluation.issues, ['new']);
  });
});
