// The MCP server's output folders go through the extension's one rule (core/files/outputFolder.ts, the
// origin of an agent): edit_image and generate_image with `output_directory` through real symbolic
// links, the default next to an edit's first image, and a style's folder. Driven by the SDK's own
// Client over stdio against the emulator. Needs `npm run build` first.
import * as assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { DEMO_KEYS, listFiles, paidRequests, removeDir, type RunningEmulator, startEmulator, tempDir, TINY_PNG } from './support/gateway';
import { launch, SERVER, type ToolResult } from './support/mcp';

describe('MCP server: output folders through symbolic links', function () {
  this.timeout(30_000);
  let emu: RunningEmulator;
  let workspace: string;
  let outside: string;
  let recovery: string;
  let client: Client;

  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolResult;
  const textOf = (result: ToolResult) => result.content.map((c) => c.text ?? '').join('\n');
  const filesOf = (result: ToolResult) => (result.structuredContent?.files as { path: string }[]).map((f) => f.path);

  before(async () => {
    if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run "npm run build" first.`);
    emu = await startEmulator();
    workspace = await fs.realpath(await tempDir('gwi-mcp-folders-'));
    outside = await fs.realpath(await tempDir('gwi-mcp-folders-outside-'));
    recovery = await tempDir('gwi-mcp-folders-recovery-');
    await fs.mkdir(path.join(workspace, 'art', 'real'), { recursive: true });
    await fs.writeFile(path.join(workspace, 'art', 'photo.png'), TINY_PNG);
    await fs.writeFile(path.join(workspace, 'art', 'real', 'inner.png'), TINY_PNG);
    // What a repository can ship: a link out, one whose target is not made yet, a chain out, and a link that stays inside.
    await fs.symlink(outside, path.join(workspace, 'shared'), 'dir');
    await fs.symlink(path.join(outside, 'later'), path.join(workspace, 'dangling'), 'dir');
    await fs.symlink(path.join(workspace, 'shared'), path.join(workspace, 'chain'), 'dir');
    await fs.symlink(path.join(workspace, 'art', 'real'), path.join(workspace, 'pictures'), 'dir');
    await fs.mkdir(path.join(workspace, '.gateway-images'));
    const styles = { styles: { leaky: { model: 'aurora-1', outputFolder: 'shared/docs' }, docs: { model: 'aurora-1', outputFolder: 'pictures/docs' } } };
    await fs.writeFile(path.join(workspace, '.gateway-images', 'styles.json'), JSON.stringify(styles));
    ({ client } = await launch({
      GATEWAY_IMAGES_BASE_URL: emu.url,
      GATEWAY_IMAGES_API_KEY: DEMO_KEYS.unlimited,
      GATEWAY_IMAGES_WORKSPACE: workspace,
      GATEWAY_IMAGES_RECOVERY_DIR: recovery,
      GATEWAY_IMAGES_EMBED_PROVENANCE: '0',
    }));
  });

  after(async () => {
    await client?.close();
    await emu?.close();
    await Promise.all([workspace, outside, recovery].map((d) => removeDir(d)));
  });

  it('edit_image and generate_image refuse an output_directory that a link leads outside (also one not made yet, and a chain), before anything is sent', async () => {
    for (const output_directory of ['shared', 'shared/edits', 'dangling/new', 'chain/x', path.join(workspace, 'shared')]) {
      for (const [tool, extra] of [
        ['edit_image', { images: ['art/photo.png'] }],
        ['generate_image', {}],
      ] as const) {
        const result = await call(tool, { prompt: 'x', model: 'aurora-1', size: '64x64', output_directory, ...extra });
        assert.equal(result.isError, true, `${tool} ${output_directory} accepted`);
        const error = result.structuredContent?.error as { field?: string; kind: string };
        assert.equal(error.field, 'output_directory', `${tool} ${output_directory}`);
        assert.equal(error.kind, 'validation');
        assert.match(textOf(result), /leads outside the workspace folder through a symbolic link/);
      }
    }
    assert.equal(paidRequests(emu).length, 0, 'a refused call was paid');
    assert.deepEqual(await listFiles(outside), [], 'something was written outside');
  });

  it('edit_image: a relative output_directory inside works; next to an image in a folder linked inside the workspace is that folder, at its real place', async () => {
    const edited = await call('edit_image', { prompt: 'Night', images: ['art/photo.png'], model: 'aurora-1', size: '64x64', output_directory: 'art/edits' });
    assert.ok(!edited.isError, textOf(edited));
    assert.deepEqual(filesOf(edited), ['art/edits/photo.edit-1.png']);
    const throughLink = await call('edit_image', { prompt: 'Night', images: ['pictures/inner.png'], model: 'aurora-1', size: '64x64' });
    assert.ok(!throughLink.isError, textOf(throughLink));
    assert.deepEqual(filesOf(throughLink), ['art/real/inner.edit-1.png']);
    assert.equal(paidRequests(emu).length, 2);
  });

  it("a style's folder goes through the same rule: a link out is refused naming the style's field, one that stays inside works", async () => {
    const before = paidRequests(emu).length;
    const leaky = await call('generate_image', { prompt: 'x', style: 'leaky', size: '64x64' });
    assert.equal(leaky.isError, true, textOf(leaky));
    assert.equal((leaky.structuredContent?.error as { field?: string }).field, 'style.outputFolder');
    assert.match(textOf(leaky), /style "leaky", "outputFolder": shared\/docs leads outside the workspace folder through a symbolic link/);
    assert.equal(paidRequests(emu).length, before);
    const docs = await call('generate_image', { prompt: 'A harbour', style: 'docs', size: '64x64' });
    assert.ok(!docs.isError, textOf(docs));
    assert.match(filesOf(docs)[0]!, /^art\/real\/docs\/[^/]+\.png$/);
    assert.deepEqual(await listFiles(outside), []);
  });
});
