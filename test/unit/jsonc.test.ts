// Hand-written JSON read with jsonc-parser: VS Code's settings files (comments and trailing commas,
// the part before an error kept as VS Code keeps it), plain JSON with problems that name line,
// column and what is wrong in both languages, and a setting found written dotted or nested.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { parseJson, parseJsonc, setsSetting } from '../../src/core/common/jsonc';

const russian = () => JSON.parse(readFileSync(path.resolve(__dirname, '../../../l10n/bundle.l10n.ru.json'), 'utf8')) as Record<string, string>;

describe('hand-written JSON (jsonc-parser)', () => {
  it('reads comments and trailing commas in a settings file, and leaves strings alone', () => {
    const text = `{
      // a line comment with "quotes", and a comma,
      "a": "http://x/*not a comment*/ // nor this",
      /* a block
         comment */ "b": [1, 2, ],
      "c": "a \\"quoted\\" comma, }",
    }`;
    assert.deepEqual(parseJsonc(text), { value: { a: 'http://x/*not a comment*/ // nor this', b: [1, 2], c: 'a "quoted" comma, }' }, problems: [] });
  });

  it('keeps the settings written before an error, as VS Code applies them, and says where the error is', () => {
    const read = parseJsonc('{\n  "gatewayImages.baseUrl": "http://x",\n  "other": ,\n  "later": 1\n}');
    assert.equal((read.value as Record<string, unknown>)['gatewayImages.baseUrl'], 'http://x');
    assert.equal(read.problems[0]!.line, 3);
    assert.equal(read.problems[0]!.column, 12);
    assert.equal(read.problems[0]!.message, 'line 3, column 12: a value expected (or a comma too many)');
    assert.deepEqual(parseJsonc('{}'), { value: {}, problems: [] });
  });

  it('reads plain JSON, a byte order mark skipped', () => {
    assert.deepEqual(parseJson('\uFEFF{"styles": {"a": {"n": 2}}}\n'), { value: { styles: { a: { n: 2 } } } });
  });

  it('refuses what JSON does not allow, naming the line, the column and what is wrong', () => {
    const cases: [string, string][] = [
      ['{\n  "a": 1,\n}', 'line 3, column 1: a property name in double quotes expected (or a comma too many)'],
      ['{\n  "a": [1, 2,]\n}', 'line 2, column 14: a value expected (or a comma too many)'],
      ['{\r\n  "a": 1\r\n  "b": 2\r\n}', 'line 3, column 3: a comma expected'],
      ['{"a": 1', 'line 1, column 8: a closing brace } expected'],
      ['{"a": [1', 'line 1, column 9: a closing bracket ] expected'],
      ['// note\n{"a": 1}', 'line 1, column 1: a comment, which JSON does not allow'],
      ["{'a': 1}", 'line 1, column 2: unexpected character (text outside quotes, or single quotes)'],
      ['{"a" 1}', 'line 1, column 6: a colon expected after the property name'],
      ['{"a": 1} {"b": 2}', 'line 1, column 10: text after the end of the value'],
      ['{"a": "never closed}', 'line 1, column 7: a text that is never closed with a double quote'],
      ['{"a": "\\q"}', 'line 1, column 7: a backslash before a character that cannot be escaped'],
      ['{"a": "\\u12"}', 'line 1, column 7: a \\u escape without four hexadecimal digits'],
      ['{"a": "tab\there"}', 'line 1, column 7: a line break or control character inside a text (write \\n or \\t)'],
      ['{"a": 1e}', 'line 1, column 7: a number that ends too early'],
      ['', 'line 1, column 1: a value expected (or a comma too many)'],
    ];
    for (const [text, message] of cases) {
      const read = parseJson(text);
      assert.ok('problem' in read, `refused: ${JSON.stringify(text)}`);
      assert.equal(read.problem.message, message, JSON.stringify(text));
      assert.throws(() => JSON.parse(text), SyntaxError, `JSON.parse refuses it too: ${JSON.stringify(text)}`);
    }
  });

  it('says it in Russian when that is the display language', () => {
    l10n.config({ contents: russian() });
    try {
      const read = parseJson('{\n  "a": 1,\n}');
      assert.ok('problem' in read);
      assert.equal(read.problem.message, 'строка 3, столбец 1: ожидалось имя свойства в двойных кавычках (или лишняя запятая)');
    } finally {
      l10n.config({ contents: {} });
    }
  });

  it('finds a setting dotted or nested at any dot', () => {
    const name = 'gatewayImages.mcp.maxCostPerCall';
    assert.equal(setsSetting({ 'gatewayImages.mcp.maxCostPerCall': 1 }, name), true);
    assert.equal(setsSetting({ gatewayImages: { mcp: { maxCostPerCall: 1 } } }, name), true);
    assert.equal(setsSetting({ gatewayImages: { 'mcp.maxCostPerCall': 1 } }, name), true);
    assert.equal(setsSetting({ 'gatewayImages.mcp': { maxCostPerCall: 0 } }, name), true);
    assert.equal(setsSetting({ 'gatewayImages.mcp.maxCostPerSession': 1 }, name), false);
    assert.equal(setsSetting({ gatewayImages: { mcp: 1 } }, name), false);
    assert.equal(setsSetting({ 'gatewayImages.confirmCostAbove': 0 }, 'gatewayImages.confirmCostAbove'), true);
    assert.equal(setsSetting(undefined, name), false);
    assert.equal(setsSetting([1], name), false);
  });
});
