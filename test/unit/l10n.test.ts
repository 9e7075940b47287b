// Both languages have every string: manifest keys (package.nls*.json) and runtime messages
// (l10n/bundle.l10n*.json), and the committed English bundle is what the extraction finds in src
// (@vscode/l10n-dev's getL10nJson plus the plural keys, by scripts/l10n-plurals.mjs as `npm run l10n` runs it).
// A new untranslated string fails here.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';

const ROOT = path.resolve(__dirname, '../../..');
const readJson = (file: string) => JSON.parse(readFileSync(path.join(ROOT, file), 'utf8')) as Record<string, unknown>;
const placeholders = (text: string) => [...new Set(text.match(/\{\d+\}/g) ?? [])].sort();

function referencedKeys(value: unknown, found = new Set<string>()): Set<string> {
  if (typeof value === 'string') {
    const match = /^%([^%\s]+)%$/.exec(value);
    if (match) found.add(match[1]!);
  } else if (Array.isArray(value)) value.forEach((v) => referencedKeys(v, found));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => referencedKeys(v, found));
  return found;
}

describe('l10n: manifest strings (package.nls)', () => {
  const pkg = readJson('package.json');
  const en = readJson('package.nls.json');
  const ru = readJson('package.nls.ru.json');

  it('English and Russian have the same keys', () => {
    assert.deepEqual(Object.keys(ru).sort(), Object.keys(en).sort());
  });

  it('every %key% of package.json has a non-empty text in both languages', () => {
    const used = [...referencedKeys(pkg)];
    assert.ok(used.length > 30, `only ${used.length} keys are used`);
    for (const key of used) {
      assert.ok(typeof en[key] === 'string' && en[key].trim(), `package.nls.json lacks ${key}`);
      assert.ok(typeof ru[key] === 'string' && ru[key].trim(), `package.nls.ru.json lacks ${key}`);
    }
  });

  it('no user-facing string of package.json is left plain (scripts/nls-manifest.mjs --check)', () => {
    try {
      execFileSync(process.execPath, [path.join(ROOT, 'scripts/nls-manifest.mjs'), '--check'], { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });
    } catch (error) {
      const e = error as { stderr?: string; stdout?: string };
      assert.fail(`run node scripts/nls-manifest.mjs and translate package.nls.ru.json:\n${e.stderr ?? ''}${e.stdout ?? ''}`);
    }
  });

  it('Russian keeps the command links and the {placeholders} of the English text', () => {
    for (const [key, english] of Object.entries(en)) {
      const russian = typeof ru[key] === 'string' ? ru[key] : '';
      const links = (text: string) => (text.match(/\]\((command:[^)]+)\)/g) ?? []).sort();
      assert.deepEqual(links(russian), links(String(english)), `links of ${key}`);
      const settingsPlaceholders = (text: string) => (text.match(/`\{\w+\}`/g) ?? []).sort();
      assert.deepEqual(settingsPlaceholders(russian), settingsPlaceholders(String(english)), `placeholders of ${key}`);
    }
  });
});

describe('l10n: runtime messages (l10n bundle)', () => {
  const en = readJson('l10n/bundle.l10n.json') as Record<string, string>;
  const ru = readJson('l10n/bundle.l10n.ru.json') as Record<string, string>;

  it('package.json points VS Code at the l10n folder', () => {
    assert.equal(readJson('package.json').l10n, './l10n');
  });

  it('the committed English bundle is exactly what the extraction finds in src', function () {
    // The extraction parses every source file: about 10 s of CPU on 2 cores, over 30 s beside busy
    // processes, once per tree (kept by the sources' hash: README's `npm run l10n` test reads the same
    // tree). The timeout only guards against a hang.
    this.timeout(120_000);
    const out = execFileSync(process.execPath, [path.join(ROOT, 'scripts/l10n-plurals.mjs'), '--json'], { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });
    const { messages, problems } = JSON.parse(out) as { messages: string[]; problems: string[] };
    assert.deepEqual(problems, [], 'translated messages must be string literals');
    const missing = messages.filter((m) => !(m in en));
    const stale = Object.keys(en).filter((m) => !messages.includes(m));
    assert.deepEqual({ missing, stale }, { missing: [], stale: [] }, 'run npm run l10n and translate the new keys');
    for (const [key, value] of Object.entries(en)) assert.equal(value, key, 'the English value is the message itself');
  });

  it('the extractor sees the messages of every layer (host, webview strings, core, jobs)', () => {
    for (const sample of [
      'Gateway Images has no API key yet. Click to set it.', // statusBar: t = vscode.l10n.t
      'API key saved. Signed in as {0}.', // vscode.l10n.t(...)
      'Image Studio', // studio/model/strings.ts
      'Choose a model: "model" is required.', // core/requests/validation.ts: l10n.t() of @vscode/l10n
      'The gateway answered HTTP {0}: {1}.', // core/gateway/errorParsing.ts
      'Not sent: the cost was not confirmed.', // jobs/imageJobs.ts
      'Cannot read "{0}": the file does not exist or is not readable.', // reference checks
    ]) {
      assert.ok(sample in en, `${sample} is not in bundle.l10n.json`);
    }
  });

  it('every message has a non-empty Russian text with the same {N} placeholders', () => {
    const problems: string[] = [];
    for (const key of Object.keys(en)) {
      const russian = ru[key];
      if (typeof russian !== 'string' || !russian.trim()) problems.push(`untranslated: ${key}`);
      else if (placeholders(russian).join() !== placeholders(key).join()) problems.push(`placeholders differ: ${key} -> ${russian}`);
    }
    assert.deepEqual(problems, []);
  });

  it('the Russian bundle has no keys the English one lacks', () => {
    assert.deepEqual(
      Object.keys(ru).filter((k) => !(k in en)),
      [],
    );
  });
});

