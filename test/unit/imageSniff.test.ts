import * as assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EDITABLE_MEDIA_TYPES, extensionForMediaType, readImageHead, sniffImage, SNIFF_HEAD_BYTES } from '../../src/core/images/imageSniff';

const bytes = (...parts: (number[] | string)[]): Buffer => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

// Minimal real headers of each format.
const PNG = bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], [0, 0, 0, 13], 'IHDR', [0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]);
const JPEG = bytes([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10], 'JFIF', [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
const JPEG_EXIF = bytes([0xff, 0xd8, 0xff, 0xe1, 0x00, 0x16], 'Exif', [0, 0]);
const WEBP = bytes('RIFF', [0x24, 0, 0, 0], 'WEBP', 'VP8 ', [0x18, 0, 0, 0]);
const GIF87 = bytes('GIF87a', [1, 0, 1, 0, 0x80, 0, 0]);
const GIF89 = bytes('GIF89a', [1, 0, 1, 0, 0x80, 0, 0]);

describe('imageSniff', () => {
  describe('sniffImage', () => {
    it('recognises PNG', () => {
      assert.deepEqual(sniffImage(PNG), { mediaType: 'image/png', extension: 'png' });
    });

    it('recognises JPEG (JFIF and Exif)', () => {
      assert.deepEqual(sniffImage(JPEG), { mediaType: 'image/jpeg', extension: 'jpg' });
      assert.deepEqual(sniffImage(JPEG_EXIF), { mediaType: 'image/jpeg', extension: 'jpg' });
    });

    it('recognises WebP by RIFF....WEBP', () => {
      assert.deepEqual(sniffImage(WEBP), { mediaType: 'image/webp', extension: 'webp' });
    });

    it('does not take other RIFF files (WAV) for WebP', () => {
      assert.equal(sniffImage(bytes('RIFF', [0x24, 0, 0, 0], 'WAVEfmt ')), undefined);
    });

    it('recognises GIF87a and GIF89a', () => {
      assert.deepEqual(sniffImage(GIF87), { mediaType: 'image/gif', extension: 'gif' });
      assert.deepEqual(sniffImage(GIF89), { mediaType: 'image/gif', extension: 'gif' });
    });

    it('recognises SVG with a leading <svg', () => {
      const svg = { mediaType: 'image/svg+xml', extension: 'svg' };
      assert.deepEqual(sniffImage(bytes('<svg xmlns="http://www.w3.org/2000/svg"/>')), svg);
      assert.deepEqual(sniffImage(bytes('  \n<svg>')), svg);
      assert.deepEqual(sniffImage(bytes([0xef, 0xbb, 0xbf], '<svg viewBox="0 0 1 1">')), svg);
    });

    it('recognises SVG after an XML declaration, comments and an svg DOCTYPE', () => {
      const svg = { mediaType: 'image/svg+xml', extension: 'svg' };
      assert.deepEqual(sniffImage(bytes('<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="x">')), svg);
      assert.deepEqual(sniffImage(bytes('<?xml version="1.0"?><!-- made by hand --><svg>')), svg);
      assert.deepEqual(sniffImage(bytes('<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN"')), svg);
    });

    it('rejects XML and HTML that is not SVG, and truncated prologs', () => {
      assert.equal(sniffImage(bytes('<?xml version="1.0"?><html><svg>')), undefined);
      assert.equal(sniffImage(bytes('<!DOCTYPE html><svg>')), undefined);
      assert.equal(sniffImage(bytes('<svgfoo>')), undefined);
      assert.equal(sniffImage(bytes('<?xml version="1.0" encoding="UTF-8" standalone')), undefined);
      assert.equal(sniffImage(bytes('<!-- never closed <svg>')), undefined);
      assert.equal(sniffImage(bytes('hello <svg>')), undefined);
    });

    it('returns undefined for empty, too short and unknown heads', () => {
      assert.equal(sniffImage(new Uint8Array(0)), undefined);
      assert.equal(sniffImage(PNG.subarray(0, 7)), undefined);
      assert.equal(sniffImage(bytes([0xff, 0xd8])), undefined);
      assert.equal(sniffImage(bytes('RIFF', [0, 0, 0, 0], 'WEB')), undefined);
      assert.equal(sniffImage(bytes('GIF88a')), undefined);
      assert.equal(sniffImage(bytes('%PDF-1.7')), undefined);
    });

    it('reads a head that is a view into a larger buffer at an offset', () => {
      const big = Buffer.concat([Buffer.from('junk'), PNG]);
      assert.equal(sniffImage(big.subarray(4))?.extension, 'png');
      const svg = Buffer.from('xxxx<svg>');
      assert.equal(sniffImage(new Uint8Array(svg.buffer, svg.byteOffset + 4, 5))?.extension, 'svg');
    });
  });

  describe('extensionForMediaType', () => {
    it('maps the known types', () => {
      assert.equal(extensionForMediaType('image/png'), 'png');
      assert.equal(extensionForMediaType('image/jpeg'), 'jpg');
      assert.equal(extensionForMediaType('image/webp'), 'webp');
      assert.equal(extensionForMediaType('image/gif'), 'gif');
      assert.equal(extensionForMediaType('image/svg+xml'), 'svg');
    });

    it('tolerates case, whitespace and parameters', () => {
      assert.equal(extensionForMediaType('Image/PNG'), 'png');
      assert.equal(extensionForMediaType(' image/jpeg ; q=0.9'), 'jpg');
      assert.equal(extensionForMediaType('IMAGE/WEBP;charset=binary'), 'webp');
    });

    it('returns undefined for unknown, empty and missing types', () => {
      assert.equal(extensionForMediaType(undefined), undefined);
      assert.equal(extensionForMediaType(''), undefined);
      assert.equal(extensionForMediaType('text/plain'), undefined);
      assert.equal(extensionForMediaType('image/'), undefined);
      assert.equal(extensionForMediaType('constructor'), undefined);
      assert.equal(extensionForMediaType('toString'), undefined);
    });
  });

  it('EDITABLE_MEDIA_TYPES are exactly png, jpeg and webp', () => {
    assert.deepEqual([...EDITABLE_MEDIA_TYPES].sort(), ['image/jpeg', 'image/png', 'image/webp']);
  });

  describe('readImageHead', () => {
    let dir: string;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'sniff-'));
    });
    after(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('reads only the first SNIFF_HEAD_BYTES bytes by default (room for an SVG prolog)', async () => {
      const file = join(dir, 'big.png');
      await writeFile(file, Buffer.concat([PNG, Buffer.alloc(10_000, 7)]));
      const head = await readImageHead(file);
      assert.equal(head.length, SNIFF_HEAD_BYTES);
      assert.ok(SNIFF_HEAD_BYTES >= 1024 && SNIFF_HEAD_BYTES < 10_000);
      assert.deepEqual(head, Buffer.concat([PNG, Buffer.alloc(10_000, 7)]).subarray(0, SNIFF_HEAD_BYTES));
      assert.equal(sniffImage(head)?.mediaType, 'image/png');
    });

    it('honours a custom length and short files', async () => {
      const file = join(dir, 'small.gif');
      await writeFile(file, GIF89);
      assert.deepEqual(await readImageHead(file, 4), GIF89.subarray(0, 4));
      assert.deepEqual(await readImageHead(file, 1000), GIF89);
      assert.equal((await readImageHead(file, 0)).length, 0);
    });

    it('sniffs each real type from disk, and a renamed text file as undefined', async () => {
      const cases: [string, Buffer, string | undefined][] = [
        ['a.png', PNG, 'png'],
        ['a.jpg', JPEG, 'jpg'],
        ['a.webp', WEBP, 'webp'],
        ['a.gif', GIF87, 'gif'],
        ['a.svg', bytes('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"></svg>'), 'svg'],
        ['notes.png', bytes('These are my notes, not a picture.\n'), undefined],
        ['empty.png', Buffer.alloc(0), undefined],
      ];
      for (const [name, content, extension] of cases) {
        const file = join(dir, name);
        await writeFile(file, content);
        assert.equal(sniffImage(await readImageHead(file))?.extension, extension, name);
      }
    });

    it('rejects for a missing file and an invalid length', async () => {
      await assert.rejects(readImageHead(join(dir, 'missing.png')), { code: 'ENOENT' });
      await assert.rejects(readImageHead(join(dir, 'missing.png'), -1), RangeError);
    });
  });
});
