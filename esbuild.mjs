// Bundles the extension host (node) and the webview app (browser).
// Type-checking is separate (`tsc --noEmit`); esbuild only transpiles and bundles.
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import undiciMend from './scripts/undiciMend.cjs';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

/** Prints errors as file:line:col so editors can jump to them. */
const problemMatcher = {
  name: 'problem-matcher',
  setup(build) {
    build.onEnd((result) => {
      for (const { text, location } of result.errors) {
        console.error(`✘ [ERROR] ${text}`);
        if (location) console.error(`    ${location.file}:${location.line}:${location.column}:`);
      }
    });
  },
};

/**
 * Modules that several bundles must share at run time: each is its own file in dist/ and every
 * bundle requires it instead of inlining a copy. errors.ts: one class identity for `instanceof`.
 * @vscode/l10n and core/common/plural.ts: one translation state, configured once at activation
 * (src/host/l10n.ts) and seen by extension.js, errors.js and gateway.js alike.
 * jobs/comparisonFeed.ts: the one comparison in progress, started by the command in extension.js
 * and shown (and cancelled) by the studio's panel in studioHost.js. host/onboarding.ts: the
 * walkthrough's state, set up at activation and marked by a job started from the studio too.
 * Keys: a source file (relative to the repository) or a package name; values: the entry name in dist/.
 */
const sharedModules = {
  'src/core/gateway/errors.ts': 'errors',
  'src/core/common/plural.ts': 'plural',
  '@vscode/l10n': 'l10n',
  'src/jobs/comparisonFeed.ts': 'comparisonFeed',
  'src/host/onboarding.ts': 'onboarding',
};
const shareModules = {
  name: 'share-modules',
  setup(build) {
    build.onResolve({ filter: /(\/errors|\/plural|\/comparisonFeed|\/onboarding|^@vscode\/l10n)$/ }, async (args) => {
      if (args.pluginData?.shared || args.kind === 'entry-point') return undefined;
      if (args.path in sharedModules) {
        const target = sharedModules[args.path];
        return build.initialOptions.entryPoints?.[target] ? undefined : { path: `./${target}.js`, external: true };
      }
      const resolved = await build.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, pluginData: { shared: true } });
      const relative = path.relative(process.cwd(), resolved.path).split(path.sep).join('/');
      const target = sharedModules[relative];
      return target && !build.initialOptions.entryPoints?.[target] ? { path: `./${target}.js`, external: true } : undefined;
    });
  },
};

/**
 * dist/mcp.js only: parts of the SDK this server never runs, replaced by stubs that throw if they
 * ever were (the server tests would then fail):
 * - ajv (~130 KB), used by the SDK's Server solely to check elicitation answers, which this server
 *   never asks for (it passes its own validator, see mcpServer.ts). Tool answers are checked with zod.
 * - zod 3 and zod-to-json-schema (~80 KB): the SDK accepts zod 3 schemas too; this server's are zod 4
 *   (toolDefinitions.ts), which the SDK converts with zod 4's own toJSONSchema.
 */
const stubs = [
  { filter: /\/validation\/ajv-provider\.js$/, name: 'ajv-provider', exports: ['AjvJsonSchemaValidator'] },
  { filter: /^zod\/v3$/, name: 'zod-v3', exports: ['object'] },
  { filter: /^zod-to-json-schema$/, name: 'zod-to-json-schema', exports: ['zodToJsonSchema'] },
];
const withoutUnusedSdkParts = {
  name: 'without-unused-sdk-parts',
  setup(build) {
    for (const stub of stubs) {
      build.onResolve({ filter: stub.filter }, (args) =>
        args.importer.includes('@modelcontextprotocol') ? { path: stub.name, namespace: 'unused-sdk-part' } : undefined,
      );
    }
    build.onLoad({ filter: /.*/, namespace: 'unused-sdk-part' }, (args) => {
      const stub = stubs.find((s) => s.name === args.path);
      const fail = `() => { throw new Error("${args.path} is not bundled into dist/mcp.js"); }`;
      return {
        contents: stub.exports.map((name) => `export const ${name} = new Proxy(function () {}, { construct: ${fail}, apply: ${fail} });`).join('\n'),
        loader: 'js',
      };
    });
  },
};

