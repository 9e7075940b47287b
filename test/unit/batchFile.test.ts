import * as assert from 'node:assert/strict';
import { batchFileKind, describeBatchIssues, parseBatchFile, requestKey } from '../../src/core/requests/batchFile';
import { validateBatch } from '../../src/core/requests/batchValidation';
import { testModel } from './support/models';

const models = [testModel({ id: 'aurora-1', max_n: 4, supported_aspect_ratios: ['1:1', '16:9'] }), testModel({ id: 'sketch-mini', max_n: 1 })];

describe('batch file', () => {
  it('knows .txt and .jsonl', () => {
    assert.equal(batchFileKind('/a/prompts.TXT'), 'txt');
    assert.equal(batchFileKind('b.jsonl'), 'jsonl');
    assert.equal(batchFileKind('c.json'), undefined);
  });

  it('reads one prompt per .txt line, skipping # lines and blank lines, with real line numbers', () => {
    const text = '# cats\na red cat\n\n   \n# dogs\r\n  a blue dog  \n';
    const { lines, issues } = parseBatchFile(text, 'txt', { model: 'aurora-1', options: { n: 2 } });
    assert.deepEqual(issues, []);
    assert.deepEqual(
      lines.map((l) => [l.line, l.request]),
      [
        [2, { n: 2, prompt: 'a red cat', model: 'aurora-1' }],
        [6, { n: 2, prompt: 'a blue dog', model: 'aurora-1' }],
      ],
    );
  });

  it('reads .jsonl request objects; line fields win over the defaults', () => {
    const text = ['{"prompt":"one"}', '', '{"prompt":"two","model":"sketch-mini","seed":7,"aspect_ratio":"1:1"}'].join('\n');
    const { lines, issues } = parseBatchFile(text, 'jsonl', { model: 'aurora-1', options: { n: 2 } });
    assert.deepEqual(issues, []);
    assert.deepEqual(lines[0]!.request, { n: 2, prompt: 'one', model: 'aurora-1' });
    assert.deepEqual(lines[1]!.request, { n: 2, prompt: 'two', model: 'sketch-mini', seed: 7, aspect_ratio: '1:1' });
    assert.equal(lines[1]!.line, 3);
  });

  it('reports bad JSON, non-objects, unknown fields and wrong types with line and field', () => {
    const text = [
      '{"prompt":"ok","model":"aurora-1"}',
      '{"prompt": oops}',
      '[1,2]',
      '{"prompt":"x","colour":"red"}',
      '{"prompt":5,"n":"2"}',
      '{"prompt":"p","params":[1]}',
    ].join('\n');
    const { lines, issues } = parseBatchFile(text, 'jsonl');
    assert.equal(lines.length, 1);
    assert.deepEqual(
      issues.map((i) => [i.line, i.field]),
      [
        [2, undefined],
        [3, undefined],
        [4, 'colour'],
        [5, 'prompt'],
        [5, 'n'],
        [6, 'params'],
      ],
    );
    assert.equal(issues[0]!.message, 'not valid JSON (column 12: unexpected character (text outside quotes, or single quotes))');
    assert.match(issues[2]!.message, /unknown field "colour"/);
  });

  it('validates every line against the catalog and names line and field', () => {
    const text = [
      '{"prompt":"fine","model":"aurora-1"}',
      '{"prompt":"too many","model":"sketch-mini","n":3}',
      '{"prompt":"","model":"aurora-1"}',
      '{"prompt":"who","model":"nope"}',
      '{"prompt":"wide","model":"aurora-1","aspect_ratio":"21:9"}',
    ].join('\n');
    const { lines } = parseBatchFile(text, 'jsonl');
    const issues = validateBatch(lines, models);
    assert.deepEqual(
      issues.map((i) => [i.line, i.field]),
      [
        [2, 'n'],
        [3, 'prompt'],
        [4, 'model'],
        [5, 'aspect_ratio'],
      ],
    );
    const message = describeBatchIssues(issues);
    assert.match(message, /^line 2, n: /m);
    assert.match(message, /^line 5, aspect_ratio: .*16:9/m);
  });

  it('a .txt line without a default model is refused on the model field', () => {
    const { lines } = parseBatchFile('a prompt', 'txt');
    assert.deepEqual(
      validateBatch(lines, models).map((i) => [i.line, i.field]),
      [[1, 'model']],
    );
  });

  it('caps a long list of issues', () => {
    const issues = Array.from({ length: 14 }, (_, i) => ({ line: i + 1, field: 'n', message: 'bad' }));
    const text = describeBatchIssues(issues, 10);
    assert.equal(text.split('\n').length, 11);
    assert.match(text, /and 4 more/);
  });

  it('keys a request by its content, not by field order', () => {
    assert.equal(requestKey({ model: 'a', prompt: 'p', n: 2 }), requestKey({ n: 2, prompt: 'p', model: 'a' }));
    assert.notEqual(requestKey({ model: 'a', prompt: 'p', n: 2 }), requestKey({ model: 'a', prompt: 'p', n: 3 }));
  });
});
