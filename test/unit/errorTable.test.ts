// Every row of the spec's Errors table, through the client (client-side validation bypassed) against
// the emulator: the typed error class, the parameter named, and nothing charged. What is checked is
// the client; the emulator's own choices (its id format, its opening balance) are read, not assumed.
import * as assert from 'node:assert/strict';
import {
  type ApiError,
  AuthenticationError,
  EditNotSupportedError,
  InsufficientFundsError,
  InvalidParametersError,
  UnknownModelError,
} from '../../src/core/gateway/errors';
import type { GenerationRequest } from '../../src/core/gateway/types';
import { caught, DEMO_KEYS, gatewaySuite, MemorySink, paidRequests, SMALL, writePng } from './support/gateway';

const dataUrl = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const ref = { type: 'image_url' as const, image_url: { url: dataUrl } };

describe('spec Errors table through the client', function () {
  const gw = gatewaySuite();
  let balanceBefore: number;
  beforeEach(() => {
    balanceBefore = gw.emu.state.balanceRub;
  });
  afterEach(function () {
    // No error row may leave a charge behind.
    if (this.currentTest?.title.startsWith('accepts')) return;
    assert.equal(gw.emu.state.totalCharges, 0, 'nothing charged');
    assert.equal(gw.emu.state.balanceRub, balanceBefore, 'balance unchanged');
  });

  const generate = (request: Record<string, unknown>) => gw.client.generate(request as unknown as GenerationRequest, new MemorySink());

  const rejectsWith = async (request: Record<string, unknown>, cls: new (...args: never[]) => ApiError, param?: string) => {
    const error = await caught<ApiError>(() => generate(request));
    assert.ok(error instanceof cls, `${JSON.stringify(request)} -> ${error?.constructor?.name}: ${error?.message}`);
    if (param !== undefined) assert.equal(error.param, param, error.message);
    assert.equal(error.outcomeUnknown, false, 'an error answer proves nothing was charged');
    assert.match(error.message, /[.!?…]$/);
    // The id the gateway sent in x-request-id, whatever its form, is kept on the error.
    assert.equal(error.requestId, gw.emu.state.requests.at(-1)?.id, 'the request id header is kept');
    return error;
  };

  const base = { model: 'aurora-1', prompt: 'a lighthouse', size: SMALL };

  describe('400 for capability fields not in the model lists', () => {
    it('resolution', () => rejectsWith({ ...base, size: undefined, resolution: '4K' }, InvalidParametersError, 'resolution'));
    it('aspect_ratio', () => rejectsWith({ ...base, size: undefined, aspect_ratio: '21:9' }, InvalidParametersError, 'aspect_ratio'));
    it('background', () => rejectsWith({ ...base, background: 'transparent' }, InvalidParametersError, 'background'));
    it('status is 400', async () => {
      const error = await rejectsWith({ ...base, size: undefined, resolution: '8K' }, InvalidParametersError);
      assert.equal(error.status, 400);
    });
  });

  describe('input_references not acceptable for the model', () => {
    it('on a model without editing: EditNotSupportedError', async () => {
      const error = await rejectsWith({ ...base, model: 'sketch-mini', input_references: [ref] }, EditNotSupportedError, 'input_references');
      assert.equal(error.kind, 'edit-not-supported');
    });
    it('more references than max_input_references: InvalidParametersError, not EditNotSupported', async () => {
      const error = await rejectsWith({ ...base, input_references: [ref, ref] }, InvalidParametersError, 'input_references');
      assert.ok(!(error instanceof EditNotSupportedError));
    });
    it('multipart edit on a model without editing: EditNotSupportedError', async () => {
      const file = await writePng(gw.dir, 'ref.png');
      const error = await caught(() =>
        gw.client.edit({ model: 'sketch-mini', prompt: 'x', size: SMALL }, [{ path: file, mediaType: 'image/png', size: 70 }], new MemorySink()),
      );
      assert.ok(error instanceof EditNotSupportedError, String(error));
    });
  });

  describe('format of universal fields', () => {
    it('size with a Cyrillic х', () => rejectsWith({ ...base, size: '1024х1024' }, InvalidParametersError, 'size'));
    it('size as a word', () => rejectsWith({ ...base, size: 'large' }, InvalidParametersError, 'size'));
    it('size with a lowercase tier', () => rejectsWith({ ...base, size: '2k' }, InvalidParametersError, 'size'));
    it('size as pixels with resolution', () => rejectsWith({ ...base, resolution: '1K' }, InvalidParametersError, 'size'));
    it('quality', () => rejectsWith({ ...base, quality: 'ultra' }, InvalidParametersError, 'quality'));
    it('output_format', () => rejectsWith({ ...base, output_format: 'gif' }, InvalidParametersError, 'output_format'));
    it('seed not a number', () => rejectsWith({ ...base, seed: 'forty-two' }, InvalidParametersError, 'seed'));
    it('seed not an integer', () => rejectsWith({ ...base, seed: 1.5 }, InvalidParametersError, 'seed'));
    it('output_compression out of range', () => rejectsWith({ ...base, output_compression: 101 }, InvalidParametersError, 'output_compression'));
    it('n above max_n', () => rejectsWith({ ...base, n: 5 }, InvalidParametersError, 'n'));
    it('a provider parameter the model does not allow', () => rejectsWith({ ...base, moderation: 'low' }, InvalidParametersError, 'moderation'));
    it('an allowed provider parameter with a bad value', () =>
      rejectsWith({ ...base, model: 'prism-2', moderation: 'high' }, InvalidParametersError, 'moderation'));
  });

  describe('valid in format but meaningless for the model: no error', () => {
    const ok = async (request: Record<string, unknown>) => {
      const meta = await generate(request);
      assert.equal(meta.images.length, 1);
      assert.equal(paidRequests(gw.emu).at(-1)!.status, 200);
    };
    it('accepts quality on a model with empty supported_quality', () => ok({ ...base, model: 'lumen-xl', quality: 'high' }));
    it('accepts output_format on a model with empty supported_output_formats', () => ok({ ...base, model: 'lumen-xl', output_format: 'webp' }));
    it('accepts output_format svg on a png-only model', () => ok({ ...base, model: 'sketch-mini', output_format: 'svg' }));
    it('accepts seed on a model with supports_seed false', () => ok({ ...base, model: 'prism-2', seed: 5 }));
    it('accepts a size tier the model does not list', () => ok({ ...base, model: 'sketch-mini', size: 'auto' }));
    it('accepts quality auto and output_compression 0', () => ok({ ...base, quality: 'auto', output_compression: 0 }));
  });

  describe('unknown model and editing on a non-editing model', () => {
    it('a provider-prefixed id is an unknown model', async () => {
      const error = await rejectsWith({ ...base, model: 'northlight/aurora-1' }, UnknownModelError);
      assert.equal(error.kind, 'unknown-model');
    });
    it('an id not in the catalog is an unknown model', () => rejectsWith({ ...base, model: 'aurora-9' }, UnknownModelError));
    it('an edit-only model without references is an invalid request, not an unknown model', async () => {
      const error = await rejectsWith({ ...base, model: 'retouch-pro' }, InvalidParametersError, 'model');
      assert.ok(!(error instanceof UnknownModelError));
    });
  });

  describe('authentication', () => {
    const authError = async (key: string | null, reason: string) => {
      const c = gw.newClient(key);
      for (const call of [() => c.balance(), () => c.generate({ ...base }, new MemorySink())]) {
        const error = await caught(call);
        assert.ok(error instanceof AuthenticationError, String(error));
        assert.equal(error.reason, reason, error.message);
        assert.equal(error.status, 401);
      }
    };
    it('expired key', () => authError(DEMO_KEYS.expired, 'expired'));
    it('revoked key', () => authError(DEMO_KEYS.revoked, 'revoked'));
    it('invalid key', () => authError('gw-not-a-key', 'invalid'));
    it('missing key', () => authError(null, 'missing'));
  });

  describe('insufficient funds', () => {
    it('balance below the reservation: 402, scope balance, no reservation', async () => {
      gw.emu.state.setBalance(3);
      balanceBefore = 3;
      const error = await rejectsWith({ ...base }, InsufficientFundsError);
      assert.equal((error as InsufficientFundsError).scope, 'balance');
      assert.equal(error.status, 402);
      assert.equal(gw.emu.state.totalReservations, 0);
    });
    it('key budget below the reservation: 402, scope budget', async () => {
      const c = gw.newClient(DEMO_KEYS.lowBudget);
      const budgetBefore = gw.emu.state.keyBudgetRub(DEMO_KEYS.lowBudget);
      const error = await caught(() => c.generate({ ...base, model: 'lumen-xl' }, new MemorySink()));
      assert.ok(error instanceof InsufficientFundsError, String(error));
      assert.equal(error.scope, 'budget');
      assert.equal(gw.emu.state.keyBudgetRub(DEMO_KEYS.lowBudget), budgetBefore);
      assert.equal(gw.emu.state.totalReservations, 0);
    });
  });
});
