import * as assert from 'node:assert/strict';
import { transparencyIssue, withAlphaFormat } from '../../src/core/requests/transparency';
import { collectIssues } from '../../src/core/requests/validation';
import type { GenerationRequest } from '../../src/core/gateway/types';
import { testModel } from './support/models';

describe('transparency', () => {
  it('chooses png, else webp, when the model lists formats', () => {
    const request: GenerationRequest = { model: 'm', prompt: 'p', background: 'transparent' };
    assert.equal(withAlphaFormat(request, { supported_output_formats: ['jpeg', 'webp', 'png'] }).output_format, 'png');
    assert.equal(withAlphaFormat(request, { supported_output_formats: ['jpeg', 'webp'] }).output_format, 'webp');
    assert.equal(withAlphaFormat(request, { supported_output_formats: ['jpeg'] }).output_format, undefined);
    assert.equal(withAlphaFormat(request, { supported_output_formats: [] }).output_format, undefined);
  });

  it('leaves other requests and explicit formats alone', () => {
    const opaque = { model: 'm', prompt: 'p', background: 'opaque' };
    assert.equal(withAlphaFormat(opaque, { supported_output_formats: ['png'] }), opaque);
    const explicit = { model: 'm', prompt: 'p', background: 'transparent', output_format: 'webp' };
    assert.equal(withAlphaFormat(explicit, { supported_output_formats: ['png', 'webp'] }).output_format, 'webp');
  });

  it('refuses transparent + jpeg, naming output_format and the formats that work', () => {
    const issue = transparencyIssue({ background: 'transparent', output_format: 'jpeg' });
    assert.equal(issue?.field, 'output_format');
    assert.deepEqual(issue?.allowed, ['png', 'webp']);
    assert.match(issue.message, /JPEG has no alpha/);
    assert.equal(transparencyIssue({ background: 'transparent', output_format: 'png' }), undefined);
    assert.equal(transparencyIssue({ background: 'opaque', output_format: 'jpeg' }), undefined);
  });

  it('is part of request validation', () => {
    const model = testModel({ id: 'clear', supported_background: ['auto', 'transparent'], supported_output_formats: ['png', 'jpeg'] });
    const issues = collectIssues({ model: 'clear', prompt: 'a logo', background: 'transparent', output_format: 'jpeg' }, { models: [model] });
    assert.deepEqual(
      issues.map((i) => i.field),
      ['output_format'],
    );
  });
});
