// Mends one bug of undici 7 in node_modules, before anything uses it (npm's postinstall, and again
// by esbuild.mjs before bundling; a file already mended is left as it is):
//
// When a server ends the connection (`Connection: close`, or an answer delimited by its end) while
// undici's HTTP/1 parser is paused because the body is read slowly (a paid answer written to disk),
// Parser.finish() asserts that the parser is not paused: an AssertionError thrown from the socket's
// 'end' handler, which no caller can catch (nodejs/undici#5360; mended in undici 8, which needs
// Node 22). Measured here: 11 of 30 paid answers of 1-3 MB from such a server, with a disk that takes
// 2 ms per write. The mend: before signalling the end, parse what the socket still holds, resuming
// the parser across pauses (the body stream buffers what it is given), then finish as before.
//   node tools/patchUndici.mjs   (exits non-zero when undici's code is not the one this mends)
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const MARK = 'gateway-images: finish a paused parser';
const PAUSED_ASSERT = '    assert(!this.paused)\n\n    const { llhttp } = this\n';
const MENDED = `    const { llhttp } = this

    // ${MARK} (nodejs/undici#5360, tools/patchUndici.mjs)
    if (this.paused) {
      // A length- or chunk-framed body completes only when execute() drives the parser past its end,
      // even with nothing left to read; a body framed by the end stays paused and is finished below.
      let rest
      do {
        llhttp.llhttp_resume(this.ptr)
        this.paused = false
        rest = this.socket.read() || EMPTY_BUF
        this.execute(rest)
      } while (this.paused && rest.length > 0)
      if (this.paused) {
        llhttp.llhttp_resume(this.ptr)
        this.paused = false
      }
    }
`;

/** The file mended, or why it could not be. */
export function patchUndici(root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))) {
  const require = createRequire(path.join(root, 'package.json'));
  const file = path.join(path.dirname(require.resolve('undici/package.json')), 'lib', 'dispatcher', 'client-h1.js');
  const source = readFileSync(file, 'utf8');
  if (source.includes(MARK)) return { file, changed: false };
  const finishAt = source.indexOf('  finish () {');
  const assertAt = source.indexOf(PAUSED_ASSERT, finishAt);
  if (finishAt < 0 || assertAt < 0 || assertAt - finishAt > 200) {
    throw new Error(`${file}: Parser.finish() is not the code tools/patchUndici.mjs mends (has undici changed? see nodejs/undici#5360)`);
  }
  writeFileSync(file, source.slice(0, assertAt) + MENDED + source.slice(assertAt + PAUSED_ASSERT.length));
  return { file, changed: true };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const { file, changed } = patchUndici();
    console.log(`${changed ? 'mended' : 'already mended'}: ${path.relative(process.cwd(), file)} (nodejs/undici#5360)`);
  } catch (error) {
    console.error(String(error instanceof Error ? error.message : error));
    process.exit(1);
  }
}