/**
 * dist/mcp.js only: the region edit's image work (codecs, composite, the JPEG encoder) is required from
 * ./regionEdit.js, the extension's own chunk, rather than bundled a second time: the .vsix keeps one copy.
 */
const regionEditShared = {
  name: 'region-edit-shared',
  setup(build) {
    build.onResolve({ filter: /\/jobs\/regionEdit$/ }, () => ({ path: './regionEdit.js', external: true }));
  },
};

/**
 * Bundles undici mended for nodejs/undici#5360 (patches/undici@7.30.2.patch, scripts/undiciMend.cjs):
 * the patch is applied to the code as esbuild reads it; node_modules is never written. A patch that
 * does not apply fails the build; an undici with its own fix is bundled as it is, with a warning.
 */
const mendUndici = {
  name: 'mend-undici',
  setup(build) {
    build.onLoad({ filter: undiciMend.CLIENT_H1 }, async (args) => {
      const { code, outcome } = undiciMend.mendUndiciSource(args.path, await readFile(args.path, 'utf8'));
      const warnings = outcome === 'has its own fix' ? [{ text: `${args.path}: undici has its own fix of Parser.finish(); patches/ not applied` }] : [];
      return { contents: code, loader: 'js', warnings };
    });
  },
};

const common = {
  bundle: true,
  // jsonc-parser's `main` is a UMD build whose requires esbuild cannot follow (the bundle fails at
  // run time with "Cannot find module './impl/format'"): its ES module build is bundled instead.
  alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  logLevel: 'warning',
  plugins: [problemMatcher, shareModules, mendUndici],
};

/** A bundle for the extension host (Node, CommonJS). */
const nodeBundle = (name, entry, external = ['vscode'], define = {}, plugins = []) =>
  esbuild.context({
    ...common,
    plugins: [...common.plugins, ...plugins],
    entryPoints: { [name]: entry },
    outdir: 'dist',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external,
    define,
  });
const { version } = JSON.parse(await readFile('package.json', 'utf8'));

