// Loads undici mended (scripts/undiciMend.cjs) in this process, as the bundle has it: a require hook
// (pirates) that passes undici's lib/dispatcher/client-h1.js through the patch when Node loads it.
// Preloaded with `node --require ./scripts/undiciMendRegister.cjs` (.mocharc.unit.json's node-option,
// which the processes the tests fork inherit; the bench's workers): it must run before undici loads.
'use strict';
const { addHook } = require('pirates');
const { isUndiciClientH1, mendUndiciSource } = require('./undiciMend.cjs');

/** What the hook did to each file it saw in this process (file → outcome), for the tests to check. */
const outcomes = new Map();

addHook(
  (code, file) => {
    const { code: mended, outcome } = mendUndiciSource(file, code);
    outcomes.set(file, outcome);
    if (outcome === 'has its own fix') process.emitWarning(`${file}: undici has its own fix of Parser.finish(); patches/ not applied (nodejs/undici#5360)`);
    return mended;
  },
  { exts: ['.js'], matcher: isUndiciClientH1, ignoreNodeModules: false },
);

module.exports = { outcomes };
