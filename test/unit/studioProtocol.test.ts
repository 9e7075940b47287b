// The host checks every message of the Image Studio page with parseFromWebviewMessage: valid
// messages pass unchanged, anything else (unknown type, wrong shape, oversized) is rejected.
import * as assert from 'assert';
import { type FormValues, type FromWebviewMessage, LIMITS } from '../../src/studio/protocol/protocol';
import { parseFromWebviewMessage, describeRejected } from '../../src/studio/protocol/protocolValidation';

const form: FormValues = {
  model: 'aurora-1',
  prompt: 'A lighthouse at dawn',
  n: 2,
  resolution: '2K',
  aspect_ratio: '16:9',
  background: 'opaque',
  quality: 'high',
  output_format: 'png',
  size: 'auto',
  seed: '42',
  output_compression: '80',
  params: { moderation: 'low' },
  references: ['/work/ws/images/sample.png'],
};

const VALID: FromWebviewMessage[] = [
  { type: 'ready', requestId: 1, references: [] },
  { type: 'ready', requestId: 2, references: ['/ws/a.png', '/ws/b.webp'] },
  { type: 'evaluate', requestId: 3, form },
  { type: 'evaluate', requestId: 4, form: { model: '', prompt: '', n: 1, params: {}, references: [] } },
  { type: 'generate', requestId: 5, form },
  { type: 'cancel' },
  { type: 'refreshModels' },
  { type: 'pickReferences', requestId: 6 },
  { type: 'dropUris', requestId: 7, uris: ['file:///ws/a.png', 'vscode-remote://host/ws/b.png'] },
  { type: 'pasteImage', requestId: 8, mediaType: 'image/png', base64: 'iVBORw0KGgo=' },
  { type: 'pasteImage', requestId: 9, mediaType: 'image/webp', base64: 'UklGRg==' },
  ...(['open', 'reveal', 'copyPath', 'insertLink', 'useAsReference', 'regenerate', 'delete'] as const).map((action, i) => ({
    type: 'galleryAction' as const,
    requestId: 10 + i,
    action,
    entryId: '0f8fad5b-d9cb-469f-a165-70867728950e',
    file: '/ws/generated-images/x.png',
  })),
  { type: 'galleryPage', requestId: 20, start: 0, count: 48 },
  { type: 'galleryPage', requestId: 21, start: 4_950, count: LIMITS.galleryPage },
  { type: 'thumbnails', requestId: 22, items: [{ entryId: 'e1', file: '/ws/generated-images/x.png' }] },
  { type: 'galleryShown', at: 1_767_000_000_000, cards: 24, total: 5_000 },
  { type: 'galleryFilter', query: 'lighthouse model:lumen who:mcp' },
  { type: 'galleryFilter', query: '' },
  { type: 'writePrompt', requestId: 23 },
  { type: 'writePrompt', requestId: 24, style: 'Article cover 16:9' },
];

