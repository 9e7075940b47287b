// A Russian language pack for the VS Code the tests run, built from npm packages (no marketplace
// here). code-server switches `vscode.env.language` only when a language pack for the locale
// resolves, and only then are our package.nls.ru.json and l10n/bundle.l10n.ru.json used.
//
// @codingame/monaco-vscode-language-pack-ru holds VS Code's translations as an array indexed like
// the `localize(<index>, "<English>")` calls compiled into @codingame/monaco-vscode-api. The pack
// is built by joining the two on that index (English -> Russian) and looking up each English
// message of this VS Code (out/nls.keys.json + out/nls.messages.json): what matches is translated,
// the rest stays English. The built-in extensions' translations are already in VS Code's format.
import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { CACHE_DIR, type VscodeTarget } from './paths';

export const LANGUAGE_PACK_VERSION = '25.1.2';
const PACK = '@codingame/monaco-vscode-language-pack-ru';
const API = '@codingame/monaco-vscode-api';
const ROOT = path.join(CACHE_DIR, `language-pack-ru-${LANGUAGE_PACK_VERSION}`);

function log(message: string): void {
  process.stdout.write(`[language pack] ${message}\n`);
}

/**
 * Moves a folder made aside (`made`) to `target` in one rename, so that a process beside this one
 * (two test layers may build the pack at once) sees the whole folder or none. `complete` says
 * whether a folder at `target` is whole: one that is (another process was first) is kept and `made`
 * removed; one that is not (an interrupted run of an older harness) is replaced.
 */
function moveIntoPlace(made: string, target: string, complete: () => boolean): void {
  try {
    fs.renameSync(made, target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    if (complete()) return fs.rmSync(made, { recursive: true, force: true });
    fs.rmSync(target, { recursive: true, force: true });
    fs.renameSync(made, target);
  }
}

/** `npm pack` (the registry's tarball, no install scripts) unpacked into <ROOT>/<dir>/package. */
function unpack(spec: string, dir: string): string {
  const target = path.join(ROOT, dir);
  const done = path.join(target, 'package', 'package.json');
  if (fs.existsSync(done)) return path.dirname(done);
  fs.mkdirSync(ROOT, { recursive: true });
  const made = fs.mkdtempSync(path.join(ROOT, `${dir}.tmp-`));
  const packed = spawnSync('npm', ['pack', spec, '--pack-destination', made, '--silent'], { encoding: 'utf8', timeout: 300_000 });
  const tgz = packed.stdout.trim().split('\n').pop() ?? '';
  if (packed.status !== 0 || !tgz) throw new Error(`npm pack ${spec} failed: ${packed.stderr}`);
  const untar = spawnSync('tar', ['xzf', path.join(made, tgz), '-C', made], { encoding: 'utf8' });
  if (untar.status !== 0) throw new Error(`tar could not unpack ${tgz}: ${untar.stderr}`);
  fs.rmSync(path.join(made, tgz));
  moveIntoPlace(made, target, () => fs.existsSync(done));
  return path.dirname(done);
}

/** Decodes one JS string literal ('…' or "…") as found in compiled code. */
export function decodeJsString(literal: string): string {
  const body = literal.slice(1, -1);
  return body.replace(/\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)/g, (_m, esc: string) => {
    if (esc.startsWith('u{')) return String.fromCodePoint(parseInt(esc.slice(2, -1), 16));
    if (esc.length > 1) return String.fromCharCode(parseInt(esc.slice(1), 16));
    return ({ n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', v: '\v', '0': '\0' } as Record<string, string>)[esc] ?? esc;
  });
}

/** index -> English from every `localize(<n>, "…")` / `localize2(<n>, '…')` in the API's code. */
export function englishByIndex(apiDir: string): Map<number, string> {
  const found = new Map<number, string>();
  const call = /\blocalize2?\(\s*(\d+)\s*,\s*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')/g;
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.js')) {
        for (const m of fs.readFileSync(full, 'utf8').matchAll(call)) found.set(Number(m[1]), decodeJsString(m[2]!));
      }
    }
  };
  walk(apiDir);
  return found;
}

/** The Russian array of translations/main.i18n.json.js (`var content = [ … ];`). */
function russianArray(packDir: string): (string | null)[] {
  const text = fs.readFileSync(path.join(packDir, 'translations', 'main.i18n.json.js'), 'utf8');
  const body = text.slice(text.indexOf('['), text.lastIndexOf(']') + 1).replace(/^\s*undefined,?$/gm, 'null,');
  return JSON.parse(body) as (string | null)[];
}

/** VS Code's own `{ contents: { module: { key: message } } }` for the messages whose English is known. */
export function translateMessages(
  keys: [string, string[]][],
  english: string[],
  russianByEnglish: Map<string, string>,
): { contents: Record<string, Record<string, string>>; translated: number; total: number } {
  const contents: Record<string, Record<string, string>> = {};
  let index = 0;
  let translated = 0;
  for (const [module, names] of keys) {
    for (const name of names) {
      const ru = russianByEnglish.get(english[index++] ?? '');
      if (ru === undefined) continue;
      (contents[module] ??= {})[name] = ru;
      translated++;
    }
  }
  return { contents, translated, total: index };
}

