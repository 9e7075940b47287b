// The MCP server's pure parts: the spending cap, the argument schemas, the configuration and the
// PNG thumbnail. The whole server is driven over stdio in mcpServer.test.ts.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { crc32, deflateSync, inflateSync } from 'node:zlib';
import * as z from 'zod';
import { SpendingCapError } from '../../src/core/gateway/errors';
import { pngThumbnail } from '../../src/core/files/pngThumbnail';
import { type ConfigError, readConfig } from '../../src/mcp/server/config';
import { SpendingCap } from '../../src/core/money/spendingCap';
import { mcpClientSnippet } from '../../src/mcp/snippets';
import { previewOf } from '../../src/core/files/imagePreview';
import { TOOLS } from '../../src/mcp/server/toolDefinitions';
import { findImageModel } from '../../tools/emulator';
import { renderImage } from '../../tools/emulator/render';

const SERVER = path.resolve(__dirname, '../../../dist/mcp.js');

describe('MCP spending cap', () => {
  const capOf = (maxCostPerCall: number, maxCostPerSession: number) => new SpendingCap(() => ({ maxCostPerCall, maxCostPerSession }));

  it('refuses a reservation above the per-call cap, with the figures', () => {
    const refused = capOf(10, 100).refusal(12.5);
    assert.ok(refused instanceof SpendingCapError && refused.cap === 'maxCostPerCall' && /₽12\.50.*₽10\.00/.test(refused.message));
    assert.throws(() => capOf(10, 100).reserve(12.5), SpendingCapError);
  });

  it('holds reservations in flight, so parallel calls cannot overrun the session total', () => {
    const cap = capOf(10, 15);
    const first = cap.reserve(8);
    assert.equal(cap.refusal(8)?.cap, 'maxCostPerSession');
    assert.equal(cap.status().remainingThisSession, 7);
    first.settle(5.25);
    assert.deepEqual(cap.status(), { maxCostPerCall: 10, maxCostPerSession: 15, spentThisSession: 5.25, remainingThisSession: 9.75 });
    assert.equal(cap.refusal(8), undefined);
  });

  it('counts the whole reservation when the outcome is unknown, nothing when released, and settles once', () => {
    const cap = capOf(10, 30);
    const unknown = cap.reserve(4);
    const refused = cap.reserve(6);
    unknown.settle(undefined);
    refused.release();
    refused.settle(6);
    assert.equal(cap.status().spentThisSession, 4);
    assert.equal(cap.status().remainingThisSession, 26);
  });

  it('a cap of 0 allows estimates only; a changed limit applies to the next call', () => {
    let limits = { maxCostPerCall: 0, maxCostPerSession: 0 };
    const cap = new SpendingCap(() => limits);
    assert.ok(cap.refusal(0.01));
    limits = { maxCostPerCall: 1, maxCostPerSession: 1 };
    assert.equal(cap.refusal(0.01), undefined);
  });
});

