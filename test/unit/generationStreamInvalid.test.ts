// The streaming decoder refuses what is not a generation response: invalid base64 in an image, and
// bodies that are not the JSON they should be; each refusal says what and where.
import * as assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import { decodeAll, assertImages, expectFormatError } from './support/generationBodies';

describe('decodeGenerationStream', function () {
  // Large bodies are CPU-bound; keep it robust on a loaded machine.
  this.timeout(120_000);

  describe('invalid base64', () => {
    const cases: [string, string, RegExp][] = [
      ['an invalid character', 'YWJj!ZGVm', /invalid character '!'/],
      ['a non-ASCII byte', 'YWJj\u00e9ZGVm', /invalid character byte 0xC3/],
      ['padding in the middle', 'YQ==YWJj', /padding/],
      ['padding in the middle, spaced', 'YQ== YWJj', /padding/],
      ['URL-safe alphabet', 'A-B_', /invalid character '-'/],
      ['a length of 4n+1', 'YWJjZ', /length/],
      ['one = after two characters', 'YQ=', /padding/],
      ['three =', 'YQ===', /padding/],
      ['= alone', '=', /padding/],
      ['an escaped quote', 'YWJj\\"ZGVm', /quote/],
      ['an escaped backslash', 'YWJj\\\\ZGVm', /escape/],
      ['\\b escape', 'YW\\bJj', /escape/],
      ['\\u escape of a non-base64 character', 'YWJj\\u0021ZGVm', /invalid character '!'/],
      ['\\u escape of a non-ASCII character', 'YWJj\\u00e9ZGVm', /U\+00E9/],
      ['\\u escape with a bad hex digit', 'YWJj\\u00g1', /hex/],
      ['a raw control character', 'YWJj\u0001ZGVm', /invalid character byte 0x01/],
    ];
    for (const [name, b64, pattern] of cases) {
      it(name, async () => {
        const body = Buffer.from(`{"data":[{"b64_json":"${b64}","media_type":"image/png"}]}`, 'utf8');
        for (const size of [1, 2, 5, 1000]) {
          const sink = await expectFormatError(body, pattern, size);
          assert.equal(sink.writers.length, 1);
          assert.equal(sink.writers[0]!.closed, false);
          assert.equal(sink.writers[0]!.abortCount, 1);
        }
      });
    }

    it('an invalid character deep inside a large image (fast path rejects, slow path reports)', async () => {
      const good = crypto.randomBytes(600_000).toString('base64');
      for (const bad of ['!', '-', '_', '=', '.', '\u0080']) {
        const at = 400_001 + bad.length;
        const b64 = good.slice(0, at) + bad + good.slice(at + 1);
        const body = Buffer.from(`{"data":[{"b64_json":"${crypto.randomBytes(3000).toString('base64')}"},{"b64_json":"${b64}"}]}`, 'latin1');
        const sink = await expectFormatError(body, /data\[1\]\.b64_json.*not valid base64/, { seed: bad.charCodeAt(0), max: 65536 });
        assert.equal(sink.writers[0]!.closed, true, 'the first image completed');
        assert.equal(sink.writers[1]!.abortCount, 1);
      }
    });

    it('the same with escaped slashes and line breaks (dense escape path)', async () => {
      const good = crypto.randomBytes(300_000).toString('base64').replace(/\//g, '\\/');
      const at = 200_000;
      for (const bad of ['!', '\\"', '\\\\', '\\b']) {
        const b64 = good.slice(0, at) + bad + good.slice(at);
        const body = Buffer.from(`{"data":[{"b64_json":"${b64}"}]}`, 'latin1');
        await expectFormatError(body, /not valid base64/, 65536);
      }
    });
  });

  describe('invalid responses', () => {
    const cases: [string, string, RegExp][] = [
      ['a top-level array', '[{"b64_json":"YQ=="}]', /array, not the expected object/],
      ['a top-level string', '"hello"', /a string, not the expected JSON object/],
      ['a top-level number', '42', /a number, not the expected JSON object/],
      ['HTML', '<html><body>Bad gateway</body></html>', /not JSON: it starts with '<'/],
      ['an empty body', '', /empty/],
      ['whitespace only', '  \n ', /ended early/],
      ['data is an object', '{"data":{"b64_json":"YQ=="}}', /`data`.*an object, not an array/],
      ['data is null', '{"data":null}', /`data`.*null, not an array/],
      ['data is a string', '{"data":"x"}', /`data`.*a string, not an array/],
      ['no data', '{"created":1}', /no `data` array/],
      ['an element that is not an object', '{"data":["YQ=="]}', /data\[0\].*a string, not an object/],
      ['an element without b64_json', '{"data":[{"b64_json":"YQ=="},{"media_type":"image/png"}]}', /data\[1\].*no b64_json/],
      ['an empty element', '{"data":[{}]}', /data\[0\].*no b64_json/],
      ['a url element without an address', '{"data":[{"url":null,"revised_prompt":"p"}]}', /data\[0\] of the gateway's response has no b64_json/],
      ['b64_json null', '{"data":[{"b64_json":null}]}', /b64_json.*null, not a string/],
      ['b64_json a number', '{"data":[{"b64_json":5}]}', /b64_json.*a number, not a string/],
      ['b64_json twice', '{"data":[{"b64_json":"YQ==","b64_json":"YQ=="}]}', /twice/],
      ['data twice', '{"data":[],"data":[]}', /twice/],
      ['data after the object', '{"data":[]} x', /after the JSON object/],
      ['two objects', '{"data":[]}{"data":[]}', /after the JSON object/],
      ['a missing comma', '{"data":[] "created":1}', /expected , or }/],
      ['a trailing comma', '{"data":[],}', /expected a key/],
      ['a trailing comma in an array', '{"data":[{"b64_json":""},]}', /not valid JSON/],
      ['a missing colon', '{"data" []}', /expected :/],
      ['a bad literal in an unknown field', '{"x":tru,"data":[]}', /expected 'true'/],
      ['a bad number in an unknown field', '{"x":01,"data":[]}', /invalid number|expected/],
      ['a bad number 1.', '{"x":1.,"data":[]}', /invalid number/],
      ['a bad number -', '{"x":-,"data":[]}', /invalid number/],
      ['an empty slot in an unknown array', '{"x":[1,,2],"data":[]}', /not valid JSON/],
      ['a bad escape in an unknown string', '{"x":"a\\xb","data":[]}', /invalid escape/],
      ['a bad \\u escape in an unknown string', '{"x":"\\u12G4","data":[]}', /invalid \\u escape/],
      ['a control character in the model', '{"model":"a\u0001b","data":[]}', /invalid JSON string/],
      ['unbalanced brackets', '{"x":[1,2},"data":[]}', /not valid JSON/],
      ['a single quote string', "{'data':[]}", /expected a key or }/],
    ];
    for (const [name, text, pattern] of cases) {
      it(name, async () => {
        for (const size of [1, 3, 1000]) await expectFormatError(Buffer.from(text), pattern, size);
      });
    }

    it('an error after a complete image leaves it closed; the incomplete one is aborted', async () => {
      const a = crypto.randomBytes(1000);
      const body = Buffer.from(`{"data":[{"b64_json":"${a.toString('base64')}"},{"b64_json":"YWJj","media_type":"image/png" "x":1}]}`);
      for (const size of [1, 17, 5000]) {
        const sink = await expectFormatError(body, /expected , or }/, size);
        assert.ok(sink.writers[0]!.closed);
        assert.ok(sink.writers[0]!.bytes().equals(a));
        // The second string ended validly before the syntax error: it was closed too; the caller decides.
        assert.ok(sink.writers[1]!.closed);
      }
    });

    it('a url element after valid images: its address is read (the client downloads it), no image is opened for it', async () => {
      const body = Buffer.from('{"data":[{"b64_json":"YQ=="},{"url":"https://example.com/a.png"}]}');
      for (const size of [1, 5, 1000]) {
        const { meta, sink } = await decodeAll(body, size);
        assert.equal(sink.writers.length, 1);
        assert.deepEqual(meta.images, [{ index: 0 }, { index: 1, url: 'https://example.com/a.png' }]);
      }
    });

    it('an element with an empty url and no b64_json has no image', async () => {
      await expectFormatError(Buffer.from('{"data":[{"url":" "}]}'), /data\[0\] of the gateway's response has no b64_json/, 3);
    });

    it('a url that is an address and b64_json: the bytes win, nothing to download', async () => {
      const { meta, sink } = await decodeAll(Buffer.from('{"data":[{"url":"https://example.com/a.png","b64_json":"YQ=="}]}'), 4);
      assertImages(sink, [Buffer.from('a')]);
      assert.deepEqual(meta.images, [{ index: 0 }]);
    });

    it('an address with an escaped quote, a \\u escape split over chunks, or longer than 64 KiB', async () => {
      const body = Buffer.from('{"data":[{"url":"https://example.com/a\\"b\\u0041.png"}]}');
      for (const size of [1, 2, 3, 17, 17 + 6, 1000]) {
        const { meta } = await decodeAll(body, size);
        assert.equal(meta.images[0]?.url, 'https://example.com/a"bA.png', `chunks of ${size}`);
      }
      await expectFormatError(
        Buffer.from(`{"data":[{"url":"https://example.com/${'a'.repeat(70_000)}"}]}`),
        /data\[0\]\.url in the gateway's response is too long/,
        4096,
      );
    });

    it('deep nesting of unknown values is fine up to a limit, then an error, never a stack overflow', async () => {
      const ok = `{"x":${'['.repeat(5000)}${']'.repeat(5000)},"data":[{"b64_json":"YQ=="}]}`;
      const { sink } = await decodeAll(Buffer.from(ok), 100);
      assertImages(sink, [Buffer.from('a')]);
      const deep = `{"x":${'['.repeat(200_000)}`;
      await expectFormatError(Buffer.from(deep), /too deeply/);
    });
  });
});
