// Project styles: the file's checks, `extends`, the one resolution of a style plus the caller's
// values into the request, and every refusal (each names the file, the style and the field).
import * as assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ValidationError } from '../../src/core/gateway/errors';
import {
  parseStyles,
  readStyles,
  resolveStyle,
  STYLE_DEFINITION_FIELDS,
  STYLE_OPTION_FIELDS,
  STYLES_FILE,
  type StylesSource,
  withStyle,
} from '../../src/core/requests/styleFile';
import { stylesSchema } from '../../src/core/requests/styleSchema';
import { joinPrompt, resolveStyledRequest } from '../../src/jobs/styledRequest';
import { styleInputOf } from '../../src/commands/common/commandArgs';
import { formArgs, toFormValues } from '../../src/studio/model/view';
import { testModel } from './support/models';

const FIXTURE_PNG = path.resolve(__dirname, '../../../test/fixtures/images/python.png');

const MODELS = [
  testModel({
    id: 'painter',
    supported_aspect_ratios: ['1:1', '16:9'],
    supported_quality: ['low', 'high'],
    supports_seed: true,
    max_input_references: 2,
    supports_edit: true,
    allowed_passthrough_parameters: ['moderation'],
  }),
  testModel({ id: 'sketcher', supported_aspect_ratios: ['1:1'], max_n: 2 }),
];

async function refusal(promise: Promise<unknown>): Promise<ValidationError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ValidationError, String(error));
    return error;
  }
  assert.fail('expected a refusal');
}

