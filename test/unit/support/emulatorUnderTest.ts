// The gateway emulator under test, for the tests of the emulator itself (emulator*.test.ts): one per
// suite on a free loopback port, its state reset before each test, the requests the tests make of it
// over real HTTP, and a strict PNG reader for the images it draws.
import * as assert from 'node:assert/strict';
import { crc32, inflateSync } from 'node:zlib';
import { DEMO_KEYS, startEmulator, type RunningEmulator } from '../../../tools/emulator/server';

export interface DecodedPng {
  width: number;
  height: number;
  channels: number;
  raw: Buffer;
  chunkTypes: string[];
}

/** Checks signature, every CRC, and the inflated IDAT length. */
export function decodePng(buf: Buffer): DecodedPng {
  assert.deepEqual([...buf.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  let pos = 8;
  let width = 0;
  let height = 0;
  let colourType = -1;
  const idat: Buffer[] = [];
  const chunkTypes: string[] = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString('latin1', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    assert.equal(buf.readUInt32BE(pos + 8 + len), crc32(buf.subarray(pos + 4, pos + 8 + len)), `CRC of ${type}`);
    chunkTypes.push(type);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      assert.equal(data[8], 8, 'bit depth');
      colourType = data[9]!;
    }
    if (type === 'IDAT') idat.push(data);
    pos += 12 + len;
    if (type === 'IEND') break;
  }
  assert.equal(pos, buf.length, 'nothing after IEND');
  assert.equal(chunkTypes[0], 'IHDR');
  assert.equal(chunkTypes.at(-1), 'IEND');
  const channels = colourType === 6 ? 4 : 3;
  assert.ok(colourType === 2 || colourType === 6, 'RGB or RGBA');
  const raw = inflateSync(Buffer.concat(idat));
  assert.equal(raw.length, height * (1 + width * channels), 'inflated IDAT length');
  return { width, height, channels, raw, chunkTypes };
}

export const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
export const dataUrl = (b: Buffer, type = 'image/png') => `data:${type};base64,${b.toString('base64')}`;
export const ref = (url: string) => ({ type: 'image_url', image_url: { url } });

/** Starts the emulator for the suite it is called in (before/after/beforeEach hooks); read `url` and `state` inside tests. */
export function useEmulator() {
  let emu: RunningEmulator;

  const get = async (p: string, key?: string, headers: Record<string, string> = {}) => {
    const res = await fetch(emu.url + p, { headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers } });
    return { res, body: (await res.json()) as any };
  };
  const generate = async (body: unknown, key: string = DEMO_KEYS.unlimited, headers: Record<string, string> = {}) => {
    const res = await fetch(`${emu.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { res, text: await res.text() };
  };
  const generateJson = async (body: unknown, key?: string, headers?: Record<string, string>) => {
    const { res, text } = await generate(body, key, headers);
    return { res, body: JSON.parse(text) };
  };
  const imagesOf = (body: any): Buffer[] => body.data.map((d: any) => Buffer.from(d.b64_json, 'base64'));
  const admin = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${emu.url}/__emulator${p}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { res, body: (await res.json()) as any };
  };
  const lastRequest = () => emu.state.requests.at(-1)!;

  before(async () => {
    emu = await startEmulator({ port: 0, quiet: true });
  });
  after(async () => {
    await emu.close();
  });
  beforeEach(() => emu.state.reset());

  return {
    get url(): string {
      return emu.url;
    },
    get state(): RunningEmulator['state'] {
      return emu.state;
    },
    get,
    generate,
    generateJson,
    imagesOf,
    admin,
    lastRequest,
  };
}
