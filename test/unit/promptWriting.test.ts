// The prompt written by the editor's language model, its pure part: the instruction the model gets
// (the selection or the whole document, its kind, the style) and the cleaning of the answer.
import * as assert from 'node:assert/strict';
import { ValidationError } from '../../src/core/gateway/errors';
import { cleanWrittenPrompt, MAX_SOURCE_TEXT, MAX_WRITTEN_PROMPT, promptInstruction, sourceExcerpt, sourceKindOf } from '../../src/core/requests/promptWriting';

describe('Prompt writing (instruction and answer cleaning)', () => {
  it('the instruction carries the selection, the document kind, "no text" and the answer format', () => {
    const text = promptInstruction({ text: '  A cat on a roof.  ', wholeDocument: false, kind: 'markdown' });
    assert.match(text, /selected in a Markdown document/);
    assert.match(text, /no text, letters or captions unless/);
    assert.match(text, /subject, the composition and the visual style/);
    assert.match(text, /Answer with the prompt only/);
    assert.ok(text.endsWith('````markdown\nA cat on a roof.\n````'), text);
    assert.doesNotMatch(text, /project style/);
  });

  it('the whole document of an HTML file, and a style whose words the model must not repeat', () => {
    const text = promptInstruction({
      text: '<h1>Harbour</h1><p>Boats</p>',
      wholeDocument: true,
      kind: 'html',
      style: { name: 'Docs', description: 'Flat pictures', promptPrefix: 'Flat vector:', promptSuffix: ', pastel' },
    });
    assert.match(text, /the whole HTML document below/);
    assert.match(text, /project style "Docs" \(described as "Flat pictures", its prompts start with "Flat vector:", and end with ", pastel"\)/);
    assert.match(text, /do not repeat them/);
    assert.match(text, /````html\n<h1>Harbour<\/h1>/);
  });

  it('an empty source is refused before any model is asked', () => {
    assert.throws(
      () => promptInstruction({ text: ' \n ', wholeDocument: true, kind: 'plaintext' }),
      (e: unknown) => e instanceof ValidationError && e.field === 'prompt',
    );
  });

  it('a long document is cut at a line or word boundary, with a mark', () => {
    const long = `${'word '.repeat(MAX_SOURCE_TEXT / 2)}`;
    const excerpt = sourceExcerpt(long);
    assert.ok(excerpt.length <= MAX_SOURCE_TEXT + 2, String(excerpt.length));
    assert.ok(excerpt.endsWith('word\n…'));
    assert.equal(sourceExcerpt('short'), 'short');
  });

  it('cleans labels, quotes, emphasis and code fences; keeps quotes inside the prompt', () => {
    const cases: [string, string][] = [
      ['Prompt: A red kite over the sea', 'A red kite over the sea'],
      ['**Image prompt:** "A red kite over the sea"', 'A red kite over the sea'],
      ['"A red kite over the sea"', 'A red kite over the sea'],
      ['«Красный змей над морем»', 'Красный змей над морем'],
      ['Промпт: красный змей', 'красный змей'],
      ['```\nA red kite,\n  over the sea\n```', 'A red kite, over the sea'],
      ['```text\nPrompt: “A red kite”\n```', 'A red kite'],
      ['*A red kite*', 'A red kite'],
      ['A sign that reads "OPEN" on a "blue" door', 'A sign that reads "OPEN" on a "blue" door'],
      ['"Open" sign and "closed" sign', '"Open" sign and "closed" sign'],
    ];
    for (const [answer, expected] of cases) assert.equal(cleanWrittenPrompt(answer), expected, answer);
  });

  it('cuts a long answer at a word, within the limit', () => {
    const answer = 'lighthouse '.repeat(200);
    const cleaned = cleanWrittenPrompt(answer);
    assert.ok(cleaned.length <= MAX_WRITTEN_PROMPT);
    assert.ok(cleaned.endsWith('lighthouse'));
    assert.equal(cleanWrittenPrompt('abcd efghij', 7), 'abcd');
  });

  it('an answer with nothing left is refused (the caller falls back to the selection)', () => {
    for (const answer of ['', '  ', '""', 'Prompt:', '```\n\n```']) {
      assert.throws(
        () => cleanWrittenPrompt(answer),
        (e: unknown) => e instanceof ValidationError && e.field === 'prompt',
        JSON.stringify(answer),
      );
    }
  });

  it("the document kind from VS Code's language id", () => {
    assert.equal(sourceKindOf('markdown'), 'markdown');
    assert.equal(sourceKindOf('html'), 'html');
    assert.equal(sourceKindOf('plaintext'), 'plaintext');
    assert.equal(sourceKindOf('typescript'), 'plaintext');
  });
});
