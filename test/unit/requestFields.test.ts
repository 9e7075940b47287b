// One list of the request's option fields (core/requests/requestFields.ts), used by styles (what a
// style may set under "options") and by validation (what no provider parameter may be named).
import * as assert from 'node:assert/strict';
import { parseBatchFile } from '../../src/core/requests/batchFile';
import { STYLE_NUMBER_OPTIONS, STYLE_OPTION_FIELDS, STYLE_TEXT_OPTIONS } from '../../src/core/requests/styleFile';
import { collectIssues } from '../../src/core/requests/validation';
import { testModel } from './support/models';

/** The issues of a valid request whose params name `name`, for a model that would accept it as its own. */
function paramIssues(name: string) {
  const model = testModel({ id: 'm', allowed_passthrough_parameters: [name] });
  return collectIssues({ model: 'm', prompt: 'a lighthouse', params: { [name]: 1 } }, { models: [model] }).filter((i) => i.field === name);
}

describe('request fields shared by styles and validation', () => {
  it('a style may set the same options as before, in the same order', () => {
    assert.deepEqual(
      [...STYLE_OPTION_FIELDS],
      ['n', 'resolution', 'aspect_ratio', 'size', 'quality', 'output_format', 'background', 'seed', 'output_compression', 'params'],
    );
    assert.deepEqual([...STYLE_TEXT_OPTIONS], ['resolution', 'aspect_ratio', 'size', 'quality', 'output_format', 'background']);
    assert.deepEqual([...STYLE_NUMBER_OPTIONS], ['n', 'seed', 'output_compression']);
  });

  it('every option a style may set is a standard parameter that params may not carry', () => {
    for (const field of STYLE_OPTION_FIELDS.filter((f) => f !== 'params')) {
      const issues = paramIssues(field);
      assert.equal(issues.length, 1, field);
      assert.match(issues[0]!.message, /standard parameter/, field);
    }
  });

  it("the request's own fields are standard too: model, prompt, references and image uploads", () => {
    for (const field of ['model', 'prompt', 'input_references', 'image', 'image[]']) {
      assert.match(paramIssues(field)[0]?.message ?? '', /standard parameter/, field);
    }
  });

  it('a provider parameter outside the list passes when the model allows it', () => {
    for (const field of ['style', 'steps', 'params', 'moderation']) assert.deepEqual(paramIssues(field), [], field);
  });

  it('a prompt file line checks the same options: text ones as text, number ones as whole numbers', () => {
    const wrong: Record<string, unknown> = {};
    for (const f of STYLE_TEXT_OPTIONS) wrong[f] = 7;
    for (const f of STYLE_NUMBER_OPTIONS) wrong[f] = 'seven';
    const { issues } = parseBatchFile(JSON.stringify({ prompt: 'a lighthouse', ...wrong }), 'jsonl');
    assert.deepEqual(
      issues.map((i) => [i.field, i.message]),
      [...STYLE_TEXT_OPTIONS.map((f) => [f, `"${f}" must be a text`]), ...STYLE_NUMBER_OPTIONS.map((f) => [f, `"${f}" must be a whole number`])],
    );
  });
});