describe('Image Studio protocol: parseFromWebviewMessage', () => {
  it('accepts every valid message as it is', () => {
    for (const message of VALID) assert.deepStrictEqual(parseFromWebviewMessage(message), message, JSON.stringify(message).slice(0, 80));
  });

  it('copies the message instead of keeping the page object', () => {
    const message = { type: 'evaluate', requestId: 1, form: { ...form, references: ['/a.png'] } };
    const parsed = parseFromWebviewMessage(message) as { form: FormValues };
    message.form.references.push('/b.png');
    assert.deepStrictEqual(parsed.form.references, ['/a.png']);
  });

  it('rejects what is not a message', () => {
    for (const value of [undefined, null, 0, 'ready', [], [{ type: 'ready' }], { type: 1 }, {}, Object.create(null)]) {
      assert.strictEqual(parseFromWebviewMessage(value), undefined, typeof value);
    }
  });

  it('rejects unknown types', () => {
    for (const type of ['readyX', 'READY', 'eval', 'runCommand', 'html', '__proto__', 'constructor', 'toString']) {
      assert.strictEqual(parseFromWebviewMessage({ type, requestId: 1 }), undefined, type);
    }
  });

  it('rejects wrong shapes', () => {
    const bad: unknown[] = [
      { type: 'ready' },
      { type: 'ready', requestId: 1 },
      { type: 'ready', requestId: -1, references: [] },
      { type: 'ready', requestId: 1.5, references: [] },
      { type: 'ready', requestId: '1', references: [] },
      { type: 'ready', requestId: 1, references: [1] },
      { type: 'ready', requestId: 1, references: [''] },
      { type: 'ready', requestId: 1, references: [], extra: true },
      { type: 'cancel', requestId: 1 },
      { type: 'evaluate', requestId: 1 },
      { type: 'evaluate', requestId: 1, form: null },
      { type: 'evaluate', requestId: 1, form: { ...form, n: 0 } },
      { type: 'evaluate', requestId: 1, form: { ...form, n: 11 } },
      { type: 'evaluate', requestId: 1, form: { ...form, n: '2' } },
      { type: 'evaluate', requestId: 1, form: { ...form, prompt: 5 } },
      { type: 'evaluate', requestId: 1, form: { ...form, seed: 42 } },
      { type: 'evaluate', requestId: 1, form: { ...form, params: [] } },
      { type: 'evaluate', requestId: 1, form: { ...form, params: { a: 1 } } },
      { type: 'evaluate', requestId: 1, form: { ...form, references: '/a.png' } },
      { type: 'evaluate', requestId: 1, form: { ...form, script: 'x' } },
      { type: 'generate', requestId: 1, form: { model: 'a', prompt: 'b' } },
      { type: 'dropUris', requestId: 1, uris: 'file:///a.png' },
      { type: 'pasteImage', requestId: 1, mediaType: 'image/gif', base64: 'R0lGOA==' },
      { type: 'pasteImage', requestId: 1, mediaType: 'image/svg+xml', base64: 'PHN2Zz4=' },
      { type: 'pasteImage', requestId: 1, mediaType: 'image/png', base64: '' },
      { type: 'pasteImage', requestId: 1, mediaType: 'image/png', base64: 'not base64!' },
      { type: 'pasteImage', requestId: 1, mediaType: 'image/png', base64: 'abc' },
      { type: 'pasteImage', requestId: 1, mediaType: 'image/png', base64: 'data:image/png;base64,iVBORw0KGgo=' },
      { type: 'galleryAction', requestId: 1, action: 'rm -rf', entryId: 'x', file: '/a.png' },
      { type: 'galleryAction', requestId: 1, action: 'open', entryId: '', file: '/a.png' },
      { type: 'galleryAction', requestId: 1, action: 'open', entryId: 'x' },
      { type: 'galleryPage', requestId: 1, start: -1, count: 10 },
      { type: 'galleryPage', requestId: 1, start: 0, count: 0 },
      { type: 'galleryPage', requestId: 1, start: 0, count: LIMITS.galleryPage + 1 },
      { type: 'galleryPage', requestId: 1, start: 0.5, count: 10 },
      { type: 'thumbnails', requestId: 1, items: [] },
      { type: 'thumbnails', requestId: 1, items: Array.from({ length: LIMITS.thumbnails + 1 }, (_, i) => ({ entryId: 'e', file: `/${i}.png` })) },
      { type: 'thumbnails', requestId: 1, items: [{ entryId: 'e', file: '/a.png', src: 'https://evil' }] },
      { type: 'thumbnails', requestId: 1, items: [{ entryId: '', file: '/a.png' }] },
      { type: 'galleryShown', at: 'now', cards: 1, total: 1 },
      { type: 'galleryShown', at: 1, cards: 1, total: 1, extra: true },
      { type: 'galleryFilter', query: 42 },
      { type: 'galleryFilter', query: 'x', requestId: 1 },
      { type: 'writePrompt' },
      { type: 'writePrompt', requestId: 1, style: 7 },
      { type: 'writePrompt', requestId: 1, style: 'x'.repeat(65) },
      { type: 'writePrompt', requestId: 1, text: 'the page does not choose the text' },
    ];
    for (const value of bad) assert.strictEqual(parseFromWebviewMessage(value), undefined, JSON.stringify(value));
  });

  it('rejects oversized payloads and accepts the limits themselves', () => {
    const at = (n: number) => 'a'.repeat(n);
    assert.ok(parseFromWebviewMessage({ type: 'evaluate', requestId: 1, form: { ...form, prompt: at(LIMITS.prompt) } }));
    assert.strictEqual(parseFromWebviewMessage({ type: 'evaluate', requestId: 1, form: { ...form, prompt: at(LIMITS.prompt + 1) } }), undefined);
    assert.strictEqual(LIMITS.prompt, 32_000);

    assert.ok(parseFromWebviewMessage({ type: 'evaluate', requestId: 1, form: { ...form, model: at(200) } }));
    assert.strictEqual(parseFromWebviewMessage({ type: 'evaluate', requestId: 1, form: { ...form, model: at(201) } }), undefined);
    const action = { type: 'galleryAction', requestId: 1, action: 'open', file: '/a.png' };
    assert.ok(parseFromWebviewMessage({ ...action, entryId: at(200) }));
    assert.strictEqual(parseFromWebviewMessage({ ...action, entryId: at(201) }), undefined);

    const refs = (n: number) => Array.from({ length: n }, (_, i) => `/ws/${i}.png`);
    assert.ok(parseFromWebviewMessage({ type: 'generate', requestId: 1, form: { ...form, references: refs(16) } }));
    assert.strictEqual(parseFromWebviewMessage({ type: 'generate', requestId: 1, form: { ...form, references: refs(17) } }), undefined);
    assert.strictEqual(parseFromWebviewMessage({ type: 'ready', requestId: 1, references: refs(17) }), undefined);
    assert.strictEqual(parseFromWebviewMessage({ type: 'ready', requestId: 1, references: [`/${at(LIMITS.path)}`] }), undefined);

    const params = Object.fromEntries(Array.from({ length: LIMITS.params + 1 }, (_, i) => [`p${i}`, 'v']));
    assert.strictEqual(parseFromWebviewMessage({ type: 'evaluate', requestId: 1, form: { ...form, params } }), undefined);
    assert.strictEqual(parseFromWebviewMessage({ type: 'evaluate', requestId: 1, form: { ...form, params: { p: at(LIMITS.value + 1) } } }), undefined);
    assert.strictEqual(parseFromWebviewMessage({ type: 'evaluate', requestId: 1, form: { ...form, size: at(LIMITS.value + 1) } }), undefined);
    assert.strictEqual(parseFromWebviewMessage({ type: 'dropUris', requestId: 1, uris: refs(LIMITS.droppedUris + 1) }), undefined);
    assert.ok(parseFromWebviewMessage({ type: 'galleryFilter', query: at(LIMITS.galleryFilter) }));
    assert.strictEqual(parseFromWebviewMessage({ type: 'galleryFilter', query: at(LIMITS.galleryFilter + 1) }), undefined);
  });

  it('caps a pasted image at 25 MB of bytes', () => {
    const maxBytes = 25 * 1024 * 1024;
    assert.ok(LIMITS.pasteBase64 >= (maxBytes / 3) * 4 && LIMITS.pasteBase64 < (maxBytes / 3) * 4 + 8);
    const ok = 'A'.repeat(LIMITS.pasteBase64);
    assert.ok(parseFromWebviewMessage({ type: 'pasteImage', requestId: 1, mediaType: 'image/jpeg', base64: ok }));
    const tooBig = 'A'.repeat(LIMITS.pasteBase64 + 4);
    assert.strictEqual(parseFromWebviewMessage({ type: 'pasteImage', requestId: 1, mediaType: 'image/jpeg', base64: tooBig }), undefined);
  });

  it('treats markup in strings as data', () => {
    const xss = '<img src=x onerror=alert(1)><script>alert(2)</script>"\'&';
    const message = { type: 'generate', requestId: 1, form: { ...form, prompt: xss, model: xss, params: { moderation: xss } } };
    const parsed = parseFromWebviewMessage(message);
    assert.deepStrictEqual(parsed, message, 'strings pass through unchanged, neither escaped nor stripped');
    const rejected = describeRejected({ type: xss, html: xss });
    assert.ok(!rejected.includes('<script>'), 'the log line does not carry the content');
    assert.ok(rejected.length < 200);
  });
});

describe("Image Studio protocol: the region editor's regionEdit", () => {
  const edit = {
    type: 'regionEdit',
    requestId: 7,
    image: '/ws/photo.jpg',
    model: 'prism-2',
    prompt: 'a red door',
    maskBase64: 'iVBORw0KGgo=',
    feather: 8,
    format: 'png',
    wholeImage: false,
  };

  it('passes the result format, png or jpeg, unchanged', () => {
    assert.deepStrictEqual(parseFromWebviewMessage(edit), edit);
    assert.deepStrictEqual(parseFromWebviewMessage({ ...edit, format: 'jpeg' }), { ...edit, format: 'jpeg' });
  });

  it('refuses a missing or unknown format', () => {
    const { format: _format, ...without } = edit;
    for (const value of [without, { ...edit, format: 'webp' }, { ...edit, format: 'JPEG' }, { ...edit, format: 1 }]) {
      assert.strictEqual(parseFromWebviewMessage(value), undefined, JSON.stringify(value));
    }
  });
});
