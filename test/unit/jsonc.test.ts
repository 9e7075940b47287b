// Reading VS Code's settings files (JSON with comments and trailing commas), and finding a setting
// in them written dotted or nested, for the log line that says a workspace value is ignored.
import * as assert from 'node:assert/strict';
import { parseJsonc, setsSetting } from '../../src/core/jsonc';

describe('settings files (JSONC)', () => {
  it('reads comments and trailing commas, and leaves strings alone', () => {
    const text = `{
      // a line comment with "quotes", and a comma,
      "a": "http://x/*not a comment*/ // nor this",
      /* a block
         comment */ "b": [1, 2, ],
      "c": "a \\"quoted\\" comma, }",
    }`;
    assert.deepEqual(parseJsonc(text), { a: 'http://x/*not a comment*/ // nor this', b: [1, 2], c: 'a "quoted" comma, }' });
  });

  it('gives undefined for text that is not JSON, and reads an empty object', () => {
    assert.equal(parseJsonc('{ "a": }'), undefined);
    assert.equal(parseJsonc('{ "a": 1'), undefined);
    assert.equal(parseJsonc(''), undefined);
    assert.deepEqual(parseJsonc('{}'), {});
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