describe('l10n: l10n.t() of @vscode/l10n in the pure modules', () => {
  const ru = readJson('l10n/bundle.l10n.ru.json') as Record<string, string>;
  // What activation does (src/host/l10n.ts): the bundle VS Code loaded, or none for English.
  afterEach(() => l10n.config({ contents: {} }));

  it('formats {N} placeholders in English without a bundle', () => {
    l10n.config({ contents: {} });
    assert.equal(l10n.t('Cannot read "{0}".', 'a.png'), 'Cannot read "a.png".');
    assert.equal(l10n.t('must be {type: "image_url", image_url: {url}} at {0}', 3), 'must be {type: "image_url", image_url: {url}} at 3');
  });

  it('translates from the configured bundle; a message the bundle lacks stays English', () => {
    l10n.config({ contents: ru });
    assert.equal(l10n.t('Cannot read "{0}".', 'a.png'), 'Не удаётся прочитать "a.png".');
    assert.equal(l10n.t('Not in any bundle: {0}', 1), 'Not in any bundle: 1');
  });

  it("errors about the gateway's answer and about command arguments are translated, and name the field", async () => {
    const { decodeGenerationStream } = await import('../../src/core/answers/generationStream');
    const { toGenerateArgs } = await import('../../src/commands/common/commandArgs');
    const sink = { open: () => ({ write: () => undefined, close: async () => undefined, abort: async () => undefined }) };
    const failure = async (body: string) => {
      async function* chunks() {
        yield Buffer.from(body);
      }
      try {
        await decodeGenerationStream(chunks(), sink);
      } catch (error) {
        return (error as Error).message;
      }
      return assert.fail(`${body} was accepted`);
    };
    const argumentError = (args: Record<string, unknown>) => {
      try {
        toGenerateArgs(args);
      } catch (error) {
        return (error as Error).message;
      }
      return assert.fail(`${JSON.stringify(args)} was accepted`);
    };
    const { setPluralLanguage } = await import('../../src/core/common/plural');
    l10n.config({ contents: ru });
    setPluralLanguage('ru');
    assert.equal(await failure('{"data": 5}'), '`data` в ответе шлюза — число, а не массив (байт 9).');
    assert.equal(await failure('{"data" 1}'), "Ответ шлюза — некорректный JSON: ожидалось :, а найдено '1' (байт 8).");
    const padding =
      "Изображение в data[0].b64_json ответа шлюза — некорректный base64: неверное дополнение в конце (1 '=' после группы из 2 символов) (декодировано байт: 0).";
    assert.equal(await failure('{"data":[{"b64_json":"YW="}]}'), padding);
    assert.equal(argumentError({ prompt: 1, model: 'm' }), '"prompt" должен быть текстом.');
    l10n.config({ contents: {} });
    setPluralLanguage('en');
    assert.equal(await failure('{"data": 5}'), "`data` in the gateway's response is a number, not an array (at byte 9).");
    assert.equal(argumentError({ prompt: 'p', model: 'm', params: [] }), '"params" must be an object of provider-specific parameters.');
  });

  it('validation messages come out translated through the configured bundle', async () => {
    const { collectIssues } = await import('../../src/core/requests/validation');
    l10n.config({ contents: ru });
    const issues = collectIssues({ model: '', prompt: '' }, { models: [] });
    assert.ok(
      issues.some((i) => i.message === 'Выберите модель: "model" обязателен.'),
      JSON.stringify(issues),
    );
    l10n.config({ contents: {} });
    assert.ok(collectIssues({ model: '', prompt: '' }, { models: [] }).some((i) => i.message === 'Choose a model: "model" is required.'));
  });
});