describe('MCP argument schemas (zod, as the SDK applies them)', () => {
  /** The message of the first refusal, as the SDK reports it (it adds " at <field>"). */
  const refusal = (schema: z.ZodType, args: unknown) => {
    const result = z.safeParse(schema, args);
    assert.ok(!result.success, `accepted ${JSON.stringify(args)}`);
    return result.error.issues[0]!;
  };
  const generate = TOOLS.generate_image.inputSchema;

  it('accepts a valid call', () => {
    assert.deepEqual(z.parse(generate, { prompt: 'p', n: 2, params: { moderation: 'low' } }), { prompt: 'p', n: 2, params: { moderation: 'low' } });
    assert.deepEqual(z.parse(TOOLS.get_account.inputSchema, {}), {});
  });

  it('names the field and what is allowed, in the words of the old checker', () => {
    assert.equal(refusal(generate, {}).message, '"prompt" is required');
    assert.equal(refusal(generate, { prompt: 'p', n: 11 }).message, '"n" must be a whole number from 1 to 10; got 11');
    assert.equal(refusal(generate, { prompt: 'p', n: 1.5 }).message, '"n" must be a whole number from 1 to 10; got 1.5');
    assert.equal(refusal(generate, { prompt: 'p', n: 'two' }).message, '"n" must be a whole number from 1 to 10; got "two"');
    assert.equal(refusal(generate, { prompt: 'p', output_format: 'gif' }).message, '"output_format" must be one of png, jpeg, webp, svg; got "gif"');
    assert.equal(refusal(generate, { prompt: 'p', params: { a: [1] } }).path[0], 'params');
    assert.equal(refusal(generate, { prompt: 7 }).message, '"prompt" must be a text; got 7');
    assert.equal(refusal(generate, { prompt: 'p', seed: 0.5 }).message, '"seed" must be a whole number; got 0.5');
    assert.match(refusal(generate, []).message, /^The arguments must be a JSON object/);
    const unknown = refusal(generate, { prompt: 'p', images: ['a.png'] });
    assert.match(unknown.message, /^Unknown argument "images"\. Allowed: prompt, model, n, .*output_directory\.$/);
  });

  it('checks the list of edit_image', () => {
    const edit = TOOLS.edit_image.inputSchema;
    assert.equal(refusal(edit, { prompt: 'p', images: [] }).message, '"images" must have from 1 to 16 items; got 0');
    assert.equal(refusal(edit, { prompt: 'p', images: [3] }).message, '"images" must be a list of workspace-relative paths (texts); got 3');
  });

  it('estimate_cost takes every argument of generate_image and edit_image', () => {
    const estimate = Object.keys(TOOLS.estimate_cost.inputSchema.shape);
    for (const tool of ['generate_image', 'edit_image'] as const) {
      for (const name of Object.keys(TOOLS[tool].inputSchema.shape)) assert.ok(estimate.includes(name), `estimate_cost lacks ${name} of ${tool}`);
    }
  });
});

describe('MCP configuration', () => {
  const real = (p: string) => p;
  it('reads the environment with defaults', () => {
    const config = readConfig({ GATEWAY_IMAGES_BASE_URL: 'https://g.example', GATEWAY_IMAGES_MAX_COST_PER_CALL: '12,5' }, '/w', real);
    assert.equal(config.workspaceRoot, '/w');
    assert.equal(config.maxCostPerCall, 12.5);
    assert.equal(config.maxCostPerSession, 200);
    assert.equal(config.outputDirectory, 'generated-images');
    assert.equal(config.apiKey, undefined);
  });

  it('names the variable that is wrong', () => {
    assert.throws(
      () => readConfig({}, '/w', real),
      (e: ConfigError) => e.variable === 'GATEWAY_IMAGES_BASE_URL',
    );
    assert.throws(
      () => readConfig({ GATEWAY_IMAGES_BASE_URL: 'https://g', GATEWAY_IMAGES_MAX_COST_PER_SESSION: 'lots' }, '/w', real),
      (e: ConfigError) => e.variable === 'GATEWAY_IMAGES_MAX_COST_PER_SESSION' && /got "lots"/.test(e.message),
    );
  });

  it('activation never loads the server: dist/extension.js holds no SDK and requires no mcp.js', () => {
    const extension = readFileSync(path.resolve(__dirname, '../../../dist/extension.js'), 'utf8');
    assert.ok(!extension.includes('@modelcontextprotocol'), 'the MCP SDK is bundled into the extension');
    assert.ok(!/require\(\s*["'][^"']*mcp(\.js)?["']\s*\)/.test(extension), 'the extension requires the MCP server');
    assert.ok(extension.includes('mcp.js'), 'the extension no longer names the server (the test would prove nothing)');
  });

  it('the server does not start without a base URL and says why on stderr', function () {
    this.timeout(10_000);
    const run = spawnSync(process.execPath, [SERVER], { env: { PATH: process.env.PATH }, encoding: 'utf8', input: '' });
    assert.equal(run.status, 2);
    assert.match(run.stderr, /cannot start: GATEWAY_IMAGES_BASE_URL: set it/);
    assert.equal(run.stdout, '');
  });
});

