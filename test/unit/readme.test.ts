// The README's commands cannot drift: every `npm …` command it names (fenced shell blocks and
// inline code), or a page of docs/ names, has its script in package.json, and each is exercised by
// a test, listed below.
// The light ones run here, in a temporary copy of the repository: `npm run l10n` (changes
// nothing when the tree is up to date), `npm run watch` (starts, builds dist/, is stopped) and
// `npm run format` (rewrites an unformatted file so that `npm run format:check` passes).
import * as assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'timers/promises';
import { copyRepo } from '../support/repoCopy';

const ROOT = path.resolve(__dirname, '../../..');
const READMES = ['README.md', 'test/harness/README.md'];
/** The pages the README's details moved to: docs/*.md. */
const DOCS = readdirSync(path.join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** npm's own commands that run no script of package.json. */
const NPM_BUILTINS = new Set(['ci', 'install', 'i', 'install-scripts']);

/**
 * Where each README command is exercised. A command the README gains without a test here fails
 * the suite; each file must contain the command's text.
 */
const EXERCISED_BY: Record<string, string> = {
  'npm ci': '.ci/run',
  'npm run demo': 'test/e2e/demo.e2e.test.ts',
  'npm test': '.ci/run',
  'npm install-scripts': 'test/unit/installScripts.test.ts', // read-only: lists the install scripts nobody reviewed
  'npm run build': 'package.json', // the first step of `npm test`
  'npm run watch': 'test/unit/readme.test.ts',
  'npm run package': 'test/unit/package.test.ts',
  'npm run emulator': 'test/e2e/readmeCommands.e2e.test.ts',
  'npm run bench': 'test/e2e/readmeCommands.e2e.test.ts',
  'npm run l10n': 'test/unit/readme.test.ts',
  'npm run compile-tests': 'package.json', // a step of `npm test`
  'npm run lint': 'test/harness/testAll.ts', // a layer of `npm test`
  'npm run lint:layers': 'package.json', // a step of `npm run lint`
  'npm run format:check': 'test/harness/testAll.ts', // a layer of `npm test`
  'npm run format': 'test/unit/readme.test.ts',
  'npm run setup:vscode': 'test/harness/testAll.ts', // a layer of `npm test`
  'npm run test:unit': 'test/harness/testAll.ts', // a layer of `npm test`
  'npm run test:integration': 'test/harness/testAll.ts', // a layer of `npm test`
  'npm run test:integration:current': 'test/unit/readme.test.ts', // every integration suite on 1.139: about 2 min, run by hand
  'npm run test:integration:current-subset': 'test/harness/testAll.ts', // a layer of `npm test`
  'npm run test:e2e': 'test/harness/testAll.ts', // a layer of `npm test`
  'npm run test:e2e:current-subset': 'test/harness/testAll.ts', // a layer of `npm test`
  'npm run test:e2e:stress': 'test/unit/readme.test.ts', // three loaded runs of the e2e suite: about half an hour, run by hand
  'npm run test:unit:stress': 'test/unit/readme.test.ts', // three loaded runs of the unit suite: about 12 minutes, run by hand
  'npm run test:integration:stress': 'test/unit/readme.test.ts', // three loaded runs of the integration suite: about 8 minutes, run by hand
  'npm run test:e2e:current': 'test/unit/readme.test.ts', // the whole e2e suite on 1.139: about 8.5 min, run by hand
  'npm run test:electron': 'test/unit/readme.test.ts', // needs internet: only its entry is checked
  'npm run test:crash': 'test/harness/testAll.ts', // the last layer of `npm test` is its mocha run (test:crash:built)
};

/** `npm …` commands in fenced shell blocks and in inline code, normalised to `npm run X` / `npm X`. */
export function readmeCommands(markdown: string): string[] {
  const found = new Set<string>();
  const take = (text: string) => {
    for (const m of text.matchAll(/(?:^|[\s;&|(`])npm\s+((?:run(?:-script)?\s+)?)([\w:.-]+)/g)) {
      found.add(m[1] ? `npm run ${m[2]}` : `npm ${m[2]}`);
    }
  };
  for (const block of markdown.matchAll(/^```(\w*)[^\n]*\n([\s\S]*?)^```/gm)) {
    if (['', 'sh', 'bash', 'shell', 'console', 'zsh'].includes(block[1]!)) take(block[2]!);
  }
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const span of prose.matchAll(/`([^`\n]+)`/g)) take(span[1]!);
  return [...found].sort();
}

function scriptOf(command: string): string | undefined {
  const run = /^npm run (.+)$/.exec(command);
  if (run) return run[1];
  const name = command.slice('npm '.length);
  return NPM_BUILTINS.has(name) ? undefined : name; // `npm test`, `npm start`… run scripts too
}

describe('README commands', () => {
  const scripts = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

  it('the parser finds npm commands in shell blocks and inline code, not in other code', () => {
    const sample = [
      '```sh',
      'npm ci',
      'npm run demo -- --port 1',
      'npm test   # all',
      '```',
      '```ts',
      "exec('npm run hidden')",
      '```',
      'Run `npm run l10n` then.',
    ].join('\n');
    assert.deepEqual(readmeCommands(sample), ['npm ci', 'npm run demo', 'npm run l10n', 'npm test']);
  });

  it('the README names npm test, the command CI runs, and the docs/ pages name commands too', () => {
    assert.ok(readmeCommands(readFileSync(path.join(ROOT, 'README.md'), 'utf8')).includes('npm test'));
    assert.ok(
      DOCS.some((page) => readmeCommands(readFileSync(path.join(ROOT, page), 'utf8')).length > 0),
      DOCS.join(', '),
    );
  });

  for (const readme of [...READMES, ...DOCS]) {
    it(`every npm command in ${readme} has its script in package.json`, () => {
      const commands = readmeCommands(readFileSync(path.join(ROOT, readme), 'utf8'));
      if (READMES.includes(readme)) assert.ok(commands.length > 0, `no npm commands found in ${readme}`);
      const missing = commands.filter((c) => {
        const script = scriptOf(c);
        return script !== undefined && !(script in scripts);
      });
      assert.deepEqual(missing, [], `${readme} names commands package.json has no script for`);
    });

    it(`every npm command in ${readme} is exercised by a test`, () => {
      const commands = readmeCommands(readFileSync(path.join(ROOT, readme), 'utf8'));
      const untested = commands.filter((c) => !(c in EXERCISED_BY));
      assert.deepEqual(untested, [], 'add the command to EXERCISED_BY with the test that runs it');
      for (const c of commands) {
        const file = path.join(ROOT, EXERCISED_BY[c]!);
        assert.ok(existsSync(file), `${EXERCISED_BY[c]} (for ${c}) does not exist`);
        assert.ok(readFileSync(file, 'utf8').includes(c), `${EXERCISED_BY[c]} does not name ${c}`);
      }
    });
  }

  it('npm run test:electron names an entry that exists (it downloads VS Code, so it is not run here)', () => {
    const entry = /node (out\/\S+\.js)/.exec(scripts['test:electron']!)?.[1];
    assert.ok(entry, scripts['test:electron']);
    assert.ok(existsSync(path.join(ROOT, entry.replace(/^out\//, '').replace(/\.js$/, '.ts'))), `${entry} has no source`);
  });

  it('npm run l10n runs and changes nothing in an up-to-date tree', function () {
    // The extraction: 8–13 s of CPU here, several times that beside busy processes. Only a hang fails.
    this.timeout(120_000);
    const files = ['package.json', 'package.nls.json', 'package.nls.ru.json', 'l10n/bundle.l10n.json', 'l10n/bundle.l10n.ru.json'];
    const dir = copyRepo(['package.json', 'package.nls.json', 'package.nls.ru.json', 'l10n', 'scripts', 'src']);
    try {
      execFileSync(NPM, ['run', '--silent', 'l10n'], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
      for (const file of files)
        assert.equal(readFileSync(path.join(dir, file), 'utf8'), readFileSync(path.join(ROOT, file), 'utf8'), `npm run l10n changed ${file}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('npm run format rewrites unformatted files in src/, media/, test/ and scripts/; npm run format:check fails before and passes after', function () {
    this.timeout(60_000);
    const dir = copyRepo(['package.json', '.prettierrc.json', '.prettierignore']);
    const unformatted = 'const point = {x:1,y:"two"}\nexport default point\n';
    const formatted = "const point = { x: 1, y: 'two' };\nexport default point;\n";
    const files = ['src/a.ts', 'media/b.ts', 'test/c.ts', 'scripts/d.mjs'];
    try {
      for (const file of files) {
        mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        writeFileSync(path.join(dir, file), unformatted);
      }
      const run = (script: string) => execFileSync(NPM, ['run', '--silent', script], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
      assert.throws(() => run('format:check'), 'npm run format:check passed on unformatted files');
      run('format');
      for (const file of files) assert.equal(readFileSync(path.join(dir, file), 'utf8'), formatted, `npm run format left ${file} as it was`);
      run('format:check');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('npm run watch starts, builds dist/ and rebuilds on a change; it stops on SIGINT', async function () {
    this.timeout(90_000);
    const dir = copyRepo(['package.json', 'esbuild.mjs', 'scripts', 'patches', 'src', 'media']);
    let watch: ChildProcess | undefined;
    try {
      watch = spawn(NPM, ['run', 'watch'], { cwd: dir, detached: true, stdio: 'ignore' });
      const bundles = ['extension.js', 'errors.js', 'gateway.js', 'studio.js'].map((f) => path.join(dir, 'dist', f));
      const waitFor = async (test: () => boolean, what: string) => {
        const until = Date.now() + 60_000;
        while (!test()) {
          assert.ok(Date.now() < until, `npm run watch: ${what} within 60 s`);
          assert.equal(watch!.exitCode, null, `npm run watch exited (${watch!.exitCode})`);
          await sleep(200);
        }
      };
      await waitFor(() => bundles.every((b) => existsSync(b)) && existsSync(`${bundles[0]}.map`), 'no dist/ bundles with source maps');
      // A change to the webview's source is rebuilt without restarting.
      const marker = `watch-marker-${Date.now()}`;
      const main = path.join(dir, 'media', 'studio', 'main.ts');
      writeFileSync(main, `${readFileSync(main, 'utf8')}\nconsole.debug(${JSON.stringify(marker)});\n`);
      await waitFor(() => readFileSync(bundles[3]!, 'utf8').includes(marker), 'no rebuild after a change');
      const exited = new Promise((resolve) => watch!.once('exit', resolve));
      process.kill(-watch.pid!, 'SIGINT'); // Ctrl+C in a terminal: the whole foreground group
      await Promise.race([exited, sleep(10_000)]);
      assert.notEqual(watch.exitCode === null && watch.signalCode === null, true, 'npm run watch did not stop on SIGINT');
    } finally {
      if (watch?.pid && watch.exitCode === null && watch.signalCode === null) {
        try {
          process.kill(-watch.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('settings tables: docs/configuration.md in full, the README at a glance', () => {
  const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    contributes: { configuration: { properties: Record<string, { scope?: string; default?: unknown }> } };
  };
  const properties = manifest.contributes.configuration.properties;
  /** Setting -> [default, scope] as the Configuration page's table gives them. */
  const rows = new Map(
    [...readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8').matchAll(/^\| `(gatewayImages\.[\w.]+)` \| `([^`]*)` \| [^|]*\| `(\w+)`/gm)].map((m) => [
      m[1]!,
      [m[2]!, m[3]!],
    ]),
  );

  const defaultOf = (property: { default?: unknown }) => (typeof property.default === 'string' ? property.default || '""' : String(property.default));

  it('every setting declares its scope, and docs/configuration.md lists each with that scope and its default', () => {
    for (const [name, property] of Object.entries(properties)) {
      assert.ok(property.scope, `${name} declares no scope`);
      const row = rows.get(name);
      assert.ok(row, `${name} is not in the settings table of docs/configuration.md`);
      assert.equal(row[1], property.scope, `${name}: docs/configuration.md says ${row[1]}`);
      assert.equal(row[0], defaultOf(property), `${name}: default`);
    }
    assert.deepEqual([...rows.keys()].sort(), Object.keys(properties).sort(), 'docs/configuration.md lists settings that do not exist');
  });

  it("the README's settings at a glance list every setting with its default, and no other", () => {
    const glance = new Map(
      [...readFileSync(path.join(ROOT, 'README.md'), 'utf8').matchAll(/^\| `(gatewayImages\.[\w.]+)` \| `([^`]*)` \|/gm)].map((m) => [m[1]!, m[2]!]),
    );
    for (const [name, property] of Object.entries(properties)) assert.equal(glance.get(name), defaultOf(property), `${name} at a glance`);
    assert.deepEqual([...glance.keys()].sort(), Object.keys(properties).sort(), 'the README lists settings that do not exist');
  });
});

describe('the gateway contract cited inside the repository', () => {
  const sources = (dir: string): string[] =>
    (readdirSync(path.join(ROOT, dir), { recursive: true }) as string[]).filter((f) => /\.(ts|mjs|md)$/.test(f)).map((f) => path.join(dir, f));

  it('code and docs point to docs/gateway-contract.md, not to a file outside the repository', () => {
    const outside = [...sources('src'), ...sources('tools'), 'README.md', ...DOCS].filter((file) =>
      /gateway-api-spec|\.\.\/shared\//.test(readFileSync(path.join(ROOT, file), 'utf8')),
    );
    assert.deepEqual(outside, []);
    assert.match(readFileSync(path.join(ROOT, 'src/core/gateway/types.ts'), 'utf8'), /docs\/gateway-contract\.md/);
  });

  it('every source file docs/gateway-contract.md names exists', () => {
    const contract = readFileSync(path.join(ROOT, 'docs/gateway-contract.md'), 'utf8');
    const named = [...contract.matchAll(/\b((?:src|tools)\/[\w/.-]+\w)/g)].map((m) => m[1]!);
    assert.ok(named.length > 10, named.join(', '));
    for (const file of named) assert.ok(existsSync(path.join(ROOT, file)), `${file} does not exist`);
  });
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Anchors of a Markdown file's headings (outside code), with GitHub's -1, -2 for repeats. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const m of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const base = headingAnchor(m[1]!);
    let anchor = base;
    for (let i = 1; anchors.has(anchor); i++) anchor = `${base}-${i}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** Relative link targets of a Markdown file's prose (code blocks and `spans` are examples). */
function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z]+:/i.test(target));
}

describe('the README and docs/ link to each other', () => {
  it("the anchor of a heading is GitHub's", () => {
    assert.equal(
      headingAnchor('MCP server for agents (Copilot agent mode, Claude Code, Cursor, Codex CLI)'),
      'mcp-server-for-agents-copilot-agent-mode-claude-code-cursor-codex-cli',
    );
    assert.equal(
      headingAnchor('What the client accepts where the gateway\'s contract says "not shown"'),
      'what-the-client-accepts-where-the-gateways-contract-says-not-shown',
    );
    assert.deepEqual(relativeLinks('[a](docs/x.md#y) `[b](c.md)` [d](https://e.example/) ![f](g.png)'), ['docs/x.md#y', 'g.png']);
  });

  it('the README links every page of docs/', () => {
    const linked = new Set(relativeLinks(readFileSync(path.join(ROOT, 'README.md'), 'utf8')).map((target) => target.split('#')[0]));
    assert.deepEqual(
      DOCS.filter((page) => !linked.has(page)),
      [],
      'pages of docs/ the README does not link to',
    );
  });

  for (const file of ['README.md', ...DOCS]) {
    it(`every relative link of ${file} leads to a file, and to a heading of it`, () => {
      const broken: string[] = [];
      for (const target of relativeLinks(readFileSync(path.join(ROOT, file), 'utf8'))) {
        const [linkPath, anchor] = target.split('#') as [string, string | undefined];
        const resolved = linkPath ? path.join(ROOT, path.dirname(file), decodeURIComponent(linkPath)) : path.join(ROOT, file);
        if (!existsSync(resolved)) broken.push(`${target}: no such file`);
        else if (anchor !== undefined && !anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)) broken.push(`${target}: no such heading`);
      }
      assert.deepEqual(broken, []);
    });
  }
});
