import * as assert from 'node:assert/strict';
import { isPixelSize, nearestAspectRatio, parseAspectRatio } from '../../src/core/requests/aspectRatio';

describe('aspect ratio choice', () => {
  const ratios = ['1:1', '16:9', '9:16', '4:3', '3:4'];

  it('parses ratios and refuses anything else', () => {
    assert.equal(parseAspectRatio('16:9'), 16 / 9);
    assert.equal(parseAspectRatio('2.39:1'), 2.39);
    for (const bad of ['16x9', '0:1', '1:0', 'auto', '']) assert.equal(parseAspectRatio(bad), undefined, bad);
  });

  it('picks the exact ratio when the model has it', () => {
    assert.equal(nearestAspectRatio(4000, 3000, ratios), '4:3');
    assert.equal(nearestAspectRatio(1080, 1920, ratios), '9:16');
    assert.equal(nearestAspectRatio(512, 512, ratios), '1:1');
  });

  it('picks the nearest on a log scale otherwise', () => {
    assert.equal(nearestAspectRatio(3000, 2000, ratios), '4:3'); // 1.5: nearer 4:3 (1.33) than 16:9 (1.78)
    assert.equal(nearestAspectRatio(2100, 1000, ratios), '16:9');
    assert.equal(nearestAspectRatio(2000, 3000, ['1:1', '16:9', '9:16', '21:9', '3:2', '2:3']), '2:3');
    assert.equal(nearestAspectRatio(1000, 1100, ratios), '1:1');
  });

  it('gives nothing for a model without ratios or a broken size', () => {
    assert.equal(nearestAspectRatio(4000, 3000, []), undefined);
    assert.equal(nearestAspectRatio(0, 3000, ratios), undefined);
    assert.equal(nearestAspectRatio(4000, 3000, ['wide']), undefined);
  });

  it('knows explicit pixel sizes', () => {
    assert.equal(isPixelSize('1024x768'), true);
    assert.equal(isPixelSize('2K'), false);
    assert.equal(isPixelSize(undefined), false);
  });
});