describe('PNG thumbnail', () => {
  const model = findImageModel('aurora-1')!;
  const render = (width: number, height: number, transparent = false) =>
    renderImage({ model, prompt: 'thumb', seed: 3, width, height, transparent, referencesDigest: '', extra: '' }, 0);
  /** Width, height and the decoded RGBA rows of a thumbnail (filter 0 on every row, as written). */
  const decode = (png: Buffer) => {
    const width = png.readUInt32BE(16);
    const height = png.readUInt32BE(20);
    const idatLength = png.readUInt32BE(33);
    return { width, height, colorType: png[25], rows: inflateSync(png.subarray(41, 41 + idatLength)) };
  };

  it('scales to at most 128 px on the long side, keeping the aspect ratio', () => {
    const thumb = pngThumbnail(render(512, 256))!;
    const { width, height, colorType, rows } = decode(thumb);
    assert.deepEqual([width, height, colorType], [128, 64, 6]);
    assert.equal(rows.length, height * (width * 4 + 1));
    assert.ok(thumb.length < 40_000, `${thumb.length} bytes`);
  });

  it('keeps the picture: the average colour matches the source', () => {
    const source = render(64, 64);
    const same = decode(pngThumbnail(source, 64)!);
    const scaled = decode(pngThumbnail(source, 16)!);
    const mean = (d: ReturnType<typeof decode>) => {
      const sum = [0, 0, 0];
      for (let y = 0; y < d.height; y++)
        for (let x = 0; x < d.width; x++) for (let c = 0; c < 3; c++) sum[c]! += d.rows[y * (d.width * 4 + 1) + 1 + x * 4 + c]!;
      return sum.map((s) => s / (d.width * d.height));
    };
    mean(same).forEach((v, c) => assert.ok(Math.abs(v - mean(scaled)[c]!) < 2, `channel ${c}: ${v} vs ${mean(scaled)[c]}`));
  });

  it('reads every PNG row filter (None, Sub, Up, Average, Paeth), as real encoders write them', () => {
    // A 5×5 RGB image with varied pixels, each row written with another filter.
    const width = 5;
    const height = 5;
    const raw = Buffer.alloc(width * height * 3);
    for (let i = 0; i < raw.length; i++) raw[i] = (i * 37 + (i % 7) * 11) & 0xff;
    const stride = width * 3;
    const filtered = Buffer.alloc(height * (stride + 1));
    for (let y = 0; y < height; y++) {
      const filter = y;
      filtered[y * (stride + 1)] = filter;
      for (let x = 0; x < stride; x++) {
        const a = x >= 3 ? raw[y * stride + x - 3] : 0;
        const b = y > 0 ? raw[(y - 1) * stride + x] : 0;
        const c = x >= 3 && y > 0 ? raw[(y - 1) * stride + x - 3] : 0;
        const p = a! + b! - c!;
        const paeth = Math.abs(p - a!) <= Math.abs(p - b!) && Math.abs(p - a!) <= Math.abs(p - c!) ? a : Math.abs(p - b!) <= Math.abs(p - c!) ? b : c;
        const predictor = [0, a, b, (a! + b!) >> 1, paeth][filter]!;
        filtered[y * (stride + 1) + 1 + x] = (raw[y * stride + x]! - predictor) & 0xff;
      }
    }
    const chunk = (type: string, data: Buffer) => {
      const head = Buffer.concat([Buffer.from(type, 'latin1'), data]);
      const length = Buffer.alloc(4);
      length.writeUInt32BE(data.length);
      const crc = Buffer.alloc(4);
      crc.writeUInt32BE(crc32(head));
      return Buffer.concat([length, head, crc]);
    };
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(width, 0);
    ihdr.writeUInt32BE(height, 4);
    ihdr.set([8, 2, 0, 0, 0], 8);
    const png = Buffer.concat([
      Buffer.from('89504e470d0a1a0a', 'hex'),
      chunk('IHDR', ihdr),
      chunk('IDAT', deflateSync(filtered)),
      chunk('IEND', Buffer.alloc(0)),
    ]);
    const thumb = decode(pngThumbnail(png, 5)!);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const got = [...thumb.rows.subarray(y * (width * 4 + 1) + 1 + x * 4, y * (width * 4 + 1) + 1 + x * 4 + 4)];
        assert.deepEqual(got, [...raw.subarray((y * width + x) * 3, (y * width + x) * 3 + 3), 255], `pixel ${x},${y}`);
      }
    }
  });

  it('handles transparency and refuses what it cannot read', () => {
    assert.ok(pngThumbnail(render(200, 100, true)));
    assert.equal(pngThumbnail(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10])), undefined);
    assert.equal(pngThumbnail(render(64, 64).subarray(0, 60)), undefined);
  });
});

