// The mend of undici for nodejs/undici#5360 (patches/undici@7.30.2.patch, a unified diff), applied
// to undici's code as it is loaded, never to node_modules: by esbuild.mjs while it bundles, and by a
// require hook (scripts/undiciMendRegister.cjs) in the processes that run the product's HTTP code
// from out/ (the unit tests and the processes they fork, the bench). So an install can neither
// break it nor be broken by it: npm with or without scripts, pnpm's hard-linked store alike.
// The patch is applied by jsdiff (`diff`); the require hook is pirates'.
'use strict';
const { readFileSync } = require('node:fs');
const path = require('node:path');
const { applyPatch, parsePatch, reversePatch } = require('diff');

/** The undici version the patch was made for; `undici` is pinned to it exactly in package.json. */
const PATCHED_VERSION = '7.30.2';
const PATCH_FILE = path.join(__dirname, '..', 'patches', `undici@${PATCHED_VERSION}.patch`);
/** The one file the patch changes, wherever the package manager put undici (pnpm: .pnpm/undici@…/node_modules/undici). */
const CLIENT_H1 = /[\\/]node_modules[\\/]undici[\\/]lib[\\/]dispatcher[\\/]client-h1\.js$/;

/** @type {import('diff').StructuredPatch | undefined} */
let patch;
function thePatch() {
  if (!patch) {
    const files = parsePatch(readFileSync(PATCH_FILE, 'utf8'));
    if (files.length !== 1) throw new Error(`${PATCH_FILE}: one file expected, found ${files.length}`);
    patch = files[0];
  }
  return patch;
}

/** @param {string} file */
function isUndiciClientH1(file) {
  return CLIENT_H1.test(file);
}

/** undici's version, read beside lib/dispatcher/client-h1.js. @param {string} file */
function undiciVersion(file) {
  return JSON.parse(readFileSync(path.join(path.dirname(file), '..', '..', 'package.json'), 'utf8')).version;
}

/** undici 8 fixed Parser.finish(): it no longer asserts that the parser is not paused. @param {string} source */
function finishAssertsNotPaused(source) {
  const start = source.indexOf('\n  finish () {\n');
  const end = source.indexOf('\n  }\n', start);
  return start >= 0 && end > start && source.slice(start, end).includes('assert(!this.paused)');
}

/**
 * The code of undici's lib/dispatcher/client-h1.js to run, and what was done to it:
 * - 'mended': the patch applied;
 * - 'already mended': the file carries the patch already (applied in place by another tool);
 * - 'has its own fix': another undici, whose Parser.finish() no longer asserts (undici 8): left as it
 *   is, and test/unit/connectionClose.test.ts says whether it holds every answer (undici 8.13.1
 *   still fails a kept-alive answer cut by a close, which the patch also mends).
 * Throws when undici's code is neither, naming the file, its version and what to do.
 * @param {string} file
 * @param {string} source
 * @returns {{ code: string, outcome: 'mended' | 'already mended' | 'has its own fix' }}
 */
function mendUndiciSource(file, source) {
  const mended = applyPatch(source, thePatch());
  if (typeof mended === 'string') return { code: mended, outcome: 'mended' };
  if (typeof applyPatch(source, reversePatch(thePatch())) === 'string') return { code: source, outcome: 'already mended' };
  const version = undiciVersion(file);
  const patchName = path.relative(path.join(__dirname, '..'), PATCH_FILE);
  if (version === PATCHED_VERSION) {
    throw new Error(
      `${file} is not undici ${version} as published (was it changed in place?): reinstall it (npm ci); ${patchName} applies to the published code`,
    );
  }
  if (finishAssertsNotPaused(source)) {
    throw new Error(
      `${file}: undici ${version} still asserts in Parser.finish() that the parser is not paused (nodejs/undici#5360), and ${patchName} does not apply to it: ` +
        `pin undici ${PATCHED_VERSION} again, or port the patch to ${version}`,
    );
  }
  return { code: source, outcome: 'has its own fix' };
}

module.exports = { PATCHED_VERSION, PATCH_FILE, CLIENT_H1, isUndiciClientH1, mendUndiciSource };
