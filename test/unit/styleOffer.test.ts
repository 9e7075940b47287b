// Which styles a command offers (issue 42): the project's whenever it has a styles file, the
// built-in starters only without one and never beside or over a project style; a Style step of its
// own only where the project has styles; the last style used picked first while still on offer; the
// review's Style row lists only the starters the chosen model makes; the person's choices survive a
// change of style.
import * as assert from 'node:assert/strict';
import { starterSource } from '../../src/core/requests/starterStyles';
import { parseStyles, STYLES_FILE } from '../../src/core/requests/styleFile';
import { asksStyleFirst, optionsAfterStyleChange, preselectedStyle, stylesForModel, stylesOnOffer } from '../../src/core/requests/styleOffer';
import { resolveStyledRequest } from '../../src/jobs/styledRequest';
import { testModel } from './support/models';

const WIDE = testModel({ id: 'wide', max_price_per_image: 5, supported_aspect_ratios: ['1:1', '16:9'], supported_quality: ['low', 'high'] });
const CHEAP = testModel({ id: 'cheap', max_price_per_image: 1, supported_aspect_ratios: ['1:1'] });
const MODELS = [WIDE, CHEAP];

const project = (text: string) => parseStyles(text, STYLES_FILE, '/ws', true);
const starters = (preferred?: string) => starterSource('/ws', MODELS, preferred);

describe('Styles on offer (issue 42)', () => {
  it('without a styles file: the starters the catalog makes; none when it makes none', () => {
    const offered = stylesOnOffer(undefined, () => starters());
    assert.deepEqual([...(offered?.styles.keys() ?? [])], ['Article cover 16:9', 'Photo-real', 'Flat illustration', 'Sketch']);
    assert.equal(
      stylesOnOffer(undefined, () => starterSource('/ws', [])),
      undefined,
    );
  });

  it('with a styles file: only the project styles, even an empty or a broken file; the starters are not even made', () => {
    let made = 0;
    const count = () => (made++, starters());
    const mine = project('{"styles":{"Sketch":{"promptSuffix":", ours"}}}');
    assert.equal(stylesOnOffer(mine, count), mine);
    const empty = project('{"styles":{}}');
    assert.equal(stylesOnOffer(empty, count), empty);
    const broken = project('not json');
    assert.equal(stylesOnOffer(broken, count), broken);
    assert.equal(made, 0);
  });

  it('a project style is never overridden by a starter of the same name', async () => {
    const offered = stylesOnOffer(project('{"styles":{"Sketch":{"promptSuffix":", ours"}}}'), () => starters())!;
    const styled = await resolveStyledRequest(offered, 'Sketch', { prompt: 'A kite', model: 'cheap' }, MODELS);
    assert.equal(styled.request.prompt, 'A kite, ours');
    // A starter's name is refused where the project has its own file.
    await assert.rejects(resolveStyledRequest(offered, 'Photo-real', { prompt: 'A kite', model: 'cheap' }, MODELS), /has no style "Photo-real"/);
  });

  it('a Style step of its own only where the project has styles (or a file to fix)', () => {
    assert.equal(asksStyleFirst(undefined), false, 'no styles file');
    assert.equal(asksStyleFirst(starters()), false, 'starters go in the review');
    assert.equal(asksStyleFirst(project('{"styles":{}}')), false, 'a file without styles');
    assert.equal(asksStyleFirst(project('{"styles":{"docs":{"promptPrefix":"Docs:"}}}')), true);
    assert.equal(asksStyleFirst(project('{"styles":{"bad":{"modle":"x"}}}')), true, 'a broken style is shown to be fixed');
    assert.equal(asksStyleFirst(project('not json')), true, 'a broken file is shown to be fixed');
  });

  it('the last style used is picked first while it is still on offer', () => {
    const mine = project('{"styles":{"docs":{"promptPrefix":"Docs:"},"hero":{"promptPrefix":"Hero:"}}}');
    assert.equal(preselectedStyle('hero', mine), 'hero');
    assert.equal(preselectedStyle('gone', mine), undefined, 'removed from the file');
    assert.equal(preselectedStyle('', mine), undefined, 'No style last time');
    assert.equal(preselectedStyle(undefined, mine), undefined);
    assert.equal(preselectedStyle('Sketch', mine), undefined, 'a starter, once the project has its own file');
    assert.equal(preselectedStyle('Sketch', starters()), 'Sketch');
    assert.equal(preselectedStyle('Sketch', undefined), undefined);
  });

  it("the review's Style row: every project style, the starters the chosen model makes (made with it)", () => {
    assert.deepEqual(stylesForModel(starters('cheap'), 'cheap'), ['Photo-real', 'Flat illustration', 'Sketch']);
    assert.deepEqual(stylesForModel(starters('wide'), 'wide'), ['Article cover 16:9', 'Photo-real', 'Flat illustration', 'Sketch']);
    assert.deepEqual(stylesForModel(starters('cheap'), undefined), ['Article cover 16:9', 'Photo-real', 'Flat illustration', 'Sketch'], 'a comparison');
    const mine = project('{"styles":{"docs":{"model":"wide"}}}');
    assert.deepEqual(stylesForModel(mine, 'cheap'), ['docs']);
    assert.deepEqual(stylesForModel(undefined, 'cheap'), []);
  });

  it('a change of style keeps what the person chose in the review; without a style the remembered choices come back', () => {
    type Chosen = { n?: number; aspect_ratio?: string; seed?: number; quality?: string };
    const current: Chosen = { n: 2, aspect_ratio: '1:1', seed: 4 };
    const remembered: Chosen = { n: 3, quality: 'low' };
    assert.deepEqual(optionsAfterStyleChange(current, new Set<keyof Chosen>(['n']), true, remembered), { n: 2 });
    assert.deepEqual(optionsAfterStyleChange(current, new Set<keyof Chosen>(['n']), false, remembered), { n: 2, quality: 'low' });
    assert.deepEqual(optionsAfterStyleChange(current, new Set(), true, remembered), {});
  });
});