/** Builds (once per VS Code version) the language pack extension folder and returns its path. */
export function ensureRussianLanguagePack(target: VscodeTarget): string {
  const extDir = path.join(ROOT, `gateway-images-test.language-pack-ru-${target.codeServer}`);
  const marker = path.join(extDir, '.build-complete');
  if (fs.existsSync(marker)) return extDir;
  const started = Date.now();
  const packDir = unpack(`${PACK}@${LANGUAGE_PACK_VERSION}`, 'pack');
  const apiDir = unpack(`${API}@${LANGUAGE_PACK_VERSION}`, 'api');

  const russian = russianArray(packDir);
  const russianByEnglish = new Map<string, string>();
  for (const [index, en] of englishByIndex(apiDir)) {
    const ru = russian[index];
    if (typeof ru === 'string' && ru.length > 0 && !russianByEnglish.has(en)) russianByEnglish.set(en, ru);
  }
  const out = path.join(target.vscodeDir, 'out');
  const keys = JSON.parse(fs.readFileSync(path.join(out, 'nls.keys.json'), 'utf8')) as [string, string[]][];
  const english = JSON.parse(fs.readFileSync(path.join(out, 'nls.messages.json'), 'utf8')) as string[];
  const main = translateMessages(keys, english, russianByEnglish);

  // Made aside and moved into place whole (moveIntoPlace): another layer may be building it too.
  const made = fs.mkdtempSync(`${extDir}.tmp-`);
  fs.mkdirSync(path.join(made, 'translations', 'extensions'), { recursive: true });
  fs.writeFileSync(path.join(made, 'translations', 'main.i18n.json'), JSON.stringify({ version: '1.0.0', contents: main.contents }));
  const translations = [{ id: 'vscode', path: './translations/main.i18n.json' }];
  const builtins = path.join(packDir, 'translations', 'extensions');
  for (const file of fs
    .readdirSync(builtins)
    .filter((f) => f.endsWith('.i18n.json'))
    .sort()) {
    fs.copyFileSync(path.join(builtins, file), path.join(made, 'translations', 'extensions', file));
    translations.push({ id: file.slice(0, -'.i18n.json'.length), path: `./translations/extensions/${file}` });
  }
  const version = JSON.parse(fs.readFileSync(path.join(target.vscodeDir, 'package.json'), 'utf8')).version as string;
  const manifest = {
    name: 'language-pack-ru',
    displayName: 'Russian language pack (test harness)',
    publisher: 'gateway-images-test',
    version: `${version}`,
    engines: { vscode: `^${version}` },
    categories: ['Language Packs'],
    contributes: { localizations: [{ languageId: 'ru', languageName: 'Russian', localizedLanguageName: 'русский', translations }] },
  };
  fs.writeFileSync(path.join(made, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
  fs.writeFileSync(path.join(made, '.build-complete'), new Date().toISOString() + '\n');
  moveIntoPlace(made, extDir, () => fs.existsSync(marker));
  log(
    `built for VS Code ${version}: ${main.translated} of ${main.total} workbench messages in Russian, ` +
      `${translations.length - 1} built-in extensions, in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return extDir;
}

interface Localization {
  languageId: string;
  languageName?: string;
  localizedLanguageName?: string;
  translations: { id: string; path: string }[];
}

/**
 * The `languagepacks.json` VS Code keeps in its user data dir for the installed extension folders
 * (the same shape and hash its LanguagePacksCache writes). code-server reads it when it starts,
 * before it has scanned any extension, so a fresh run must find it already there.
 */
export function languagePacksJson(extensionDirs: string[]): Record<string, unknown> {
  const packs: Record<string, { hash: string; extensions: unknown[]; translations: Record<string, string>; label: string; ids: string[] }> = {};
  for (const dir of extensionDirs) {
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
      name: string;
      publisher: string;
      version: string;
      contributes?: { localizations?: Localization[] };
    };
    const id = `${manifest.publisher}.${manifest.name}`.toLowerCase();
    for (const loc of manifest.contributes?.localizations ?? []) {
      const pack = (packs[loc.languageId] ??= {
        hash: '',
        extensions: [],
        translations: {},
        label: loc.localizedLanguageName ?? loc.languageName ?? loc.languageId,
        ids: [],
      });
      pack.extensions.push({ extensionIdentifier: { id }, version: manifest.version });
      pack.ids.push(id + manifest.version);
      for (const t of loc.translations) pack.translations[t.id] = path.join(dir, t.path);
    }
  }
  const result: Record<string, unknown> = {};
  for (const [language, { ids, ...pack }] of Object.entries(packs)) {
    const hash = createHash('md5');
    for (const id of ids) hash.update(id);
    result[language] = { ...pack, hash: hash.digest('hex') };
  }
  return result;
}
