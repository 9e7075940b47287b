// src/studio/model/view.ts at the trust boundary: what the (untrusted) page sends as a form becomes a
// request (toRequest) and an evaluation (evaluateForm: issues and the estimate against the funds).
// Models are written here, not taken from the emulator's catalog.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import type { AccountSnapshot } from '../../src/account/accountModel';
import { formatRubles } from '../../src/core/money/cost';
import type { ImageModel } from '../../src/core/gateway/types';
import type { FormValues } from '../../src/studio/protocol/protocol';
import { foldersOutside } from '../../src/studio/model/shownFolders';
import { evaluateForm, toFormValues, toRequest } from '../../src/studio/model/view';

const model: ImageModel = {
  id: 'test-model',
  min_price_per_image: 2,
  max_price_per_image: 3.5,
  supported_resolutions: ['1K', '2K'],
  supported_aspect_ratios: ['1:1', '16:9'],
  supported_quality: [],
  supported_output_formats: [],
  supported_background: ['auto', 'opaque'],
  supports_seed: true,
  max_n: 4,
  max_input_references: 2,
  supports_generation: true,
  supports_edit: true,
  allowed_passthrough_parameters: ['style', 'steps', 'raw'],
};
const models = [model];
const form = (over: Partial<FormValues> = {}): FormValues => ({ model: 'test-model', prompt: 'A kite', n: 1, params: {}, references: [], ...over });
const ready = (over: Partial<AccountSnapshot> = {}): AccountSnapshot => ({ status: 'ready', balance: 100, updatedAt: Date.now(), ...over });

describe('studio view: toRequest (the page’s form as a request)', () => {
  it('trims model and prompt, keeps n, and leaves out empty optional fields', () => {
    const request = toRequest(form({ model: '  test-model ', prompt: '\n A kite \t', n: 3, resolution: '   ', aspect_ratio: '', quality: undefined }));
    assert.deepEqual(request, { model: 'test-model', prompt: 'A kite', n: 3 });
  });

  it('passes the optional text fields on, trimmed', () => {
    const request = toRequest(
      form({ resolution: ' 2K ', aspect_ratio: '16:9', background: 'opaque', quality: 'high', output_format: 'webp', size: '1024x1024' }),
    );
    assert.deepEqual(request, {
      model: 'test-model',
      prompt: 'A kite',
      n: 1,
      resolution: '2K',
      aspect_ratio: '16:9',
      background: 'opaque',
      quality: 'high',
      output_format: 'webp',
      size: '1024x1024',
    });
  });

  it('whole numbers for seed and compression become numbers; anything else stays text so validation names it', () => {
    assert.deepEqual(toRequest(form({ seed: ' 42 ', output_compression: '-5' })), {
      model: 'test-model',
      prompt: 'A kite',
      n: 1,
      seed: 42,
      output_compression: -5,
    });
    const typo = toRequest(form({ seed: '4.2', output_compression: '80%' }));
    assert.equal(typo.seed, '4.2' as unknown as number);
    assert.equal(typo.output_compression, '80%' as unknown as number);
    assert.equal(toRequest(form({ seed: '  ' })).seed, undefined);
  });

  it('provider parameters: empty ones dropped, true/false and numbers typed as such, other text kept', () => {
    const request = toRequest(form({ params: { style: ' vivid ', steps: '30', raw: 'true', scale: '-1.5', empty: '  ', code: '0x10', big: '1e999' } }));
    assert.deepEqual(request.params, { style: 'vivid', steps: 30, raw: true, scale: -1.5, code: '0x10', big: '1e999' });
    assert.equal(toRequest(form({ params: { style: '' } })).params, undefined, 'no params object when all are empty');
  });

  it('never carries references or unknown keys of the form into the request', () => {
    const hostile = { ...form({ references: ['/etc/passwd'] }), input_references: [{ type: 'image_url' }], extra: 'x' } as unknown as FormValues;
    const request = toRequest(hostile) as Record<string, unknown>;
    assert.equal(request.input_references, undefined);
    assert.equal(request.extra, undefined);
    assert.equal(request.references, undefined);
  });

  it('toFormValues and toRequest round-trip a past request; a bad n becomes 1', () => {
    const past = {
      model: 'test-model',
      prompt: 'A kite',
      n: 2,
      resolution: '2K',
      seed: 7,
      output_compression: 50,
      params: { steps: 30, raw: false, style: 'vivid' },
    };
    assert.deepEqual(toRequest(toFormValues(past, [])), past);
    assert.equal(toFormValues({ ...past, n: 0 }, []).n, 1);
    assert.equal(toFormValues({ ...past, n: 11 }, []).n, 1);
    assert.equal(toFormValues({ ...past, n: 1.5 }, []).n, 1);
    assert.deepEqual(toFormValues(past, ['/w/a.png']).references, ['/w/a.png']);
  });
});

