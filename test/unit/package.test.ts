// The .vsix holds only what runs: the production bundles (no source maps), the webview and
// walkthrough media (no TypeScript), the manifest with its nls files, the l10n bundles, README with
// the docs/ pages it links to, CHANGELOG, LICENSE and the icon; and it stays under 1.5 MB. Built in a temporary copy of the
// repository so the working tree's dist/ (dev build, used by the integration tests) is untouched.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
/** The README's screenshots are ~0.8 MB of it (PNG does not compress), the bundles ~0.3 MB. */
const MAX_BYTES = 1.5 * 1024 * 1024;
const COPIED = [
  'package.json',
  'scripts',
  'docs',
  'package.nls.json',
  'package.nls.ru.json',
  '.vscodeignore',
  'esbuild.mjs',
  'patches', // esbuild.mjs bundles undici mended (scripts/undiciMend.cjs)
  'tsconfig.json',
  'README.md',
  'CHANGELOG.md',
  'LICENSE',
  'src',
  'media',
  'l10n',
  'images',
];

/** Paths inside the .vsix (zip) that may ship; everything else fails the test. */
const ALLOWED: RegExp[] = [
  /^\[Content_Types\]\.xml$/,
  /^extension\.vsixmanifest$/,
  /^extension\/package\.json$/,
  /^extension\/package\.nls(\.[a-z-]+)?\.json$/,
  /^extension\/(readme|README)\.md$/,
  /^extension\/(changelog|CHANGELOG)\.md$/,
  /^extension\/LICENSE(\.txt)?$/,
  /^extension\/dist\/[\w.-]+\.js$/,
  /^extension\/dist\/(mozjpeg|webp)_dec\.wasm$/, // the MCP server's JPEG and WebP preview decoders
  /^extension\/media\/[\w/.-]+\.(css|svg|png|md)$/,
  /^extension\/l10n\/bundle\.l10n(\.[a-z-]+)?\.json$/,
  /^extension\/images\/icon\.png$/,
  /^extension\/docs\/[\w.-]+\.png$/, // README screenshots, only those the README or a docs/ page shows (checked below)
  /^extension\/docs\/[\w.-]+\.md$/, // the pages the README links to (checked below)
];

/** The pages of docs/ (the README links each; they ship beside it). */
const DOC_PAGES = readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));

/** Relative image paths the README and the pages of docs/ show, from the repository's root. */
function readmeImages(): string[] {
  const shown = new Set<string>();
  for (const file of ['README.md', ...DOC_PAGES.map((page) => `docs/${page}`)]) {
    const markdown = readFileSync(path.join(ROOT, file), 'utf8');
    // Images in code (fenced blocks, `spans`) are examples, not pictures the page shows.
    const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
    for (const m of prose.matchAll(/!\[[^\]]*\]\(([^)\s]+)[^)]*\)/g)) {
      if (!/^[a-z]+:/i.test(m[1]!)) shown.add(path.posix.join(path.posix.dirname(file), m[1]!));
    }
  }
  return [...shown];
}

/** Entry names of a zip file, read from its central directory. */
export function zipEntries(zip: Buffer): string[] {
  let end = zip.length - 22;
  while (end >= 0 && zip.readUInt32LE(end) !== 0x06054b50) end--;
  assert.ok(end >= 0, 'not a zip file');
  const count = zip.readUInt16LE(end + 10);
  let offset = zip.readUInt32LE(end + 16);
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    assert.equal(zip.readUInt32LE(offset), 0x02014b50, 'broken central directory');
    const nameLength = zip.readUInt16LE(offset + 28);
    const extraLength = zip.readUInt16LE(offset + 30);
    const commentLength = zip.readUInt16LE(offset + 32);
    names.push(zip.toString('utf8', offset + 46, offset + 46 + nameLength));
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return names;
}

