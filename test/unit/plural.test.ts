// Counted messages follow the display language's plural rules: English one/other, Russian
// one/few/many/other (1 изображение, 2 изображения, 5 изображений, 21 изображение…), each form its
// own key of the l10n bundle, translated from the real bundles here.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as l10n from '@vscode/l10n';
import { pluralCategory, pluralKey, pluralTable, setPluralLanguage, trPlural } from '../../src/core/common/plural';

const ROOT = path.resolve(__dirname, '../../..');
const bundle = (file: string) => JSON.parse(readFileSync(path.join(ROOT, 'l10n', file), 'utf8')) as Record<string, string>;
const en = bundle('bundle.l10n.json');
const ru = bundle('bundle.l10n.ru.json');

/** What activation does (src/host/l10n.ts): VS Code's bundle for the display language, and that language. */
function useBundle(table: Record<string, string> | undefined, language: string): void {
  l10n.config({ contents: table ?? {} });
  setPluralLanguage(language);
}

const SAVED = { one: 'Saved {0} image to {1}. Cost {2}, balance {3}.', other: 'Saved {0} images to {1}. Cost {2}, balance {3}.' };
const saved = (n: number) => trPlural(n, SAVED, n, 'out', '1 ₽', '2 ₽');

describe('plural forms', () => {
  afterEach(() => useBundle(undefined, 'en'));

  it('Intl.PluralRules categories: Russian one/few/many, English one/other', () => {
    const ruCategories = [1, 2, 5, 11, 21, 22, 25, 0, 101, 111, 1.5].map((n) => pluralCategory(n, 'ru'));
    assert.deepEqual(ruCategories, ['one', 'few', 'many', 'many', 'one', 'few', 'many', 'many', 'one', 'many', 'other']);
    assert.deepEqual(
      [0, 1, 2, 21].map((n) => pluralCategory(n, 'en')),
      ['other', 'one', 'other', 'other'],
    );
    assert.equal(pluralCategory(3, 'not a language tag!'), 'other');
  });

  it('English: "1 image", "2 images" (no "image(s)")', () => {
    useBundle(undefined, 'en');
    assert.equal(saved(1), 'Saved 1 image to out. Cost 1 ₽, balance 2 ₽.');
    assert.equal(saved(2), 'Saved 2 images to out. Cost 1 ₽, balance 2 ₽.');
    assert.equal(saved(21), 'Saved 21 images to out. Cost 1 ₽, balance 2 ₽.');
    assert.equal(trPlural(1, { one: '{0} request', other: '{0} requests' }, 1), '1 request');
    assert.equal(trPlural(0, { one: '{0} request', other: '{0} requests' }, 0), '0 requests');
  });

  it('Russian: 1, 2, 5, 11, 21, 22, 25 images from the real bundle', () => {
    useBundle(ru, 'ru');
    const word = (n: number) => saved(n).split(' ')[2];
    assert.deepEqual(
      [1, 2, 5, 11, 21, 22, 25].map((n) => `${n} ${word(n)}`),
      ['1 изображение', '2 изображения', '5 изображений', '11 изображений', '21 изображение', '22 изображения', '25 изображений'],
    );
    assert.equal(saved(5), 'Сохранено 5 изображений в out. Стоимость 1 ₽, баланс 2 ₽.');
    const requests = (n: number) => trPlural(n, { one: '{0} request', other: '{0} requests' }, n);
    assert.deepEqual([1, 3, 12, 21].map(requests), ['1 запрос', '3 запроса', '12 запросов', '21 запрос']);
  });

  it('a form nobody translated falls back to the "other" translation, never shows its marker', () => {
    const partial = { ...ru };
    delete partial[`${SAVED.other} [few]`];
    useBundle(partial, 'ru');
    assert.equal(saved(2), 'Сохранено 2 изображения в out. Стоимость 1 ₽, баланс 2 ₽.');
    useBundle(undefined, 'pl'); // Polish has few/many too, and no bundle here
    assert.equal(saved(3), 'Saved 3 images to out. Cost 1 ₽, balance 2 ₽.');
  });

  it('pluralTable gives the webview every form with its placeholders', () => {
    useBundle(ru, 'ru');
    assert.deepEqual(pluralTable({ one: 'Saved {0} image. Cost {1}.', other: 'Saved {0} images. Cost {1}.' }), {
      one: 'Сохранено {0} изображение. Стоимость {1}.',
      few: 'Сохранено {0} изображения. Стоимость {1}.',
      many: 'Сохранено {0} изображений. Стоимость {1}.',
      other: 'Сохранено {0} изображения. Стоимость {1}.',
    });
  });

  it('the bundles carry all four forms of every counted message, and no "(s)" message is left', () => {
    const families = Object.keys(en)
      .filter((k) => k.endsWith(' [few]'))
      .map((k) => k.slice(0, -' [few]'.length));
    assert.ok(families.length >= 14, `only ${families.length} counted messages`);
    for (const other of families) {
      assert.ok(`${other} [many]` in en, `${other} has no [many] form`);
      for (const category of ['few', 'many', 'other']) {
        const key = pluralKey({ one: '', other }, category);
        assert.ok(ru[key] && !ru[key].includes('['), `Russian lacks the ${category} form of ${other}`);
      }
    }
    const leftovers = Object.keys(en).filter((k) => /\w\((s|es)\)/.test(k.replace(/http\(s\)/g, '')));
    assert.deepEqual(leftovers, []);
  });
});
