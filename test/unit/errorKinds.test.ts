// Error kinds end to end: one kind per cause, whether the refusal is local (validation.ts) or the
// gateway's (errorParsing.ts), and docs/commands.md lists exactly the kinds errors.ts has.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { EditNotSupportedError, UnknownModelError, ValidationError } from '../../src/core/gateway/errors';
import { validateRequest } from '../../src/core/requests/validation';
import { caught, gatewaySuite, MemorySink, paidRequests, SMALL } from './support/gateway';

const ROOT = path.resolve(__dirname, '../../..');

describe('error kinds', () => {
  const gw = gatewaySuite({ dir: false, models: true });

  it('docs/commands.md lists exactly the kinds of errors.ts', () => {
    const source = readFileSync(path.join(ROOT, 'src/core/gateway/errors.ts'), 'utf8');
    const union = /export type GatewayErrorKind =([^;]+);/.exec(source)?.[1] ?? '';
    const kinds = [...union.matchAll(/'([a-z-]+)'/g)].map((m) => m[1]).sort();
    assert.ok(kinds.length > 10, `the union was read: ${kinds.join(', ')}`);
    const commands = readFileSync(path.join(ROOT, 'docs/commands.md'), 'utf8');
    const list = /Errors reject with the typed error \(`kind` is one of ([^;]+);/.exec(commands)?.[1] ?? '';
    const listed = [...list.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]).sort();
    assert.deepEqual(listed, kinds);
  });

  it('an unknown model: "unknown-model" refused locally and by the gateway', async () => {
    const local = await caught(async () => validateRequest({ model: 'aurora-9', prompt: 'p', size: SMALL }, { models: gw.models }));
    assert.ok(local instanceof ValidationError);
    assert.equal(local.kind, 'unknown-model');
    assert.equal(local.field, 'model');
    const remote = await caught(() => gw.client.generate({ model: 'aurora-9', prompt: 'p', size: SMALL }, new MemorySink()));
    assert.ok(remote instanceof UnknownModelError, String(remote));
    assert.equal(remote.kind, local.kind);
    assert.equal(paidRequests(gw.emu)[0]!.reservedRub, 0, 'the gateway reserved nothing either');
  });

  it('editing on a model that does not edit: "edit-not-supported" refused locally and by the gateway', async () => {
    const references = [{ type: 'image_url' as const, image_url: { url: 'https://example.com/a.png' } }];
    const request = { model: 'sketch-mini', prompt: 'p', size: SMALL, input_references: references };
    const local = await caught(async () => validateRequest(request, { models: gw.models }));
    assert.ok(local instanceof ValidationError);
    assert.equal(local.kind, 'edit-not-supported');
    const remote = await caught(() => gw.client.generate(request, new MemorySink()));
    assert.ok(remote instanceof EditNotSupportedError, String(remote));
    assert.equal(remote.kind, local.kind);
  });
});
