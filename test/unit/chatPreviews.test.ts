// The pure parts of the chat tools: what a model is shown of its result (core/files/imagePreview.ts
// agentPreviewOf: at most about a megapixel, PNG or JPEG) and the confinement of an agent's
// reference images to the workspace (core/files/workspaceReferences.ts).
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { imageHeaderOf } from '../../src/core/images/imageHeader';
import { AGENT_PREVIEW_PIXELS, agentPreviewOf, sideForPixels } from '../../src/core/files/imagePreview';
import { rgbaImage, thumbnail } from '../../src/core/files/pngThumbnail';
import { resolveWorkspaceReferences } from '../../src/core/files/workspaceReferences';
import { ValidationError } from '../../src/core/gateway/errors';

const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/images');

describe('Chat previews: at most about a megapixel, PNG or JPEG', () => {
  let dir: string;
  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'chat-preview-'));
  });
  after(() => fs.rm(dir, { recursive: true, force: true }));

  it('sideForPixels keeps width×height (as thumbnail() rounds) within the pixels, and small images whole', () => {
    assert.equal(sideForPixels(16, 16, 64), 8);
    assert.equal(sideForPixels(1000, 1000, AGENT_PREVIEW_PIXELS), 1000);
    assert.equal(sideForPixels(4096, 4096, AGENT_PREVIEW_PIXELS), 1024);
    for (const [w, h] of [
      [1536, 1024],
      [1024, 1536],
      [3000, 1999],
      [20000, 100],
      [2048, 1152],
    ] as const) {
      const side = sideForPixels(w, h, AGENT_PREVIEW_PIXELS);
      const long = Math.max(w, h);
      const pixels = Math.max(1, Math.round((w * side) / long)) * Math.max(1, Math.round((h * side) / long));
      assert.ok(pixels <= AGENT_PREVIEW_PIXELS, `${w}×${h}: side ${side} gives ${pixels} px`);
      assert.ok(pixels > AGENT_PREVIEW_PIXELS * 0.95, `${w}×${h}: side ${side} gives only ${pixels} px`);
    }
  });

  it('a small PNG or JPEG is shown as it is', async () => {
    for (const [name, mimeType] of [
      ['python.png', 'image/png'],
      ['python.jpg', 'image/jpeg'],
    ] as const) {
      const preview = await agentPreviewOf(path.join(FIXTURES, name));
      assert.equal(preview?.mimeType, mimeType, name);
      assert.deepEqual(preview.data, await fs.readFile(path.join(FIXTURES, name)), name);
    }
  });

  it('above the pixels PNG, JPEG and WebP become a scaled PNG within them (WASM decoders for JPEG and WebP)', async () => {
    for (const name of ['python.png', 'python.jpg', 'python.webp']) {
      const preview = await agentPreviewOf(path.join(FIXTURES, name), 64);
      assert.equal(preview?.mimeType, 'image/png', name);
      const header = await imageHeaderOf(preview.data);
      assert.deepEqual([header?.width, header?.height], [8, 8], name);
    }
  });

  it('a WebP within the pixels is still a PNG (chat takes PNG and JPEG)', async () => {
    const preview = await agentPreviewOf(path.join(FIXTURES, 'python.webp'));
    assert.equal(preview?.mimeType, 'image/png');
    assert.deepEqual((await imageHeaderOf(preview.data))?.width, 16);
  });

  it('a 1536×1024 PNG is scaled to about one megapixel', async () => {
    const width = 1536;
    const height = 1024;
    const rgba = new Uint8Array(width * height * 4).map((_, i) => (i % 4 === 3 ? 255 : (i * 7) % 256));
    const file = path.join(dir, 'big.png');
    await fs.writeFile(file, thumbnail(rgbaImage(width, height, rgba)!, width));
    const preview = await agentPreviewOf(file);
    assert.equal(preview?.mimeType, 'image/png');
    const header = (await imageHeaderOf(preview.data))!;
    assert.ok(header.width * header.height <= AGENT_PREVIEW_PIXELS, `${header.width}×${header.height}`);
    assert.ok(header.width * header.height > AGENT_PREVIEW_PIXELS * 0.95, `${header.width}×${header.height}`);
    assert.equal(Math.round((header.width / header.height) * 100), 150);
  });

  it('no preview of what is not a PNG, JPEG or WebP, nor of a missing file', async () => {
    assert.equal(await agentPreviewOf(path.join(FIXTURES, 'README.md')), undefined);
    assert.equal(await agentPreviewOf(path.join(FIXTURES, 'python.gif')), undefined);
    assert.equal(await agentPreviewOf(path.join(dir, 'missing.png')), undefined);
  });
});

describe("Chat edit references: confined to the workspace's folders", () => {
  let root: string;
  let outside: string;
  before(async () => {
    root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'chat-refs-ws-')));
    outside = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'chat-refs-out-')));
    await fs.mkdir(path.join(root, 'art'));
    await fs.writeFile(path.join(root, 'art', 'a.png'), 'x');
    await fs.writeFile(path.join(outside, 'secret.png'), 'x');
    await fs.symlink(outside, path.join(root, 'link'));
  });
  after(async () => {
    await fs.rm(root, { recursive: true, force: true });
    await fs.rm(outside, { recursive: true, force: true });
  });

  const refusal = async (images: unknown, roots = [root]) => {
    const error = await resolveWorkspaceReferences(images, roots).then(
      () => assert.fail(`${JSON.stringify(images)} was accepted`),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ValidationError, String(error));
    assert.equal(error.field, 'images');
    return error.message;
  };

  it('takes workspace-relative paths, absolute paths and file URIs inside a folder', async () => {
    const inside = path.join(root, 'art', 'a.png');
    assert.deepEqual(await resolveWorkspaceReferences(['art/a.png', ` ${inside} `, pathToFileURL(inside).href], [root]), [inside, inside, inside]);
    assert.deepEqual(await resolveWorkspaceReferences(['a.png'], [outside, path.join(root, 'art')]), [path.join(outside, 'a.png')]);
  });

  it('refuses `..`, absolute paths elsewhere and symbolic links that lead out', async () => {
    assert.match(await refusal(['../secret.png']), /leads outside the workspace folder;/);
    assert.match(await refusal([path.join(outside, 'secret.png')]), /leads outside the workspace folder;/);
    assert.match(await refusal(['art/a.png', 'link/secret.png']), /link\/secret\.png.* through a symbolic link/);
  });

  it('refuses what is not a list of paths, an empty path, too many, and any path without a workspace', async () => {
    for (const images of [undefined, 'art/a.png', [], [1], [{ path: 'a' }]]) assert.match(await refusal(images), /must be a list of image paths/);
    assert.match(await refusal(['  ']), /is empty/);
    assert.match(await refusal(Array.from({ length: 17 }, () => 'art/a.png')), /holds 17 paths; at most 16/);
    assert.match(await refusal(['art/a.png'], []), /Open a workspace folder first/);
  });
});
