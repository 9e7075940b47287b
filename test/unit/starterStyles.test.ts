// Starter styles: resolved against the catalog by its fields (a style no model can make is not
// offered), written into a styles file that the reader and the JSON schema both accept, and
// applied like a project style.
import * as assert from 'node:assert/strict';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { isStarterSource, STARTER_STYLES_FILE, starterSource, starterStyles } from '../../src/core/requests/starterStyles';
import { parseStyles, STYLES_FILE, withStyle } from '../../src/core/requests/styleFile';
import { stylesSchema } from '../../src/core/requests/styleSchema';
import { resolveStyledRequest } from '../../src/jobs/styledRequest';
import { testModel } from './support/models';

const WIDE = testModel({ id: 'wide', max_price_per_image: 5, supported_aspect_ratios: ['1:1', '16:9'], supported_quality: ['low', 'high'] });
const CHEAP = testModel({ id: 'cheap', max_price_per_image: 1, supported_aspect_ratios: ['1:1'] });
const CLEAR = testModel({ id: 'clear', max_price_per_image: 3, supported_background: ['auto', 'transparent'], supported_aspect_ratios: ['1:1', '4:3'] });
const EDIT_ONLY = testModel({
  id: 'edit-only',
  max_price_per_image: 0.5,
  supports_generation: false,
  supported_aspect_ratios: ['16:9'],
  supported_background: ['transparent'],
});

describe('Starter styles', () => {
  it('each style gets a model that offers what it needs; the cheapest such model by default', () => {
    const styles = starterStyles([WIDE, CHEAP, CLEAR, EDIT_ONLY]);
    assert.deepEqual([...styles.keys()], ['Article cover 16:9', 'Icon, transparent', 'Photo-real', 'Flat illustration', 'Sketch']);
    assert.equal(styles.get('Article cover 16:9')?.model, 'wide');
    assert.deepEqual(styles.get('Article cover 16:9')?.options, { aspect_ratio: '16:9', quality: 'high' });
    assert.equal(styles.get('Icon, transparent')?.model, 'clear');
    assert.deepEqual(styles.get('Icon, transparent')?.options, { background: 'transparent', aspect_ratio: '1:1' });
    // A model that does not generate is never chosen, however cheap.
    assert.equal(styles.get('Sketch')?.model, 'cheap');
    assert.equal(styles.get('Photo-real')?.options, undefined, 'cheap lists no quality: none is set');
  });

  it('a style whose options no model offers is not offered', () => {
    const styles = starterStyles([CHEAP]);
    assert.deepEqual([...styles.keys()], ['Photo-real', 'Flat illustration', 'Sketch']);
    assert.equal(starterStyles([]).size, 0);
  });

  it('the preferred model is used when it offers what the style needs', () => {
    const styles = starterStyles([WIDE, CHEAP, CLEAR], 'clear');
    assert.equal(styles.get('Sketch')?.model, 'clear');
    assert.equal(styles.get('Article cover 16:9')?.model, 'wide');
  });

  it('saved into a styles file, every starter style is valid for the reader and against the JSON schema', () => {
    const models = [WIDE, CHEAP, CLEAR];
    const validate = new AjvJsonSchemaValidator().getValidator(stylesSchema(models));
    let text = withStyle(undefined, 'mine', { promptPrefix: 'Mine:' });
    for (const [name, style] of starterStyles(models)) text = withStyle(text, name, style);
    const verdict = validate(JSON.parse(text));
    assert.ok(verdict.valid, verdict.errorMessage);
    const read = parseStyles(text, STYLES_FILE, '/ws', true);
    assert.equal(read.fileError, undefined);
    assert.equal(read.broken.size, 0, [...read.broken.values()].map((e) => e.message).join('\n'));
    assert.deepEqual([...read.styles.keys()], ['mine', 'Article cover 16:9', 'Icon, transparent', 'Photo-real', 'Flat illustration', 'Sketch']);
  });

  it('a starter style makes the request like a project style (words after the prompt, its options, trusted)', async () => {
    const source = starterSource('/ws', [WIDE, CHEAP]);
    assert.ok(isStarterSource(source));
    assert.equal(source.file, STARTER_STYLES_FILE);
    const styled = await resolveStyledRequest(source, 'Article cover 16:9', { prompt: 'A harbour' }, [WIDE, CHEAP]);
    assert.equal(styled.request.model, 'wide');
    assert.equal(styled.request.aspect_ratio, '16:9');
    assert.match(styled.request.prompt, /^A harbour, wide editorial cover illustration/);
    assert.equal(styled.confirm, false);
    assert.ok(!isStarterSource(parseStyles('{"styles":{}}', STYLES_FILE, '/ws', true)));
  });
});