describe('studio view: evaluateForm (issues and the estimate)', () => {
  const evaluate = (f: FormValues, account: AccountSnapshot = ready()) => evaluateForm(f, models, account, 'en', 7);

  it('answers with the request id; no estimate for a model not in the catalog', () => {
    const result = evaluate(form({ model: 'no-such-model' }));
    assert.equal(result.type, 'evaluation');
    assert.equal(result.requestId, 7);
    assert.equal(result.estimate, undefined);
    assert.ok(
      result.issues.some((i) => i.field === 'model'),
      JSON.stringify(result.issues),
    );
  });

  it('the estimate: reservation max × n, expected min..max × n, funds after the reservation', () => {
    const result = evaluate(form({ n: 2 }), ready({ balance: 100, budget: 20 }));
    assert.deepEqual(result.issues, []);
    assert.equal(result.estimate?.reservationText, formatRubles(7, 'en'));
    assert.match(result.estimate.expectedText, /4\.00/);
    assert.match(result.estimate.expectedText, /7\.00/);
    assert.equal(result.estimate?.balanceAfterText, formatRubles(93, 'en'));
    assert.equal(result.estimate?.budgetAfterText, formatRubles(13, 'en'));
    assert.equal(result.estimate?.cannotAfford, undefined);
  });

  it('refuses on current figures: the balance before the budget', () => {
    assert.equal(evaluate(form({ n: 2 }), ready({ balance: 6.99 })).estimate?.cannotAfford, 'balance');
    assert.equal(evaluate(form({ n: 2 }), ready({ balance: 7 })).estimate?.cannotAfford, undefined, 'exactly enough');
    assert.equal(evaluate(form({ n: 2 }), ready({ balance: 1, budget: 1 })).estimate?.cannotAfford, 'balance');
  });

  it('does not refuse on figures that are stale, still loading, or of a key being switched', () => {
    const poor = { balance: 1 };
    assert.equal(evaluate(form(), ready({ ...poor, updatedAt: Date.now() - 24 * 3600_000 })).estimate?.cannotAfford, undefined, 'stale');
    assert.equal(evaluate(form(), ready({ ...poor, updatedAt: undefined })).estimate?.cannotAfford, undefined, 'never read');
    assert.equal(evaluate(form(), ready({ ...poor, switching: true })).estimate?.cannotAfford, undefined, 'switching');
    assert.equal(evaluate(form(), { status: 'loading', ...poor }).estimate?.cannotAfford, undefined, 'loading');
    assert.ok(evaluate(form(), { status: 'loading' }).estimate, 'the estimate is shown all the same');
  });

  it('a budget short of the reservation refuses only after the gateway itself refused for the budget', () => {
    const short = ready({ balance: 100, budget: 1 });
    assert.equal(evaluate(form(), short).estimate?.cannotAfford, undefined, 'it may have been reset: the gateway decides');
    assert.equal(evaluate(form(), { ...short, budgetRefusal: { budget: 1, at: Date.now() } }).estimate?.cannotAfford, 'budget');
    // The budget grew since the refusal (a reset, a top-up): the refusal no longer counts.
    assert.equal(evaluate(form(), { ...short, budget: 2, budgetRefusal: { budget: 1, at: Date.now() } }).estimate?.cannotAfford, undefined);
  });

  it('issues of the form are the validation’s: n above max_n, an unsupported resolution, too many references', () => {
    const result = evaluate(form({ n: 5, resolution: '4K', references: ['/a.png', '/b.png', '/c.png'] }));
    const fields = result.issues.map((i) => i.field);
    assert.ok(fields.includes('n'), fields.join());
    assert.ok(fields.includes('resolution'), fields.join());
    assert.ok(
      fields.some((f) => f.startsWith('input_references') || f === 'images' || f === 'references'),
      fields.join(),
    );
  });
});

describe('studio: folders outside the workspace the webview may load', () => {
  it('the folders of shown files outside every workspace folder, each once; nothing for files inside', () => {
    const ws = path.resolve('/ws');
    const other = path.resolve('/other-ws');
    const files = [
      path.join(ws, 'generated-images', 'a.png'),
      path.join(other, 'b.png'),
      path.resolve('/pictures/out/c.png'),
      path.resolve('/pictures/out/d.png'),
      path.resolve('/storage/recovery/e.img'),
      path.resolve('/ws-sibling/f.png'),
    ];
    assert.deepEqual(
      foldersOutside(files, [ws, other]),
      [path.resolve('/pictures/out'), path.resolve('/storage/recovery'), path.resolve('/ws-sibling')].sort(),
    );
    assert.deepEqual(foldersOutside([], [ws]), []);
  });
});