const contexts = await Promise.all([
  // Loaded at activation: must stay small. The HTTP stack is required from ./gateway.js on first use.
  nodeBundle('extension', 'src/extension.ts', [
    'vscode',
    './gateway.js',
    './results.js',
    './styles.js',
    './studioHost.js',
    './interrupted.js',
    './promptFiles.js',
    './accountPage.js',
    './moneyAlertCheck.js',
    './findResults.js',
    './writePrompt.js',
    './starterStyles.js',
    './recover.js',
    './compareModels.js',
    './imagePreview.js',
    './chatToolCode.js',
    './regionEdit.js',
  ]),
  nodeBundle('errors', 'src/core/gateway/errors.ts'),
  nodeBundle('comparisonFeed', 'src/jobs/comparisonFeed.ts'),
  nodeBundle('onboarding', 'src/host/onboarding.ts'),
  // The Image Studio's host side (its panel, messages, gallery feed), loaded when the studio first opens.
  nodeBundle('studioHost', 'src/studio/panel/studioPanel.ts', [
    'vscode',
    './gateway.js',
    './results.js',
    './styles.js',
    './writePrompt.js',
    './starterStyles.js',
    './regionEdit.js',
  ]),
  nodeBundle('l10n', '@vscode/l10n'),
  nodeBundle('plural', 'src/core/common/plural.ts'),
  nodeBundle('gateway', 'src/core/client/gatewayBundle.ts'),
  // The results journal's code, loaded when the history is first read (not at activation).
  nodeBundle('results', 'src/jobs/results/resultsBundle.ts'),
  // Generate Images from File's code (claim, plan, confirmation, run, report), loaded when a prompt file is first run.
  nodeBundle('promptFiles', 'src/commands/promptFiles/batchFromFile.ts', ['vscode', './gateway.js', './results.js', './styles.js', './starterStyles.js']),
  // Compare Models… (the models' list, the combined estimate, the run), loaded when the command first runs.
  nodeBundle('compareModels', 'src/commands/images/compareModels.ts', [
    'vscode',
    './gateway.js',
    './results.js',
    './styles.js',
    './starterStyles.js',
    './writePrompt.js',
  ]),
  // The prompt written by the editor's language model (Generate Image for Selection), loaded when first used.
  nodeBundle('writePrompt', 'src/commands/images/writePrompt.ts'),
  // "Save as Project Style…" of a built-in starter style, loaded when first used.
  nodeBundle('starterStyles', 'src/commands/styles/saveStarterStyle.ts', ['vscode', './gateway.js', './results.js', './styles.js', './starterStyles.js']),
  // Recover Unsaved Images (listing, reading kept answers again, moving), loaded when the command first runs.
  nodeBundle('recover', 'src/commands/results/recover.ts', ['vscode', './gateway.js', './results.js', './styles.js']),
  // The Account and Usage page and its spend chart, loaded when the page is first shown.
  nodeBundle('accountPage', 'src/commands/account/accountPage.ts'),
  // The money alerts' check (the rules, the told records, the notification), loaded on the first check after a refresh.
  nodeBundle('moneyAlertCheck', 'src/commands/account/moneyAlertCheck.ts'),
  // Find Image Results… (the palette's search over the results journal), loaded when first used.
  nodeBundle('findResults', 'src/commands/results/findResults.ts', ['vscode', './gateway.js', './results.js', './styles.js']),
  // Project styles (reading, resolving, their schema), loaded when a style is first used.
  nodeBundle('styles', 'src/jobs/stylesBundle.ts'),
  // Settling the jobs a dead extension host left in flight, loaded at start-up only when it left some.
  nodeBundle('interrupted', 'src/jobs/interrupted.ts'),
  // The chat tools' code (confirmations, runs, results), loaded when an agent first uses one.
  nodeBundle('chatToolCode', 'src/chat/toolCode.ts', [
    'vscode',
    './gateway.js',
    './results.js',
    './styles.js',
    './starterStyles.js',
    './imagePreview.js',
    './regionEdit.js',
  ]),
  // The chat tools' previews of their results (JPEG and WebP decoders in WASM), loaded on the first result.
  nodeBundle('imagePreview', 'src/core/files/imagePreview.ts'),
  // A region edit's image work (decoding, the crop, resizing, compositing, PNG encoding), loaded when one is first asked for.
  nodeBundle('regionEdit', 'src/jobs/regionEdit.ts'),
  // The thumbnail worker (a worker thread started by the results chunk).
  nodeBundle('thumbnails', 'src/core/files/thumbnailWorkerMain.ts'),
  // The decode worker (a worker thread per large JPEG or WebP, started by regionEdit.js, imagePreview.js, mcp.js).
  nodeBundle('imageDecodeWorker', 'src/core/images/imageDecodeWorkerMain.ts'),
  // The MCP server (`node dist/mcp.js`), a separate process: never loaded by the extension itself.
  // No 'vscode' external: importing it there fails the build. The HTTP stack comes from ./gateway.js.
  nodeBundle('mcp', 'src/mcp/main.ts', ['./gateway.js'], { MCP_SERVER_VERSION: JSON.stringify(version) }, [withoutUnusedSdkParts, regionEditShared]),
  // The Image Studio page (webview): browser code, no node built-ins.
  esbuild.context({
    ...common,
    entryPoints: { studio: 'media/studio/main.ts' },
    outdir: 'dist',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  }),
]);

/** The JPEG and WebP decoders (src/core/images/wasmDecode.ts: dist/mcp.js, dist/imagePreview.js, dist/regionEdit.js, dist/imageDecodeWorker.js) load these next to them. */
const require = createRequire(import.meta.url);
await mkdir('dist', { recursive: true });
for (const wasm of ['@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm', '@jsquash/webp/codec/dec/webp_dec.wasm']) {
  await copyFile(require.resolve(wasm), path.join('dist', path.basename(wasm)));
}

if (watch) {
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all(contexts.map((c) => c.rebuild()));
  await Promise.all(contexts.map((c) => c.dispose()));
}
