import * as assert from 'node:assert/strict';
import { expandFileNamePattern, type NameFields, sanitizeFileName, slugify, withCollisionSuffix } from '../../src/core/files/naming';

/** What must hold for every produced name. */
function assertSafe(name: string, maxLength = 120): void {
  assert.ok(name.length > 0, 'empty name');
  assert.ok(Array.from(name).length <= maxLength, `too long: ${name.length}`);
  // eslint-disable-next-line no-control-regex -- control characters are among the unsafe ones checked for.
  assert.ok(!/[/\\<>:"|?*\u0000-\u001f]/.test(name), `unsafe character in ${JSON.stringify(name)}`);
  assert.ok(!name.includes('..'), `'..' in ${name}`);
  assert.ok(!/[. ]$/.test(name), `trailing dot/space in ${name}`);
  assert.ok(!/^(con|prn|aux|nul|com[1-9]|lpt[1-9])$/i.test(name.split('.')[0]!.trimEnd()), `reserved: ${name}`);
}

describe('naming', () => {
  describe('slugify', () => {
    it('joins lower-cased ASCII words with dashes', () => {
      assert.equal(slugify('A Red Fox, jumping over 2 dogs!'), 'a-red-fox-jumping-over-2-dogs');
      assert.equal(slugify('  --hello__world--  '), 'hello-world');
    });

    it('transliterates Cyrillic, including х, щ, ы and dropping ь/ъ', () => {
      assert.equal(slugify('Хороший кот'), 'khoroshiy-kot');
      assert.equal(slugify('хх'), 'khkh');
      assert.equal(slugify('щука'), 'shchuka');
      assert.equal(slugify('рыба'), 'ryba');
      assert.equal(slugify('объезд'), 'obezd');
      assert.equal(slugify('соль'), 'sol');
      assert.equal(slugify('Ёжик в тумане'), 'yozhik-v-tumane');
      assert.equal(slugify('Съешь же ещё этих мягких французских булок'), 'sesh-zhe-eshchyo-etikh-myagkikh', 'bounded at a word');
      assert.equal(slugify('Юля, Цапля, Чай, Шар, Жук, Яма, Эхо, Йод'), 'yulya-tsaplya-chay-shar-zhuk-yama-ekho');
    });

    it('transliterates the whole Russian alphabet', () => {
      assert.equal(slugify('абвгдеёжзийклмнопрстуфхцчшщъыьэюя', 200), 'abvgdeyozhziyklmnoprstufkhtschshshchyeyuya');
    });

    it('strips Latin accents and drops other scripts', () => {
      assert.equal(slugify('Crème brûlée à la façon'), 'creme-brulee-a-la-facon');
      assert.equal(slugify('Straße'), 'strasse');
      assert.equal(slugify('猫 cat 🐱 γάτα'), 'cat');
      assert.equal(slugify("don't stop"), 'dont-stop');
    });

    it("returns 'image' when nothing is left", () => {
      assert.equal(slugify(''), 'image');
      assert.equal(slugify('   '), 'image');
      assert.equal(slugify('日本語のテキスト'), 'image');
      assert.equal(slugify('!!! ??? ...'), 'image');
    });

    it('bounds very long prompts, preferring a word boundary, never ending with a dash', () => {
      const long = 'a beautiful landscape with mountains '.repeat(200);
      const slug = slugify(long);
      assert.ok(slug.length <= 40);
      assert.equal(slug, 'a-beautiful-landscape-with-mountains-a');
      assert.equal(slugify('x'.repeat(100)), 'x'.repeat(40), 'a single long word is cut hard');
      assert.equal(slugify('abc def', 4), 'abc');
      assert.equal(slugify('abc def', 3), 'abc');
      assert.equal(slugify('abcdef ghi', 10), 'abcdef-ghi');
      assert.equal(slugify('abcdef ghij', 10), 'abcdef');
      assert.ok(slugify('лес '.repeat(100), 10).length <= 10);
    });
  });

  describe('sanitizeFileName', () => {
    it('keeps ordinary names, including non-ASCII letters', () => {
      assert.equal(sanitizeFileName('2024-05-01-red-fox-1'), '2024-05-01-red-fox-1');
      assert.equal(sanitizeFileName('кот в сапогах'), 'кот в сапогах');
    });

    it('removes path separators and parent references', () => {
      for (const input of ['../../etc/passwd', '..\\..\\Windows\\win.ini', '/abs/path', 'a/b\\c', '..', '.', '...']) {
        const out = sanitizeFileName(input);
        assertSafe(out);
        assert.ok(!out.startsWith('.'), out);
      }
      assert.equal(sanitizeFileName('a/b\\c'), 'a-b-c');
      assert.equal(sanitizeFileName('..'), 'image');
      assert.equal(sanitizeFileName('a..b'), 'a.b');
    });

    it('removes control characters, bidi overrides and Windows-forbidden characters', () => {
      assert.equal(sanitizeFileName('a\u0000b\nc\td\u007f'), 'abcd');
      assert.equal(sanitizeFileName('invoice\u202Egnp.exe'), 'invoicegnp.exe');
      assert.equal(sanitizeFileName('a<b>c:d"e|f?g*h'), 'a-b-c-d-e-f-g-h');
    });

    it('removes trailing dots and spaces, and leading dots', () => {
      assert.equal(sanitizeFileName('name. . '), 'name');
      assert.equal(sanitizeFileName('  .hidden'), 'hidden');
    });

    it("suffixes reserved Windows names with '_', case-insensitively and with extensions", () => {
      assert.equal(sanitizeFileName('CON'), 'CON_');
      assert.equal(sanitizeFileName('con'), 'con_');
      assert.equal(sanitizeFileName('Prn.txt'), 'Prn_.txt');
      assert.equal(sanitizeFileName('aux.tar.gz'), 'aux_.tar.gz');
      assert.equal(sanitizeFileName('NUL .png'), 'NUL_.png');
      for (let i = 1; i <= 9; i++) {
        assert.equal(sanitizeFileName(`com${i}`), `com${i}_`);
        assert.equal(sanitizeFileName(`LPT${i}.png`), `LPT${i}_.png`);
      }
      assert.equal(sanitizeFileName('COM¹'), 'COM¹_');
      // Only exact device names are reserved.
      assert.equal(sanitizeFileName('console'), 'console');
      assert.equal(sanitizeFileName('com10'), 'com10');
      assert.equal(sanitizeFileName('icon.png'), 'icon.png');
    });

    it('is never empty', () => {
      for (const input of ['', '   ', '\u0000\u0001', '. .', '...', '\u202e']) {
        assert.equal(sanitizeFileName(input), 'image', JSON.stringify(input));
      }
      assert.equal(sanitizeFileName('////'), '----');
      assert.equal(sanitizeFileName('', 3), 'ima');
    });

    it('bounds the length without splitting characters', () => {
      assert.equal(sanitizeFileName('a'.repeat(500)).length, 120);
      assert.equal(sanitizeFileName('a'.repeat(500), 10), 'a'.repeat(10));
      const emoji = sanitizeFileName('🐱'.repeat(100), 7);
      assert.equal(emoji, '🐱'.repeat(7));
      // 4-byte characters: also bounded in bytes (file systems limit names to 255 bytes).
      assert.ok(Buffer.byteLength(sanitizeFileName('🐱'.repeat(200))) <= 240);
      assert.equal(sanitizeFileName('abc.     x', 5), 'abc', 'trailing dots/spaces trimmed after cutting');
      assert.equal(sanitizeFileName('CONSOLE', 3), 'CO_', 'a cut that yields a device name is fixed');
    });
  });

  describe('expandFileNamePattern', () => {
    const fields: NameFields = {
      date: new Date(2024, 0, 5, 7, 8, 9), // local time
      prompt: 'A red fox in the snow',
      model: 'flux-pro',
      index: 3,
      seed: 42,
      sourceName: 'photo',
    };

    it('expands every placeholder', () => {
      assert.equal(
        expandFileNamePattern('{date}_{time}_{slug}_{model}_{index}_{seed}_{name}', fields),
        '2024-01-05_070809_a-red-fox-in-the-snow_flux-pro_3_42_photo',
      );
      assert.equal(expandFileNamePattern('{date}-{slug}-{model}-{index}', fields), '2024-01-05-a-red-fox-in-the-snow-flux-pro-3');
    });

    it('uses local time for {date} and {time}', () => {
      const d = new Date(2023, 11, 31, 23, 59, 58);
      assert.equal(expandFileNamePattern('{date} {time}', { ...fields, date: d }), '2023-12-31 235958');
    });

    it('leaves {seed} and {name} empty when absent, without dangling joiners', () => {
      const f = { ...fields, seed: undefined, sourceName: undefined };
      assert.equal(expandFileNamePattern('{slug}-{seed}-{index}', f), 'a-red-fox-in-the-snow-3');
      assert.equal(expandFileNamePattern('{slug}-{seed}', f), 'a-red-fox-in-the-snow');
      assert.equal(expandFileNamePattern('{name}-{index}', f), '3');
      assert.equal(expandFileNamePattern('{seed}', f), 'image');
      assert.equal(expandFileNamePattern('{index}-{seed}', { ...fields, seed: 0 }), '3-0', 'seed 0 is a value');
    });

    it('keeps unknown placeholders as literal (sanitised) text', () => {
      assert.equal(expandFileNamePattern('{foo}-{index}', fields), '{foo}-3');
      assert.equal(expandFileNamePattern('{a/b}-{index}', fields), '{a-b}-3');
      assert.equal(expandFileNamePattern('{index', fields), '{index');
    });

    it('sanitises model ids with separators so no folder is created', () => {
      const out = expandFileNamePattern('{date}-{slug}-{model}-{index}', { ...fields, model: 'acme/x' });
      assert.equal(out, '2024-01-05-a-red-fox-in-the-snow-acme-x-3');
      for (const model of ['acme/x', '../../evil', 'a\\b:c', 'CON', 'gpt:image/1?*']) {
        const name = expandFileNamePattern('{model}', { ...fields, model });
        assertSafe(name);
      }
      assert.equal(expandFileNamePattern('{model}', { ...fields, model: '../../evil' }), '-.-evil');
    });

    it('never yields a separator, even from separators in the pattern itself', () => {
      for (const pattern of ['../{slug}', 'sub/dir/{index}', '..\\{model}', '{name}', 'C:\\x\\{slug}']) {
        const name = expandFileNamePattern(pattern, { ...fields, sourceName: '../../x/y' });
        assertSafe(name);
      }
      assert.equal(expandFileNamePattern('sub/dir/{index}', fields), 'sub-dir-3');
    });

    it('bounds the result for very long prompts and models', () => {
      const name = expandFileNamePattern('{date}-{slug}-{model}-{index}', {
        ...fields,
        prompt: 'word '.repeat(10_000),
        model: 'm'.repeat(1000),
      });
      assertSafe(name);
      assert.ok(name.startsWith('2024-01-05-word-word-'));
      assert.equal(name.length, 120);
    });

    it('yields a safe name for a Cyrillic prompt and reserved names', () => {
      assert.equal(expandFileNamePattern('{slug}', { ...fields, prompt: 'Хитрый лис' }), 'khitryy-lis');
      assert.equal(expandFileNamePattern('{name}', { ...fields, sourceName: 'nul' }), 'nul_');
    });

    it('tolerates an invalid date by leaving date and time empty', () => {
      assert.equal(expandFileNamePattern('{date}-{time}-{index}', { ...fields, date: new Date(NaN) }), '3');
    });
  });

  describe('withCollisionSuffix', () => {
    it('numbers from -2', () => {
      assert.equal(withCollisionSuffix('fox', 0), 'fox');
      assert.equal(withCollisionSuffix('fox', 1), 'fox-2');
      assert.equal(withCollisionSuffix('fox', 2), 'fox-3');
      assert.equal(withCollisionSuffix('fox', 99), 'fox-100');
    });

    it('rejects negative and fractional attempts', () => {
      assert.throws(() => withCollisionSuffix('fox', -1), RangeError);
      assert.throws(() => withCollisionSuffix('fox', 1.5), RangeError);
    });
  });
});
