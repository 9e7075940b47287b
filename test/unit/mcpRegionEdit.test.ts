// MCP edit_image and estimate_cost with `mask` (issue 41), driven by the SDK's own Client over stdio
// against the emulator: the region edit answers with the same figures as every edit, saves a new
// file next to the original with the mask beside it, and leaves every pixel outside the region as
// it was; a bad mask (another size, empty, outside the workspace, not a PNG) is refused with the
// field named and no request sent. Needs `npm run build` first.
import * as assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { decodeImage } from '../../src/core/images/codecs';
import { DEMO_KEYS, paidRequests, removeDir, type RunningEmulator, startEmulator, tempDir } from './support/gateway';
import { boxMask, gradient, rgbaPng } from './support/maskImages';
import { launch, SERVER, textOf, type ToolResult } from './support/mcp';

describe('MCP server: region edits by mask', function () {
  this.timeout(60_000);
  let emu: RunningEmulator;
  let workspace: string;
  let outside: string;
  let recovery: string;
  let client: Client;
  const W = 300;
  const H = 200;
  const BOX = { x: 40, y: 30, width: 24, height: 20 };

  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolResult;
  const edit = { prompt: 'A red door', images: ['art/photo.png'], model: 'prism-2' };

  before(async () => {
    if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run "npm run build" first.`);
    emu = await startEmulator();
    workspace = await fs.realpath(await tempDir('gwi-mcp-region-'));
    outside = await fs.realpath(await tempDir('gwi-mcp-region-outside-'));
    recovery = await tempDir('gwi-mcp-region-recovery-');
    const art = path.join(workspace, 'art');
    await fs.mkdir(art);
    await fs.writeFile(path.join(art, 'photo.png'), rgbaPng(gradient(W, H)));
    await fs.writeFile(path.join(art, 'door.png'), rgbaPng(boxMask(W, H, BOX)));
    await fs.writeFile(path.join(art, 'scene.png'), rgbaPng(gradient(W, H)));
    const clear = gradient(W, H);
    clear.data[3] = 0;
    await fs.writeFile(path.join(art, 'clear.png'), rgbaPng(clear));
    await fs.writeFile(path.join(art, 'small.png'), rgbaPng(boxMask(W / 2, H / 2, BOX)));
    await fs.writeFile(path.join(art, 'empty.png'), rgbaPng(boxMask(W, H, undefined, 'alpha')));
    await fs.writeFile(path.join(art, 'fake.png'), Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1]));
    await fs.writeFile(path.join(outside, 'door.png'), rgbaPng(boxMask(W, H, BOX)));
    await fs.symlink(path.join(outside, 'door.png'), path.join(art, 'linked.png'));
    ({ client } = await launch({
      GATEWAY_IMAGES_BASE_URL: emu.url,
      GATEWAY_IMAGES_API_KEY: DEMO_KEYS.unlimited,
      GATEWAY_IMAGES_WORKSPACE: workspace,
      GATEWAY_IMAGES_RECOVERY_DIR: recovery,
    }));
  });

  after(async () => {
    await client?.close();
    await emu?.close();
    await Promise.all([workspace, outside, recovery].map((d) => removeDir(d)));
  });

  const refused: [string, Record<string, unknown>, string, RegExp][] = [
    ['of another size', { mask: 'art/small.png' }, 'mask', /is 150×100; it must be the same size as the image, 300×200/],
    ['empty', { mask: 'art/empty.png' }, 'mask', /marks nothing/],
    ['outside the workspace', { mask: '../elsewhere/door.png' }, 'mask', /leads outside the workspace folder/],
    ['outside through a link', { mask: 'art/linked.png' }, 'mask', /leads outside the workspace folder \(through a symbolic link\)/],
    ['not a PNG', { mask: 'art/fake.png' }, 'mask', /is not a PNG/],
    ['for two images', { mask: 'art/door.png', images: ['art/photo.png', 'art/photo.png'] }, 'mask', /exactly one image; 2 were given/],
    ['with wholeImage', { mask: 'art/door.png', wholeImage: true }, 'mask', /not both/],
    ['feather without a mask', { feather: 4 }, 'feather', /give "mask" too/],
    ['format without a mask', { format: 'jpeg' }, 'format', /"format" applies only to a region edit: give "mask" too/],
    [
      'as JPEG of an image with transparency',
      { mask: 'art/door.png', format: 'jpeg', images: ['art/clear.png'] },
      'format',
      /clear\.png has transparent pixels/,
    ],
  ];
  for (const [what, args, field, message] of refused) {
    it(`refuses a mask ${what}: the field named, nothing sent (edit_image and estimate_cost)`, async () => {
      for (const tool of ['edit_image', 'estimate_cost']) {
        const result = await call(tool, { ...edit, ...args });
        assert.equal(result.isError, true, `${tool}: ${textOf(result)}`);
        const error = result.structuredContent?.error as { field?: string; message: string };
        assert.equal(error.field, field, tool);
        assert.match(error.message, message, tool);
      }
      assert.equal(paidRequests(emu).length, 0);
    });
  }

  it('estimate_cost: the region that would be sent, the same estimate as the edit, nothing sent', async () => {
    const result = await call('estimate_cost', { ...edit, mask: 'art/door.png', feather: 4 });
    assert.ok(!result.isError, textOf(result));
    const structured = result.structuredContent as { region: string; estimate: { reservation: number }; request: { aspect_ratio?: string } };
    assert.match(structured.region, /of 300×200, sent as /);
    assert.match(textOf(result), /Region edit: region .* of 300×200, sent as/);
    assert.ok(structured.estimate.reservation > 0);
    const plain = (await call('estimate_cost', edit)).structuredContent as { estimate: unknown };
    assert.deepEqual(structured.estimate, plain.estimate);
    assert.equal(paidRequests(emu).length, 0);
  });

  it('edit_image: one request, photo.region-1.png beside the untouched original, the mask beside it, the figures of every edit', async () => {
    const before = await fs.readFile(path.join(workspace, 'art', 'photo.png'));
    const result = await call('edit_image', { ...edit, mask: 'art/door.png', feather: 0 });
    assert.ok(!result.isError, textOf(result));
    const structured = result.structuredContent as {
      files: { path: string }[];
      masks: string[];
      region: string;
      cost_rub?: number;
      balance_rub?: number;
      estimate: { reservation: number };
    };
    assert.equal(paidRequests(emu).length, 1);
    assert.deepEqual(
      structured.files.map((f) => f.path),
      ['art/photo.region-1.png'],
    );
    assert.deepEqual(structured.masks, ['art/photo.region-1.mask.png']);
    assert.equal(typeof structured.cost_rub, 'number');
    assert.equal(typeof structured.balance_rub, 'number');
    assert.ok(structured.estimate.reservation > 0);
    assert.match(textOf(result), /Edited 1 image\(s\) with prism-2\. Cost .* balance after/);
    assert.match(textOf(result), /Region edit: region 24×20 of 300×200/);
    assert.deepEqual(await fs.readFile(path.join(workspace, 'art', 'photo.png')), before, 'the original is untouched');

    const edited = await decodeImage(await fs.readFile(path.join(workspace, 'art', 'photo.region-1.png')));
    const source = gradient(W, H);
    assert.equal(edited.width, W);
    assert.equal(edited.height, H);
    let changed = 0;
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) {
        const p = (y * W + x) * 4;
        const same = [0, 1, 2, 3].every((i) => edited.data[p + i] === source.data[p + i]);
        const inside = x >= BOX.x && x < BOX.x + BOX.width && y >= BOX.y && y < BOX.y + BOX.height;
        if (!inside) assert.ok(same, `pixel ${x},${y} outside the region changed`);
        else if (!same) changed++;
      }
    assert.ok(changed > 0, 'the region took the answer');
  });

  it('edit_image with format jpeg: scene.region-1.jpg of the original size, the mask beside a PNG, what JPEG costs said', async () => {
    const paid = paidRequests(emu).length;
    const estimate = await call('estimate_cost', { ...edit, images: ['art/scene.png'], mask: 'art/door.png', format: 'jpeg' });
    assert.match(textOf(estimate), /saved as JPEG: every pixel is re-compressed \(quality 90\), so the rest of the image changes slightly/);
    const result = await call('edit_image', { ...edit, images: ['art/scene.png'], mask: 'art/door.png', format: 'jpeg' });
    assert.ok(!result.isError, textOf(result));
    const structured = result.structuredContent as { files: { path: string }[]; masks: string[] };
    assert.equal(paidRequests(emu).length, paid + 1);
    assert.deepEqual(
      structured.files.map((f) => f.path),
      ['art/scene.region-1.jpg'],
    );
    assert.deepEqual(structured.masks, ['art/scene.region-1.mask.png']);
    assert.match(textOf(result), /saved as JPEG: every pixel is re-compressed/);
    const bytes = await fs.readFile(path.join(workspace, 'art', 'scene.region-1.jpg'));
    assert.deepEqual([...bytes.subarray(0, 3)], [0xff, 0xd8, 0xff]);
    const decoded = await decodeImage(bytes);
    assert.deepEqual([decoded.width, decoded.height], [W, H]);
    const mask = await fs.readFile(path.join(workspace, 'art', 'scene.region-1.mask.png'));
    assert.deepEqual([...mask.subarray(1, 4)], [0x50, 0x4e, 0x47]);
    assert.ok(!existsSync(path.join(workspace, 'art', 'scene.region-1.png')), 'the answer went: one result file');
  });
});