describe('packaging: the .vsix', function () {
  this.timeout(90_000);
  let dir: string;
  let vsix: string;
  let entries: string[];

  before(function () {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gateway-images-package-'));
    for (const item of COPIED) {
      if (existsSync(path.join(ROOT, item))) cpSync(path.join(ROOT, item), path.join(dir, item), { recursive: true });
    }
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    // The README's command, `npm run package` (scripts/package-vsix.mjs: production bundles, then vsce;
    // the demo and the bench package through the same script).
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    try {
      execFileSync(npm, ['run', '--silent', 'package'], { cwd: dir, stdio: 'pipe', encoding: 'utf8' });
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string };
      throw new Error(`npm run package failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`, { cause: error });
    }
    const built = readdirSync(dir).filter((f) => f.endsWith('.vsix'));
    assert.equal(built.length, 1, `expected one .vsix, found ${built.join(', ')}`);
    vsix = path.join(dir, built[0]!);
    entries = zipEntries(readFileSync(vsix)).filter((e) => !e.endsWith('/'));
  });

  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('contains nothing outside the allow-list (no sources, no source maps, no tests)', () => {
    const unexpected = entries.filter((e) => !ALLOWED.some((re) => re.test(e)));
    assert.deepEqual(unexpected, []);
    assert.deepEqual(
      entries.filter((e) => /\.(ts|map)$/.test(e)),
      [],
    );
  });

  it('contains everything that runs', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    const required = [
      'extension/package.json',
      'extension/package.nls.json',
      'extension/package.nls.ru.json',
      'extension/l10n/bundle.l10n.json',
      'extension/l10n/bundle.l10n.ru.json',
      'extension/images/icon.png',
      'extension/dist/extension.js',
      'extension/dist/errors.js',
      'extension/dist/comparisonFeed.js',
      'extension/dist/onboarding.js',
      'extension/dist/studioHost.js',
      'extension/dist/gateway.js',
      'extension/dist/results.js',
      'extension/dist/styles.js',
      'extension/dist/interrupted.js',
      'extension/dist/promptFiles.js',
      'extension/dist/recover.js',
      'extension/dist/accountPage.js',
      'extension/dist/moneyAlertCheck.js',
      'extension/dist/chatToolCode.js',
      'extension/dist/imagePreview.js',
      'extension/dist/findResults.js',
      'extension/dist/writePrompt.js',
      'extension/dist/starterStyles.js',
      'extension/dist/thumbnails.js',
      'extension/dist/imageDecodeWorker.js',
      'extension/dist/studio.js',
      'extension/dist/mcp.js',
      'extension/dist/mozjpeg_dec.wasm',
      'extension/dist/webp_dec.wasm',
      'extension/dist/l10n.js',
      'extension/dist/plural.js',
      'extension/media/studio/studio.css',
      'extension/media/studio/gallery.css',
      'extension/media/studio/region.css',
    ];
    for (const walkthrough of pkg.contributes?.walkthroughs ?? []) {
      for (const step of walkthrough.steps ?? []) {
        for (const media of [step.media?.image, step.media?.svg, step.media?.markdown]) {
          if (typeof media === 'string') required.push(`extension/${media}`);
          else if (media && typeof media === 'object') for (const p of Object.values(media)) required.push(`extension/${String(p)}`);
        }
      }
    }
    const lower = new Set(entries.map((e) => e.toLowerCase()));
    for (const file of required) assert.ok(lower.has(file.toLowerCase()), `${file} is missing from the .vsix`);
    assert.ok(
      entries.some((e) => /^extension\/readme\.md$/i.test(e)),
      'README is missing',
    );
    assert.ok(
      entries.some((e) => /^extension\/license/i.test(e)),
      'LICENSE is missing',
    );
  });

  it('bundles undici mended: a paused parser drains at the end of the connection (patches/undici@7.30.2.patch, nodejs/undici#5360)', () => {
    const code = readFileSync(path.join(dir, 'dist', 'gateway.js'), 'utf8');
    // Minified, method names stay: the mend's drainAtEnd() is defined once and called from finish() and the socket's end.
    assert.equal((code.match(/drainAtEnd\(\)\{/g) ?? []).length, 1, 'dist/gateway.js holds the unmended parser');
    assert.equal((code.match(/\.drainAtEnd\(\)/g) ?? []).length, 2, 'dist/gateway.js calls drainAtEnd() from finish() and the end of the connection');
  });

  it('has one translation state: every host bundle requires dist/l10n.js and dist/plural.js, none inlines a copy', () => {
    // Activation configures @vscode/l10n once (src/host/l10n.ts); a copy inlined into another bundle would stay English.
    const read = (name: string) => readFileSync(path.join(dir, 'dist', name), 'utf8');
    // promptFiles.js and accountPage.js translate through vscode.l10n only: they need not require it, and must not inline it.
    const usesL10nPackage = new Set([
      'extension.js',
      'errors.js',
      'studioHost.js',
      'gateway.js',
      'results.js',
      'styles.js',
      'interrupted.js',
      'writePrompt.js',
      'starterStyles.js',
      'mcp.js',
      'plural.js',
      'moneyAlertCheck.js',
      'chatToolCode.js',
    ]);
    for (const name of [...usesL10nPackage, 'promptFiles.js', 'recover.js', 'accountPage.js', 'imagePreview.js']) {
      const code = read(name);
      if (usesL10nPackage.has(name)) assert.match(code, /require\(["']\.\/l10n\.js["']\)/, `${name} does not require ./l10n.js`);
      assert.doesNotMatch(code, /contents\.bundle/, `${name} inlines a copy of @vscode/l10n`);
      if (name !== 'plural.js') assert.doesNotMatch(code, /\$\{[\w.]+\} \[\$\{\w+\}\]`/, `${name} inlines a copy of core/common/plural.ts`);
    }
    assert.match(read('l10n.js'), /contents\.bundle/);
  });

  it('ships the screenshots the README and docs/ show, and no others', () => {
    const shown = readmeImages().map((p) => `extension/${p}`);
    for (const image of shown) assert.ok(entries.includes(image), `${image} (shown by the README or a page of docs/) is missing`);
    assert.deepEqual(
      entries.filter((e) => e.startsWith('extension/docs/') && e.endsWith('.png') && !shown.includes(e)),
      [],
    );
  });

  it('ships every page of docs/ the README links to', () => {
    assert.ok(DOC_PAGES.length > 5, DOC_PAGES.join(', '));
    for (const page of DOC_PAGES) assert.ok(entries.includes(`extension/docs/${page}`), `docs/${page} is missing`);
  });

  it('is smaller than 1.5 MB', () => {
    const size = statSync(vsix).size;
    console.log(`      the .vsix: ${size} bytes of ${MAX_BYTES}`);
    assert.ok(size < MAX_BYTES, `the .vsix is ${size} bytes`);
  });

  it('the icon is a 128×128 PNG', () => {
    const png = readFileSync(path.join(ROOT, 'images', 'icon.png'));
    assert.equal(png.toString('hex', 0, 8), '89504e470d0a1a0a');
    assert.equal(png.readUInt32BE(16), 128);
    assert.equal(png.readUInt32BE(20), 128);
  });
});