describe('MCP previews of PNG, JPEG and WebP results', () => {
  const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/images');
  /** The mean RGB of a preview (an RGBA PNG as pngThumbnail writes it). */
  const meanOf = (base64: string) => {
    const png = Buffer.from(base64, 'base64');
    const width = png.readUInt32BE(16);
    const height = png.readUInt32BE(20);
    const rows = inflateSync(png.subarray(41, 41 + png.readUInt32BE(33)));
    const sum = [0, 0, 0];
    for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) for (let c = 0; c < 3; c++) sum[c]! += rows[y * (width * 4 + 1) + 1 + x * 4 + c]!;
    return { width, height, mean: sum.map((v) => v / (width * height)) };
  };

  it('the same picture as JPEG and as WebP gives a small PNG preview like the PNG one (WASM decoders)', async () => {
    const png = meanOf((await previewOf(path.join(FIXTURES, 'python.png')))!);
    for (const name of ['python.jpg', 'python.webp']) {
      const preview = await previewOf(path.join(FIXTURES, name));
      assert.ok(preview, `no preview of ${name}`);
      const got = meanOf(preview);
      assert.deepEqual([got.width, got.height], [png.width, png.height], name);
      got.mean.forEach((v, c) => assert.ok(Math.abs(v - png.mean[c]!) < 12, `${name} channel ${c}: ${v} vs ${png.mean[c]}`));
    }
  });

  it('no preview of what is not an image', async () => {
    assert.equal(await previewOf(path.join(FIXTURES, 'README.md')), undefined);
  });
});

describe('MCP client snippets', () => {
  const input = {
    serverPath: '/home/me/.vscode/extensions/gateway images/dist/mcp.js',
    baseUrl: 'https://gw.example/',
    maxCostPerCall: 20,
    maxCostPerSession: 80,
  };

  it('Cursor: valid JSON with the path, the address, the caps, and the key only as a reference', () => {
    const server = JSON.parse(mcpClientSnippet('cursor', input)).mcpServers['gateway-images'];
    assert.deepEqual(server.args, [input.serverPath]);
    assert.equal(server.env.GATEWAY_IMAGES_BASE_URL, 'https://gw.example/');
    assert.equal(server.env.GATEWAY_IMAGES_MAX_COST_PER_CALL, '20');
    assert.equal(server.env.GATEWAY_IMAGES_API_KEY, '${env:GATEWAY_IMAGES_API_KEY}');
  });

  it('Claude Code: a command that quotes a path with spaces; Codex: TOML forwarding the key by name', () => {
    const claude = mcpClientSnippet('claude-code', input);
    assert.match(claude, /-- node '\/home\/me\/\.vscode\/extensions\/gateway images\/dist\/mcp\.js'$/);
    assert.match(claude, /-e GATEWAY_IMAGES_API_KEY="\$GATEWAY_IMAGES_API_KEY"/);
    const codex = mcpClientSnippet('codex', input);
    assert.match(codex, /^\[mcp_servers\.gateway-images\]$/m);
    assert.match(codex, /^args = \["\/home\/me\/\.vscode\/extensions\/gateway images\/dist\/mcp\.js"\]$/m);
    assert.match(codex, /^env_vars = \["GATEWAY_IMAGES_API_KEY"\]$/m);
    assert.match(codex, /GATEWAY_IMAGES_MAX_COST_PER_SESSION = "80"/);
  });
});
