// The studio's blank-form rule (src/studio/model/view.ts): no errors before the person has touched the
// form, a neutral hint instead; a field's errors once it was edited; all once Generate was pressed.
// The page keeps the interaction in its webview state, so the same holds after a reload (the
// saved record is checked by parseFormInteraction like any message).
import * as assert from 'node:assert/strict';
import type { AccountSnapshot } from '../../src/account/accountModel';
import { parseImageModels } from '../../src/core/gateway/catalog';
import { type FormInteraction, type FormValues } from '../../src/studio/protocol/protocol';
import { parseFormInteraction, parseFromWebviewMessage } from '../../src/studio/protocol/protocolValidation';
import { evaluateForm, visibleIssues } from '../../src/studio/model/view';
import { CATALOG } from '../../tools/emulator/catalog';

const models = parseImageModels(CATALOG);
const account = { status: 'ready', balance: 5000 } as AccountSnapshot;
const blank: FormValues = { model: '', prompt: '', n: 1, params: {}, references: [] };
const untouched: FormInteraction = { edited: [], submitted: false };
const evaluate = (form: FormValues, interaction: FormInteraction) => evaluateForm(form, models, account, 'en', 1, interaction);

describe('studio: errors on a blank form', () => {
  it('a blank, untouched form shows no errors and the neutral hint; Generate would reveal them', () => {
    const result = evaluate(blank, untouched);
    assert.deepEqual(result.issues, []);
    assert.equal(result.hint, 'Choose a model and write a prompt');
    assert.ok(result.hiddenIssues >= 2, `hidden: ${result.hiddenIssues}`);
  });

  it('editing the prompt shows the prompt’s error only while the model is untouched', () => {
    const result = evaluate({ ...blank, prompt: '   ' }, { edited: ['prompt'], submitted: false });
    assert.deepEqual(
      result.issues.map((i) => i.field),
      ['prompt'],
    );
    assert.equal(result.hint, undefined, 'no hint next to a shown error');
    assert.ok(result.hiddenIssues >= 1);
  });

  it('choosing a model and writing a prompt leaves nothing to show or hide', () => {
    const result = evaluate({ ...blank, model: 'aurora-1', prompt: 'A lighthouse' }, { edited: ['model', 'prompt'], submitted: false });
    assert.deepEqual(result.issues, []);
    assert.equal(result.hiddenIssues, 0);
    assert.equal(result.hint, undefined);
    assert.ok(result.estimate);
  });

  it('pressing Generate shows every error, including untouched fields', () => {
    const result = evaluate(blank, { edited: [], submitted: true });
    assert.deepEqual(result.issues.map((i) => i.field).sort(), ['model', 'prompt']);
    assert.equal(result.hiddenIssues, 0);
    assert.equal(result.hint, undefined);
  });

  it('a bad value typed into an option field shows at once (it was edited)', () => {
    const form = { ...blank, model: 'aurora-1', prompt: 'x', seed: 'abc' };
    assert.deepEqual(
      evaluate(form, { edited: ['seed'], submitted: false }).issues.map((i) => i.field),
      ['seed'],
    );
    // …but not when it came from somewhere else (a restored or regenerated form) and nobody touched it.
    assert.deepEqual(evaluate(form, untouched).issues, []);
  });

  it('issues of no single field (provider parameters) show once anything was edited', () => {
    const issue = { field: 'style_weirdness', message: 'not accepted' };
    assert.deepEqual(visibleIssues([issue], untouched).issues, []);
    assert.deepEqual(visibleIssues([issue], { edited: ['params'], submitted: false }).issues, [issue]);
    assert.deepEqual(visibleIssues([{ field: 'input_references', message: 'too many' }], { edited: ['references'], submitted: false }).issues.length, 1);
  });

  it('without an interaction record (older pages, the host itself) every issue shows', () => {
    const result = evaluateForm(blank, models, account, 'en', 1);
    assert.equal(result.issues.length, 2);
  });

  it('the interaction survives a reload only when well formed', () => {
    assert.deepEqual(parseFormInteraction({ edited: ['prompt', 'prompt', 'model'], submitted: false }), { edited: ['prompt', 'model'], submitted: false });
    for (const bad of [null, {}, { edited: ['script'], submitted: false }, { edited: [], submitted: 'yes' }, { edited: [], submitted: true, extra: 1 }]) {
      assert.equal(parseFormInteraction(bad), undefined, JSON.stringify(bad));
    }
    const message = parseFromWebviewMessage({ type: 'evaluate', requestId: 2, form: blank, interaction: { edited: ['model'], submitted: true } });
    assert.deepEqual(message, { type: 'evaluate', requestId: 2, form: blank, interaction: { edited: ['model'], submitted: true } });
    assert.equal(parseFromWebviewMessage({ type: 'evaluate', requestId: 2, form: blank, interaction: { edited: 'model' } }), undefined);
  });
});
