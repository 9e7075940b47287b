// The MCP server as its clients see it: the SDK's own Client starts `node dist/mcp.js` over stdio
// and drives it against the emulator on loopback. Nothing is mocked. Needs `npm run build` first.
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { JsonSchemaType } from '@modelcontextprotocol/sdk/validation/types.js';
import { findImageModel } from '../../tools/emulator';
import { renderImage } from '../../tools/emulator/render';
import { listFiles, paidRequests, removeDir, type RunningEmulator, startEmulator, tempDir } from './support/gateway';
import { launch, SERVER, type ServerOutput, type ToolResult } from './support/mcp';

/** The PNG the emulator renders for a 64×64 request without options (its renderer is deterministic for a seed). */
function emulatorPng(model: string, prompt: string, seed: number, index: number): Buffer {
  return renderImage(
    { model: findImageModel(model)!, prompt, seed, width: 64, height: 64, transparent: false, referencesDigest: '', extra: JSON.stringify(['', {}]) },
    index,
  );
}

describe('MCP server (dist/mcp.js over stdio, SDK client, emulator)', function () {
  this.timeout(30_000);
  let emu: RunningEmulator;
  let workspace: string;
  let outside: string;
  let recovery: string;
  let client: Client;
  let output: ServerOutput;
  // A key that exists only in this test: it must appear nowhere the server writes.
  const sentinel = `gw-sentinel-${randomBytes(12).toString('hex')}`;

  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolResult;
  const textOf = (result: ToolResult) =>
    result.content
      .filter((c) => c.type === 'text')
      .map((c) => c.text)
      .join('\n');
  /** A refusal: a tool error (isError) whose text names the field; nothing sent. */
  const refused = async (name: string, args: Record<string, unknown>) => {
    const result = await call(name, args);
    assert.equal(result.isError, true, `${name} accepted ${JSON.stringify(args)}`);
    return { text: textOf(result), error: result.structuredContent?.error as { field?: string; allowed?: unknown[]; kind: string } | undefined };
  };

  before(async function () {
    if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run "npm run build" first.`);
    emu = await startEmulator();
    emu.state.addKey(sentinel, 'budget');
    workspace = await fs.realpath(await tempDir('gwi-mcp-ws-'));
    outside = await fs.realpath(await tempDir('gwi-mcp-outside-'));
    recovery = await tempDir('gwi-mcp-recovery-');
    await fs.symlink(outside, path.join(workspace, 'escape'), 'dir');
    const server = await launch({
      GATEWAY_IMAGES_BASE_URL: emu.url,
      GATEWAY_IMAGES_API_KEY: sentinel,
      GATEWAY_IMAGES_WORKSPACE: workspace,
      GATEWAY_IMAGES_MAX_COST_PER_CALL: '10',
      GATEWAY_IMAGES_MAX_COST_PER_SESSION: '12',
      GATEWAY_IMAGES_RECOVERY_DIR: recovery,
      // Byte equality with the emulator needs the files as sent: no provenance chunk.
      GATEWAY_IMAGES_EMBED_PROVENANCE: '0',
    });
    client = server.client;
    output = server.output;
  });

  after(async () => {
    await client?.close();
    await emu?.close();
    await Promise.all([workspace, outside, recovery].map((d) => removeDir(d)));
  });

  it('lists the six tools, each with a JSON schema that refuses unknown arguments', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ['list_models', 'list_styles', 'estimate_cost', 'generate_image', 'edit_image', 'get_account'],
    );
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object');
      assert.equal((tool.inputSchema as { additionalProperties?: unknown }).additionalProperties, false, tool.name);
      assert.ok(tool.description && tool.description.length > 40, tool.name);
    }
    assert.deepEqual(tools.find((t) => t.name === 'generate_image')?.inputSchema.required, ['prompt']);
  });

  it('list_models filters by edit support and price, and reports the session allowance', async () => {
    const result = await call('list_models', { supports_edit: true, max_price_per_image: 5 });
    const models = (result.structuredContent?.models as { id: string; max_price_per_image: number }[]).map((m) => m.id).sort();
    assert.deepEqual(models, ['aurora-1', 'retouch-pro', 'vector-forge'].filter((id) => findImageModel(id)!.max_price_per_image <= 5).sort());
    assert.match(textOf(result), /Spending cap: ₽12\.00 left of ₽12\.00/);
    assert.equal(paidRequests(emu).length, 0);
  });

  it('estimate_cost gives the reservation and range and sends no paid request', async () => {
    const result = await call('estimate_cost', { model: 'aurora-1', n: 2 });
    const estimate = result.structuredContent?.estimate as { reservation: number; expectedMin: number; expectedMax: number };
    assert.deepEqual(estimate, { n: 2, reservation: 8, expectedMin: 5, expectedMax: 8 });
    assert.equal(result.structuredContent?.allowed, true);
    assert.match(textOf(result), /reserves ₽8\.00.*expected ₽5\.00–₽8\.00\. Nothing was sent\./);
    assert.equal(paidRequests(emu).length, 0);
    assert.equal(emu.state.requests.filter((r) => r.path.startsWith('/v1/images')).length, 0);
  });

  it("generate_image saves a file byte-equal to the emulator's image and reports cost, balance and allowance", async () => {
    const notes: string[] = [];
    const result = (await client.callTool(
      { name: 'generate_image', arguments: { prompt: 'A red fox in snow', model: 'aurora-1', size: '64x64', seed: 7 } },
      undefined,
      {
        onprogress: (p) => notes.push(p.message ?? ''),
      },
    )) as ToolResult;
    assert.ok(!result.isError, textOf(result));
    assert.deepEqual(notes.slice(0, 3), [
      'Reserved ₽4.00 of the spending cap for aurora-1; sending.',
      'Sent; waiting for the gateway.',
      'The gateway answered (it has charged); receiving 1 image(s).',
    ]);
    assert.match(notes[3]!, /^Image 1 of 1 saved: generated-images\/.+\.png\.$/);
    assert.equal(notes.length, 4);
    const files = result.structuredContent?.files as { path: string; uri: string }[];
    assert.equal(files.length, 1);
    assert.match(files[0]!.path, /^generated-images\/\d{4}-\d{2}-\d{2}-a-red-fox-in-snow-aurora-1-1\.png$/);
    const saved = path.join(workspace, files[0]!.path);
    assert.equal(files[0]!.uri, `file://${saved}`);
    assert.ok((await fs.readFile(saved)).equals(emulatorPng('aurora-1', 'A red fox in snow', 7, 0)), "the saved image differs from the emulator's");
    const paid = paidRequests(emu);
    assert.equal(paid.length, 1);
    assert.equal(result.structuredContent?.cost_rub, paid[0]!.chargedRub);
    assert.equal(result.structuredContent?.balance_rub, emu.state.balanceRub);
    const cap = result.structuredContent?.spendingCap as { spentThisSession: number; remainingThisSession: number };
    assert.equal(cap.spentThisSession, paid[0]!.chargedRub);
    assert.equal(Math.round(cap.remainingThisSession * 100), 1200 - Math.round(paid[0]!.chargedRub * 100));
    assert.match(textOf(result), new RegExp(`Cost ₽${paid[0]!.chargedRub.toFixed(2).replace('.', '\\.')}`));
    // A clickable link to the saved file (the SDK's client speaks a protocol with resource links).
    assert.deepEqual(
      result.content.filter((c) => c.type === 'resource_link'),
      [{ type: 'resource_link', uri: files[0]!.uri, name: files[0]!.path, mimeType: 'image/png' }],
    );
    // A small preview, not the image itself.
    const preview = result.content.find((c) => c.type === 'image');
    assert.equal(preview?.mimeType, 'image/png');
    const png = Buffer.from(preview.data!, 'base64');
    assert.ok(png.readUInt32BE(16) <= 128 && png.readUInt32BE(20) <= 128);
  });

  it('edit_image takes workspace-relative images and saves next to the first', async () => {
    await fs.mkdir(path.join(workspace, 'art'));
    await fs.writeFile(path.join(workspace, 'art', 'photo.png'), emulatorPng('aurora-1', 'source', 1, 0));
    const before = paidRequests(emu).length;
    const result = await call('edit_image', { prompt: 'Make it night', images: ['art/photo.png'], model: 'aurora-1', size: '64x64' });
    assert.ok(!result.isError, textOf(result));
    assert.deepEqual(
      (result.structuredContent?.files as { path: string }[]).map((f) => f.path),
      ['art/photo.edit-1.png'],
    );
    assert.equal(paidRequests(emu).length, before + 1);
  });

  it('refuses above the per-call cap and above the session total before sending, with the figures', async () => {
    const before = paidRequests(emu).length;
    const perCall = await call('generate_image', { prompt: 'x', model: 'lumen-xl', size: '64x64' });
    assert.equal(perCall.isError, true);
    assert.equal(perCall.structuredContent?.refusedBy, 'maxCostPerCall');
    assert.match(textOf(perCall), /reserves ₽12\.50, above the per-call cap of ₽10\.00/);
    const bySession = await call('generate_image', { prompt: 'x', model: 'prism-2', size: '64x64' });
    assert.equal(bySession.isError, true, textOf(bySession));
    assert.equal(bySession.structuredContent?.refusedBy, 'maxCostPerSession');
    assert.match(textOf(bySession), /reserves ₽9\.80, but only ₽\d+\.\d\d of the session cap of ₽12\.00 is left/);
    assert.equal(paidRequests(emu).length, before, 'a refused call reached the gateway');
    // estimate_cost says so too, without sending.
    const estimate = await call('estimate_cost', { model: 'prism-2' });
    assert.equal(estimate.structuredContent?.allowed, false);
    assert.equal(paidRequests(emu).length, before);
  });

  it('bad arguments are refused as a tool error naming the field and what is allowed, before anything is sent', async () => {
    const before = emu.state.requests.length;
    const wrongType = await refused('generate_image', { prompt: 'x', n: 'two' });
    assert.match(wrongType.text, /"n" must be a whole number from 1 to 10; got "two"/);
    const unknown = await refused('generate_image', { prompt: 'x', colour: 'red' });
    assert.match(unknown.text, /Unknown argument "colour"\. Allowed: prompt, model, n, .*aspect_ratio/);
    const missing = await refused('edit_image', { prompt: 'x' });
    assert.match(missing.text, /"images" is required/);
    const quality = await refused('generate_image', { prompt: 'x', quality: 'ultra' });
    assert.match(quality.text, /"quality" must be one of low, medium, high, auto; got "ultra"/);
    assert.equal(emu.state.requests.length, before, 'a schema error reached the network');
    // The model's own lists (from the catalog, a free request) are checked before paying too.
    const resolution = await refused('generate_image', { prompt: 'x', model: 'aurora-1', resolution: '8K' });
    assert.equal(resolution.error?.field, 'resolution');
    assert.ok(resolution.error?.allowed?.length);
    assert.match(resolution.text, /Nothing was sent\./);
    assert.equal(paidRequests(emu).length, 2);
  });

  it('refuses paths outside the workspace root: .., absolute, and through a symbolic link; estimate_cost refuses them alike', async () => {
    const before = paidRequests(emu).length;
    for (const output_directory of ['../elsewhere', outside, 'escape/inner', 'a/../../elsewhere']) {
      for (const tool of ['generate_image', 'estimate_cost']) {
        const { text, error } = await refused(tool, { prompt: 'x', model: 'aurora-1', size: '64x64', output_directory });
        assert.equal(error?.field, 'output_directory', `${tool} ${output_directory}`);
        assert.match(text, /outside the workspace folder/);
      }
    }
    await fs.writeFile(path.join(outside, 'secret.png'), emulatorPng('aurora-1', 'secret', 1, 0));
    for (const image of ['../secret.png', path.join(outside, 'secret.png'), 'escape/secret.png']) {
      for (const tool of ['edit_image', 'estimate_cost']) {
        const { error } = await refused(tool, { prompt: 'x', images: [image], model: 'aurora-1' });
        assert.equal(error?.field, 'images', `${tool} ${image}`);
      }
    }
    assert.equal(paidRequests(emu).length, before);
    assert.deepEqual(await listFiles(outside), ['secret.png']);
  });

  it('estimate_cost takes the very arguments of generate_image and edit_image, and is exactly as strict', async () => {
    const before = paidRequests(emu).length;
    const generate = { prompt: 'A red fox in snow', model: 'aurora-1', size: '64x64', seed: 7, output_directory: 'art/new' };
    const estimate = await call('estimate_cost', generate);
    assert.ok(!estimate.isError, textOf(estimate));
    assert.equal((estimate.structuredContent?.estimate as { reservation: number }).reservation, 4);
    assert.match(textOf(estimate), /generate_image would be sent/);
    const edit = { prompt: 'Make it night', images: ['art/photo.png'], model: 'aurora-1', size: '64x64' };
    const editEstimate = await call('estimate_cost', edit);
    assert.ok(!editEstimate.isError, textOf(editEstimate));
    assert.match(textOf(editEstimate), /edit_image would be sent/);
    // What the paid call refuses, the estimate refuses, naming the same field.
    for (const [tool, args, field] of [
      ['generate_image', { ...generate, size: '1024х1024' }, 'size'],
      ['generate_image', { ...generate, prompt: '   ' }, 'prompt'],
      ['edit_image', { ...edit, images: ['art/missing.png'] }, 'images'],
      ['edit_image', { ...edit, model: 'sketch-mini' }, 'input_references'],
    ] as const) {
      const paid = await refused(tool, args);
      const free = await refused('estimate_cost', args);
      assert.equal(free.error?.field, paid.error?.field, `${tool} ${JSON.stringify(args)}`);
      assert.equal(free.error?.field, field);
    }
    assert.equal(paidRequests(emu).length, before, 'an estimate or a refusal was sent');
    assert.ok(!existsSync(path.join(workspace, 'art', 'new')), 'the estimate made the output folder');
  });

  it('get_account reports balance, budget, expiry and stats', async () => {
    const result = await call('get_account', {});
    assert.ok(!result.isError, textOf(result));
    assert.equal((result.structuredContent?.balance as { balance: number }).balance, emu.state.balanceRub);
    assert.match(textOf(result), /budget ₽[\d,.]+ left of ₽1,000\.00, resets monthly/);
    assert.match(textOf(result), /The key does not expire\./);
    assert.match(textOf(result), /Spending cap:/);
  });

  it("the key appears nowhere in the server's stderr, its output or the files it wrote", async () => {
    const { stderr, received } = output;
    assert.ok(stderr.includes('POST /v1/images/generations 200'), 'stderr was not captured');
    assert.ok(received.length > 10, 'stdout was not captured');
    assert.ok(!stderr.includes(sentinel), 'the key is in stderr');
    assert.ok(!received.some((m) => m.includes(sentinel)), 'the key is in the output');
    for (const dir of [workspace, recovery]) {
      for (const file of await listFiles(dir)) {
        const bytes = await fs.readFile(path.join(dir, file)).catch(() => Buffer.alloc(0));
        assert.ok(!bytes.includes(sentinel), `the key is in ${file}`);
      }
    }
  });

  it("every answer of this session carries structuredContent that matches its tool's outputSchema (JSON Schema, ajv)", async () => {
    // A workspace without a styles file: list_styles answers with the built-in starter styles (issue 42).
    const listed = (await call('list_styles', {})).structuredContent as { builtIn?: boolean; file?: string; styles?: { name: string }[] };
    assert.equal(listed.builtIn, true);
    assert.equal(listed.file, 'built-in styles');
    assert.ok(
      listed.styles?.some((s) => s.name === 'Sketch'),
      JSON.stringify(listed.styles),
    );
    const { tools } = await client.listTools();
    const validator = new AjvJsonSchemaValidator();
    const check = new Map(tools.map((t) => [t.name, validator.getValidator(t.outputSchema as JsonSchemaType)]));
    assert.equal(check.size, 6);
    for (const tool of tools) assert.equal(tool.outputSchema?.type, 'object', `${tool.name} has no outputSchema`);
    const called = new Map<number, string>();
    for (const line of output.sent) {
      const message = JSON.parse(line) as { id?: number; method?: string; params?: { name?: string } };
      if (message.method === 'tools/call' && typeof message.id === 'number') called.set(message.id, message.params!.name!);
    }
    const seen = { ok: new Set<string>(), failed: new Set<string>() };
    for (const line of output.received) {
      const message = JSON.parse(line) as { id?: number; result?: ToolResult };
      const tool = message.id === undefined ? undefined : called.get(message.id);
      if (!tool || !message.result) continue;
      // Only the SDK's own refusals of malformed arguments come without structuredContent.
      if (!message.result.structuredContent) {
        assert.ok(
          message.result.isError && /Input validation error: Invalid arguments for tool/.test(textOf(message.result)),
          `${tool}: ${textOf(message.result)}`,
        );
        continue;
      }
      const verdict = check.get(tool)!(message.result.structuredContent);
      assert.ok(verdict.valid, `${tool}: ${verdict.errorMessage} in ${JSON.stringify(message.result.structuredContent).slice(0, 300)}`);
      (message.result.isError ? seen.failed : seen.ok).add(tool);
    }
    assert.deepEqual([...seen.ok].sort(), ['edit_image', 'estimate_cost', 'generate_image', 'get_account', 'list_models', 'list_styles']);
    assert.deepEqual([...seen.failed].sort(), ['edit_image', 'estimate_cost', 'generate_image']);
  });
});