describe('styles: the file', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'gwi-styles-'));
    mkdirSync(path.join(root, 'art'));
    writeFileSync(path.join(root, 'art', 'ref.png'), readFileSync(FIXTURE_PNG));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const source = (styles: unknown, trusted = true): StylesSource => parseStyles(JSON.stringify({ styles }), STYLES_FILE, root, trusted);

  it('reads the file of the workspace folder; none is undefined; a file outside through a link is refused', async () => {
    assert.equal(await readStyles(root, true), undefined);
    mkdirSync(path.join(root, '.gateway-images'));
    writeFileSync(path.join(root, STYLES_FILE), JSON.stringify({ styles: { flat: { model: 'painter' } } }));
    assert.deepEqual([...(await readStyles(root, true))!.styles.keys()], ['flat']);
    const outside = mkdtempSync(path.join(os.tmpdir(), 'gwi-outside-'));
    try {
      writeFileSync(path.join(outside, 'styles.json'), '{"styles": {}}');
      rmSync(path.join(root, '.gateway-images'), { recursive: true });
      symlinkSync(outside, path.join(root, '.gateway-images'));
      const linked = await readStyles(root, true);
      assert.match(linked!.fileError!.message, /outside the workspace folder through a symbolic link/);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('a file that is not JSON or has no "styles" object refuses every style, naming the file', () => {
    const broken = parseStyles('{"styles": ', STYLES_FILE, root, true);
    assert.equal(broken.fileError!.message, '.gateway-images/styles.json: not valid JSON (line 1, column 12: a value expected (or a comma too many))');
    assert.throws(() => resolveStyle(broken, 'any'), /styles\.json: not valid JSON/);
    const trailing = parseStyles('{\n  "styles": {\n    "docs": {"model": "aurora-1"},\n  }\n}', STYLES_FILE, root, true);
    assert.match(trailing.fileError!.message, /not valid JSON \(line 4, column 3: a property name in double quotes expected \(or a comma too many\)\)/);
    assert.match(parseStyles('// ours\n{"styles": {}}', STYLES_FILE, root, true).fileError!.message, /line 1, column 1: a comment, which JSON does not allow/);
    assert.match(parseStyles('[]', STYLES_FILE, root, true).fileError!.message, /must be a JSON object with a "styles" object/);
    assert.match(parseStyles('{"styles": {}, "extra": 1}', STYLES_FILE, root, true).fileError!.message, /unknown field "extra"/);
  });

  it('a style written wrongly is refused by name and field; the others stay usable', () => {
    const styles = source({
      good: { model: 'painter' },
      typo: { modle: 'painter' },
      badN: { options: { n: 11 } },
      badQuality: { options: { quality: 'ultra' } },
      badRefs: { references: 'art/ref.png' },
      badParams: { options: { params: { moderation: ['low'] } } },
      badOption: { options: { style: 'vivid' } },
    });
    assert.deepEqual([...styles.styles.keys()], ['good']);
    const messages = Object.fromEntries([...styles.broken].map(([name, error]) => [name, [error.field, error.message]]));
    assert.deepEqual(messages.typo, [
      'style.modle',
      '.gateway-images/styles.json, style "typo", "modle": unknown field; allowed: description, extends, promptPrefix, promptSuffix, model, options, references, outputFolder, fileNamePattern',
    ]);
    assert.match(messages.badN![1]!, /style "badN", "options\.n": must be a whole number from 1 to 10; got 11/);
    assert.match(messages.badQuality![1]!, /"options\.quality": must be one of low, medium, high, auto; got "ultra"/);
    assert.match(messages.badRefs![1]!, /"references": must be a list of image paths/);
    assert.match(messages.badParams![1]!, /"options\.params": must be an object whose values are/);
    assert.match(messages.badOption![1]!, /"options\.style": unknown option; allowed: n, resolution/);
    assert.throws(() => resolveStyle(styles, 'typo'), /style "typo", "modle"/);
  });

  it("extends: own fields replace the parent's, options and params merge, the chain may be long", () => {
    const styles = source({
      base: {
        model: 'painter',
        promptSuffix: ', soft light',
        options: { quality: 'low', seed: 1, params: { moderation: 'low' } },
        references: ['art/ref.png'],
      },
      docs: { extends: 'base', promptPrefix: 'Flat:', options: { seed: 2, aspect_ratio: '16:9' } },
      hero: { extends: 'docs', options: { params: { extra: true } }, references: [] },
    });
    assert.deepEqual(resolveStyle(styles, 'hero'), {
      model: 'painter',
      promptPrefix: 'Flat:',
      promptSuffix: ', soft light',
      options: { quality: 'low', seed: 2, aspect_ratio: '16:9', params: { moderation: 'low', extra: true } },
      references: [],
    });
  });

  it('extends: a loop and a missing parent are refused, naming the chain', () => {
    const styles = source({ a: { extends: 'b' }, b: { extends: 'c' }, c: { extends: 'a' }, orphan: { extends: 'nobody' } });
    const loop = (() => {
      try {
        resolveStyle(styles, 'a');
      } catch (error) {
        return error as ValidationError;
      }
      return assert.fail('no refusal');
    })();
    assert.equal(loop.field, 'style.extends');
    assert.match(loop.message, /style "a", "extends": the styles extend each other in a loop: a → b → c → a/);
    assert.throws(() => resolveStyle(styles, 'orphan'), /style "orphan", "extends": extends "nobody", which \.gateway-images\/styles\.json does not define/);
    assert.throws(() => resolveStyle(styles, 'missing'), /has no style "missing"; its styles: a, b, c, orphan/);
  });

  it("the schema the editor checks with has exactly the fields the file checker accepts, and the catalog's models as suggestions", () => {
    const schema = stylesSchema(MODELS) as {
      properties: { styles: { additionalProperties: { properties: Record<string, { examples?: string[]; properties?: object }> } } };
    };
    const style = schema.properties.styles.additionalProperties.properties;
    assert.deepEqual(Object.keys(style).sort(), [...STYLE_DEFINITION_FIELDS].sort());
    assert.deepEqual(Object.keys(style.options!.properties!).sort(), [...STYLE_OPTION_FIELDS].sort());
    assert.deepEqual(style.model!.examples, ['painter', 'sketcher']);
  });

  it('Save as Style writes a style into the file (added, or replacing one of that name) and refuses a file it cannot read', () => {
    const first = withStyle(undefined, 'flat', { model: 'painter' });
    assert.deepEqual(JSON.parse(first), { styles: { flat: { model: 'painter' } } });
    const second = withStyle(first, 'flat', { model: 'sketcher', options: { n: 2 } });
    assert.deepEqual(JSON.parse(withStyle(second, 'bold', {})), { styles: { flat: { model: 'sketcher', options: { n: 2 } }, bold: {} } });
    assert.throws(() => withStyle('{"styles": ', 'x', {}), /styles\.json: not valid JSON \(line 1, column 12: .*\); fix it before saving a style into it/);
    assert.throws(() => withStyle('{"other": {}}', 'x', {}), /has no "styles" object/);
  });

  it('joins the words around the prompt with a space, none before punctuation', () => {
    assert.equal(joinPrompt('Watercolour:', ' a fox ', ', soft light'), 'Watercolour: a fox, soft light');
    assert.equal(joinPrompt(undefined, 'a fox', ''), 'a fox');
    assert.equal(joinPrompt('Flat', 'a fox', 'in blue.'), 'Flat a fox in blue.');
  });

  describe('resolution into the request', () => {
    const styles = () =>
      source({
        docs: {
          model: 'painter',
          promptPrefix: 'Flat illustration:',
          promptSuffix: ', pastel colours',
          options: { aspect_ratio: '16:9', quality: 'high', seed: 7, params: { moderation: 'low' } },
          references: ['art/ref.png'],
          outputFolder: 'docs/images',
          fileNamePattern: '{slug}-{index}',
        },
      });

    it('the style fills what the caller leaves; the caller wins; null clears', async () => {
      const styled = await resolveStyledRequest(styles(), 'docs', { prompt: 'a lighthouse', options: { seed: 9, quality: null } }, MODELS);
      assert.deepEqual(styled.request, {
        model: 'painter',
        prompt: 'Flat illustration: a lighthouse, pastel colours',
        aspect_ratio: '16:9',
        seed: 9,
        params: { moderation: 'low' },
      });
      assert.deepEqual(styled.references, [path.join(root, 'art', 'ref.png')]);
      assert.deepEqual(styled.output, { directory: path.join(root, 'docs', 'images'), pattern: '{slug}-{index}' });
      assert.deepEqual(styled.fromStyle.sort(), ['aspect_ratio', 'model', 'params.moderation', 'prompt', 'references'].sort());
      assert.equal(styled.style!.name, 'docs');
      assert.equal(styled.style!.file, STYLES_FILE);
      assert.deepEqual(styled.style!.values.references, ['art/ref.png']);
      assert.equal(styled.confirm, false);
    });

    it("the caller's own references come first; on a model that does not edit the style's are not sent, and it says so", async () => {
      const own = path.join(root, 'art', 'ref.png');
      const edit = await resolveStyledRequest(styles(), 'docs', { prompt: 'x', references: [own] }, MODELS);
      assert.deepEqual(edit.references, [own, own]);
      const sketch = await resolveStyledRequest(styles(), 'docs', { prompt: 'x', model: 'sketcher', options: { aspect_ratio: '1:1', params: null } }, MODELS);
      assert.deepEqual(sketch.references, []);
      assert.match(sketch.notes.join(' '), /reference images of style "docs" are not sent: sketcher does not edit/);
      assert.match(sketch.notes.join(' '), /sketcher ignores what the style sets for quality, seed/);
    });

    it("no style: the caller's values as they are (a spaced model id is left for the job, which trims it and says so), cleared ones left out", async () => {
      const plain = await resolveStyledRequest(undefined, undefined, { prompt: 'p', model: ' painter ', options: { n: 2, seed: null } }, MODELS);
      assert.deepEqual(plain.request, { model: ' painter ', prompt: 'p', n: 2 });
      assert.equal(plain.style, undefined);
      const styled = await resolveStyledRequest(styles(), 'docs', { prompt: 'x', model: ' sketcher ', options: { aspect_ratio: '1:1', params: null } }, MODELS);
      assert.equal(styled.request.model, ' sketcher ');
      assert.match(styled.notes.join(' '), /sketcher does not edit/, "the style still checks against the caller's model");
    });

    it('an untrusted workspace: the style applies, its output is ignored (said), and the request must be confirmed', async () => {
      const untrusted = parseStyles(
        JSON.stringify({ styles: { docs: { model: 'painter', outputFolder: 'out', fileNamePattern: '{slug}' } } }),
        STYLES_FILE,
        root,
        false,
      );
      const styled = await resolveStyledRequest(untrusted, 'docs', { prompt: 'x' }, MODELS);
      assert.equal(styled.confirm, true);
      assert.deepEqual(styled.output, {});
      assert.match(styled.notes.join(' '), /output folder and file name pattern of style "docs" are ignored: the workspace is not trusted/);
    });
  });

  describe('refusals, each naming the file, the style and the field', () => {
    const refuse = (definition: object, input: Parameters<typeof resolveStyledRequest>[2] = { prompt: 'x' }) =>
      refusal(resolveStyledRequest(source({ bad: definition }), 'bad', input, MODELS));

    it('an unknown model (kind unknown-model, the catalog as allowed)', async () => {
      const error = await refuse({ model: 'painter-9' });
      assert.equal(error.field, 'style.model');
      assert.equal(error.kind, 'unknown-model');
      assert.deepEqual(error.allowed, ['painter', 'sketcher']);
      assert.equal(error.message, '.gateway-images/styles.json, style "bad", "model": unknown model "painter-9"');
    });

    it("an option the model does not support (the style's model or the caller's)", async () => {
      const ratio = await refuse({ model: 'painter', options: { aspect_ratio: '21:9' } });
      assert.equal(ratio.field, 'style.options.aspect_ratio');
      assert.match(ratio.message, /style "bad", "options\.aspect_ratio": "aspect_ratio" must be one of 1:1, 16:9 for painter; got "21:9"/);
      assert.deepEqual(ratio.allowed, ['1:1', '16:9']);
      const n = await refuse({ options: { n: 4 } }, { prompt: 'x', model: 'sketcher' });
      assert.match(n.message, /"options\.n": "n" must be a whole number from 1 to 2 for sketcher; got 4/);
      const param = await refuse({ model: 'painter', options: { params: { style: 'vivid' } } });
      assert.equal(param.field, 'style.options.params.style');
      assert.match(param.message, /Provider parameter "style" is not accepted/);
    });

    it("the caller's own bad value is not blamed on the style", async () => {
      const styled = await resolveStyledRequest(source({ ok: { model: 'painter' } }), 'ok', { prompt: 'x', options: { aspect_ratio: '21:9' } }, MODELS);
      assert.equal(styled.request.aspect_ratio, '21:9'); // left to the job's validation, which names "aspect_ratio"
    });

    it('a missing reference file', async () => {
      const error = await refuse({ references: ['art/ref.png', 'art/missing.png'] });
      assert.equal(error.field, 'style.references[1]');
      assert.match(error.message, /style "bad", "references\[1\]": Cannot read "missing\.png": the file does not exist/);
    });

    it('a reference that is not an image by its bytes', async () => {
      writeFileSync(path.join(root, 'art', 'notes.png'), 'just text');
      assert.match((await refuse({ references: ['art/notes.png'] })).message, /"references\[0\]": "notes\.png" is not a PNG, JPEG or WebP image/);
    });

    it('a reference outside the workspace: by its path, and through a symbolic link', async () => {
      const byPath = await refuse({ references: ['../elsewhere.png'] });
      assert.match(byPath.message, /"references\[0\]": \.\.\/elsewhere\.png is outside the workspace folder/);
      const outside = mkdtempSync(path.join(os.tmpdir(), 'gwi-outside-'));
      try {
        writeFileSync(path.join(outside, 'secret.png'), readFileSync(FIXTURE_PNG));
        symlinkSync(outside, path.join(root, 'linked'));
        const byLink = await refuse({ references: ['linked/secret.png'] });
        assert.match(byLink.message, /"references\[0\]": linked\/secret\.png leads outside the workspace folder through a symbolic link/);
      } finally {
        rmSync(outside, { recursive: true, force: true });
      }
    });

    it('more references than the model accepts', async () => {
      const own = path.join(root, 'art', 'ref.png');
      const error = await refuse({ model: 'painter', references: ['art/ref.png', 'art/ref.png'] }, { prompt: 'x', references: [own] });
      assert.match(error.message, /"references": painter accepts at most 2 reference images; the style adds 2 to the 1 given/);
    });

    it('an output folder outside the workspace, absolute, or through a link (the one rule of output folders, origin: a style)', async () => {
      const climbing = await refuse({ outputFolder: '../out' });
      assert.equal(climbing.field, 'style.outputFolder');
      assert.match(
        climbing.message,
        /, style "[^"]+", "outputFolder": \.\.\/out is outside the workspace folder; a project style may only choose a folder inside it$/,
      );
      assert.match(
        (await refuse({ outputFolder: '/tmp/out' })).message,
        /"outputFolder": \/tmp\/out is outside the workspace folder; a project style may only/,
      );
      assert.match((await refuse({ outputFolder: '~/out' })).message, /"outputFolder": ~\/out is outside the workspace folder/);
      symlinkSync(os.tmpdir(), path.join(root, 'tmp-link'));
      const linked = await refuse({ outputFolder: 'tmp-link/x' });
      assert.equal(linked.field, 'style.outputFolder');
      assert.match(linked.message, /"outputFolder": tmp-link\/x leads outside the workspace folder through a symbolic link/);
    });

    it('a loop of extends, and a style that is not in the file', async () => {
      const loop = await refusal(resolveStyledRequest(source({ a: { extends: 'b' }, b: { extends: 'a' } }), 'a', { prompt: 'x' }, MODELS));
      assert.equal(loop.field, 'style.extends');
      const missing = await refusal(resolveStyledRequest(source({ a: {} }), 'nope', { prompt: 'x' }, MODELS));
      assert.equal(missing.field, 'style');
      assert.deepEqual(missing.allowed, ['a']);
      const noFile = await refusal(resolveStyledRequest(undefined, 'a', { prompt: 'x' }, MODELS));
      assert.match(noFile.message, /There is no styles file: \.gateway-images\/styles\.json does not exist/);
    });
  });

  describe("the studio's form as the caller's values", () => {
    const form = {
      model: 'painter',
      prompt: 'a fox',
      n: 1,
      aspect_ratio: '1:1',
      quality: undefined,
      seed: '7',
      params: {},
      references: [],
      style: 'docs',
      fromStyle: ['model', 'quality'] as ('model' | 'quality')[],
    };

    it("a field showing the style's value is left to the style; one the person emptied clears it", async () => {
      const args = formArgs(form);
      assert.equal(args.model, '');
      assert.equal(args.aspect_ratio, '1:1');
      assert.equal(args.seed, 7);
      assert.equal('quality' in args, false);
      assert.equal(args.size, null);
      assert.equal(args.params, null);
      const styles = source({ docs: { model: 'painter', promptPrefix: 'Flat:', options: { quality: 'high', size: '2K', seed: 1 } } });
      const styled = await resolveStyledRequest(styles, 'docs', styleInputOf(args), MODELS);
      assert.deepEqual(styled.request, { model: 'painter', prompt: 'Flat: a fox', n: 1, aspect_ratio: '1:1', quality: 'high', seed: 7 });
    });

    it('a past request filled into the form (Regenerate) is sent as it was, with no style', async () => {
      const past = { model: 'painter', prompt: 'Flat: a fox, soft', n: 2, aspect_ratio: '16:9', seed: 3, params: { moderation: 'low' } };
      const args = formArgs(toFormValues(past, []));
      assert.equal(args.style, undefined);
      assert.deepEqual((await resolveStyledRequest(undefined, undefined, styleInputOf(args), MODELS)).request, past);
    });
  });
});
