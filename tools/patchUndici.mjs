// Mends undici 7 in node_modules before anything uses it (npm's postinstall, and again by
// esbuild.mjs before bundling; a file already mended is left as it is). When the server (or a proxy)
// ends the connection while undici's HTTP/1 parser is paused because the answer is read slowly (a
// paid answer written to disk), undici 7 (nodejs/undici#5360; mended in undici 8, which needs Node 22):
// - with `Connection: close`, or an answer delimited by its end: asserts in Parser.finish() that
//   the parser is not paused, an AssertionError thrown from the socket's 'end' handler that no caller
//   can catch (11 of 30 answers of 1-3 MB here, with a disk that takes 2 ms per write);
// - with an answer it takes for a kept-alive one (a proxy that closes without saying so, as tinyproxy
//   does): fails the request with "other side closed" although the paused parser holds all of it
//   (a paid answer lost: 1 in 4 runs of the proxy tests in the real VS Code).
// The mend: at the end of the connection, parse what the socket still holds first, resuming the
// parser across pauses (the body stream buffers what it is given); then go on as before.
//   node tools/patchUndici.mjs   (exits non-zero when undici's code is not the one this mends)
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const MARK = 'gateway-images: parse what a paused parser holds at the end';

/** Each mend: the text it replaces (exactly once), and the text it puts there. */
const MENDS = [
  {
    // A method of Parser, before finish(): resume across pauses and parse what the socket still holds.
    find: '  finish () {\n',
    put: `  // ${MARK} (nodejs/undici#5360, tools/patchUndici.mjs)
  drainAtEnd () {
    if (!this.paused || this.ptr == null) return
    // A length- or chunk-framed body completes only when execute() drives the parser past its end,
    // even with nothing left to read; a body framed by the end stays paused, for llhttp_finish().
    let rest
    do {
      this.llhttp.llhttp_resume(this.ptr)
      this.paused = false
      rest = this.socket.read() || EMPTY_BUF
      this.execute(rest)
    } while (this.paused && rest.length > 0)
    if (this.paused) {
      this.llhttp.llhttp_resume(this.ptr)
      this.paused = false
    }
  }

  finish () {
`,
  },
  {
    // finish() asserted that the parser was not paused: now it parses what is left first.
    find: '    assert(!this.paused)\n\n    const { llhttp } = this\n',
    put: '    this.drainAtEnd()\n\n    const { llhttp } = this\n',
  },
  {
    // A kept-alive answer cut by the end of the connection was failed with "other side closed" even
    // when the paused parser held all of it (a proxy that closes without saying so: tinyproxy).
    find: 'function onHttpSocketEnd () {\n  const parser = this[kParser]\n',
    put: 'function onHttpSocketEnd () {\n  const parser = this[kParser]\n  parser.drainAtEnd()\n',
  },
];

/** The file mended, or why it could not be. */
export function patchUndici(root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))) {
  const require = createRequire(path.join(root, 'package.json'));
  const file = path.join(path.dirname(require.resolve('undici/package.json')), 'lib', 'dispatcher', 'client-h1.js');
  let source = readFileSync(file, 'utf8');
  if (source.includes(MARK)) return { file, changed: false };
  for (const { find, put } of MENDS) {
    const at = source.indexOf(find);
    if (at < 0 || source.indexOf(find, at + 1) >= 0) {
      throw new Error(`${file}: not the code tools/patchUndici.mjs mends (has undici changed? see nodejs/undici#5360): ${JSON.stringify(find)}`);
    }
    source = source.slice(0, at) + put + source.slice(at + find.length);
  }
  writeFileSync(file, source);
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
