// Project styles through the MCP server: list_styles, and estimate_cost / generate_image with a
// `style`, by the SDK's own Client over stdio against the emulator. Needs `npm run build` first.
import * as assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { JsonSchemaType } from '@modelcontextprotocol/sdk/validation/types.js';
import { readPngTextChunk } from '../../src/core/files/pngText';
import { DEMO_KEYS, paidRequests, removeDir, type RunningEmulator, startEmulator, tempDir, TINY_PNG } from './support/gateway';
import { launch, SERVER, type ToolResult } from './support/mcp';

const STYLES = {
  styles: {
    base: { promptSuffix: ', flat colours', options: { seed: 5 } },
    // retouch-pro only edits: a request with this style is accepted only when the style's reference goes with it.
    retouch: {
      extends: 'base',
      description: 'Retouched look for the docs',
      model: 'retouch-pro',
      promptPrefix: 'Retouched:',
      options: { size: '64x64' },
      references: ['style/ref.png'],
      outputFolder: 'docs/art',
      fileNamePattern: '{slug}-{seed}-{index}',
    },
    broken: { model: 'aurora-1', options: { aspect_ratio: '21:9' } },
  },
};

describe('MCP server: project styles', function () {
  this.timeout(30_000);
  let emu: RunningEmulator;
  let workspace: string;
  let recovery: string;
  const clients: Client[] = [];

  const start = async (trusted: boolean): Promise<Client> => {
    const { client } = await launch({
      GATEWAY_IMAGES_BASE_URL: emu.url,
      GATEWAY_IMAGES_API_KEY: DEMO_KEYS.unlimited,
      GATEWAY_IMAGES_WORKSPACE: workspace,
      GATEWAY_IMAGES_RECOVERY_DIR: recovery,
      ...(trusted ? {} : { GATEWAY_IMAGES_WORKSPACE_TRUSTED: '0' }),
    });
    clients.push(client);
    return client;
  };
  const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolResult;
  const textOf = (result: ToolResult) => result.content.map((c) => c.text ?? '').join('\n');

  before(async () => {
    if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run "npm run build" first.`);
    emu = await startEmulator();
    workspace = await fs.realpath(await tempDir('gwi-mcp-styles-'));
    recovery = await tempDir('gwi-mcp-styles-recovery-');
    await fs.mkdir(path.join(workspace, '.gateway-images'));
    await fs.mkdir(path.join(workspace, 'style'));
    await fs.writeFile(path.join(workspace, '.gateway-images', 'styles.json'), JSON.stringify(STYLES));
    await fs.writeFile(path.join(workspace, 'style', 'ref.png'), TINY_PNG);
  });

  after(async () => {
    for (const client of clients) await client.close();
    await emu?.close();
    await Promise.all([workspace, recovery].map((d) => removeDir(d)));
  });

  it('list_styles gives each style with extends applied, and why a broken one cannot be used', async () => {
    const client = await start(true);
    const result = await call(client, 'list_styles', {});
    assert.equal(result.isError, undefined, textOf(result));
    const { file, styles } = result.structuredContent as { file: string; styles: { name: string; values?: Record<string, unknown>; error?: string }[] };
    assert.equal(file, '.gateway-images/styles.json');
    assert.deepEqual(
      styles.map((s) => s.name),
      ['base', 'retouch', 'broken'],
    );
    const retouch = styles.find((s) => s.name === 'retouch')!;
    assert.equal(retouch.values?.promptSuffix, ', flat colours');
    assert.deepEqual(retouch.values?.options, { seed: 5, size: '64x64' });
    assert.match(textOf(result), /- retouch: Retouched look for the docs \(model retouch-pro\)/);
    // A style's problem with the catalog shows when it is used (below), not in the listing.
    assert.equal(paidRequests(emu).length, 0);
  });

  it('estimate_cost shows the request as it would be sent: the final prompt, the options, the style reference', async () => {
    const client = await start(true);
    const result = await call(client, 'estimate_cost', { prompt: 'a lighthouse', style: 'retouch' });
    assert.equal(result.isError, undefined, textOf(result));
    const structured = result.structuredContent as { request: Record<string, unknown>; references: string[]; style: string; model: string };
    assert.deepEqual(structured.request, { model: 'retouch-pro', prompt: 'Retouched: a lighthouse, flat colours', seed: 5, size: '64x64' });
    assert.deepEqual(structured.references, ['style/ref.png']);
    assert.equal(structured.style, 'retouch');
    assert.match(textOf(result), /Style retouch: the prompt sent is "Retouched: a lighthouse, flat colours"\./);
    assert.equal(paidRequests(emu).length, 0);
  });

  it('generate_image with a style sends its prompt, model, options and reference, saves into its folder by its pattern, and records the style', async () => {
    const client = await start(true);
    const before = paidRequests(emu).length;
    const result = await call(client, 'generate_image', { prompt: 'a lighthouse', style: 'retouch' });
    assert.equal(result.isError, undefined, textOf(result));
    const sent = paidRequests(emu).slice(before);
    assert.equal(sent.length, 1);
    // retouch-pro only edits: the emulator accepted it, so the style's reference went with it.
    assert.equal(sent[0]!.status, 200);
    assert.equal(sent[0]!.prompt, 'Retouched: a lighthouse, flat colours');
    const { files, style } = result.structuredContent as { files: { path: string }[]; style: string };
    assert.equal(style, 'retouch');
    assert.deepEqual(
      files.map((f) => f.path),
      ['docs/art/retouched-a-lighthouse-flat-colours-5-1.png'],
    );
    const record = JSON.parse((await readPngTextChunk(path.join(workspace, files[0]!.path), 'gateway-images'))!);
    assert.equal(record.references, 1);
    assert.equal(record.style.name, 'retouch');
    assert.deepEqual(record.style.values.references, ['style/ref.png']);
    assert.equal(record.style.values.promptPrefix, 'Retouched:');
  });

  it('a bad style is refused before sending, naming the file, the style and the field', async () => {
    const client = await start(true);
    const before = paidRequests(emu).length;
    const result = await call(client, 'generate_image', { prompt: 'x', style: 'broken' });
    assert.equal(result.isError, true);
    const error = result.structuredContent?.error as { field: string; message: string; allowed: string[] };
    assert.equal(error.field, 'style.options.aspect_ratio');
    assert.match(error.message, /\.gateway-images\/styles\.json, style "broken", "options\.aspect_ratio": "aspect_ratio" must be one of 1:1, 16:9/);
    assert.match(textOf(result), /Nothing was sent/);
    const unknown = await call(client, 'estimate_cost', { style: 'nope' });
    assert.match((unknown.structuredContent?.error as { message: string }).message, /has no style "nope"; its styles: base, retouch, broken/);
    assert.equal(paidRequests(emu).length, before);
  });

  it('an untrusted workspace (VS Code says so): styles are listed and estimated, but a paid call with one is refused', async () => {
    const client = await start(false);
    const before = paidRequests(emu).length;
    const listed = await call(client, 'list_styles', {});
    assert.equal((listed.structuredContent as { trusted: boolean }).trusted, false);
    assert.equal((await call(client, 'estimate_cost', { prompt: 'x', style: 'retouch' })).isError, undefined);
    const refused = await call(client, 'generate_image', { prompt: 'x', style: 'retouch' });
    assert.equal(refused.isError, true);
    assert.equal((refused.structuredContent?.error as { field: string }).field, 'style');
    assert.match(textOf(refused), /not trusted in VS Code, and a style from it does not send on its own/);
    assert.equal(paidRequests(emu).length, before);
  });

  it('without a styles file: list_styles gives the built-in starter styles, and one applies by name (issue 42)', async () => {
    const bare = await fs.realpath(await tempDir('gwi-mcp-nostyles-'));
    try {
      const { client } = await launch({
        GATEWAY_IMAGES_BASE_URL: emu.url,
        GATEWAY_IMAGES_API_KEY: DEMO_KEYS.unlimited,
        GATEWAY_IMAGES_WORKSPACE: bare,
        GATEWAY_IMAGES_RECOVERY_DIR: recovery,
      });
      clients.push(client);
      const listed = await call(client, 'list_styles', {});
      const { file, builtIn, styles } = listed.structuredContent as { file: string; builtIn?: boolean; styles: { name: string }[] };
      assert.equal(builtIn, true);
      assert.equal(file, 'built-in styles');
      assert.ok(
        styles.some((s) => s.name === 'Sketch'),
        textOf(listed),
      );
      assert.match(textOf(listed), /no styles file/);
      const estimate = await call(client, 'estimate_cost', { prompt: 'A kite', style: 'Sketch' });
      assert.equal(estimate.isError, undefined, textOf(estimate));
      assert.match(JSON.stringify(estimate.structuredContent), /A kite, loose pencil sketch/);
    } finally {
      await removeDir(bare);
    }
    // With a styles file, a starter's name is no style: the project's are never replaced.
    const client = await start(true);
    const refused = await call(client, 'estimate_cost', { prompt: 'x', style: 'Sketch' });
    assert.match((refused.structuredContent?.error as { message: string }).message, /has no style "Sketch"; its styles: base, retouch, broken/);
  });

  it("the answers with styles match their tools' outputSchema (JSON Schema, ajv)", async () => {
    const client = await start(true);
    const { tools } = await client.listTools();
    const validator = new AjvJsonSchemaValidator();
    const schemaOf = (name: string) => validator.getValidator(tools.find((t) => t.name === name)!.outputSchema as JsonSchemaType);
    for (const [name, args] of [
      ['list_styles', {}],
      ['estimate_cost', { prompt: 'x', style: 'retouch' }],
      ['generate_image', { prompt: 'a schema check', style: 'retouch' }],
      ['generate_image', { prompt: 'x', style: 'broken' }],
    ] as const) {
      const result = await call(client, name, args);
      const verdict = schemaOf(name)(result.structuredContent);
      assert.ok(verdict.valid, `${name}: ${verdict.errorMessage} in ${JSON.stringify(result.structuredContent).slice(0, 300)}`);
    }
  });
});
