// What an error answer to a paid request says of its money (issue 40, "unknown means unknown"):
// the rule as a table (paidCall.ts errorAnswerOutcome), the body forms that count as the gateway's
// own (errorBody.ts), and the client over real HTTP against the emulator's status faults, which
// answer once the request body has been read, as a proxy in front of the gateway would.
import * as assert from 'node:assert/strict';
import { ApiError, RateLimitedError, ServerError } from '../../src/core/gateway/errors';
import { classifyApiError } from '../../src/core/gateway/errorParsing';
import { errorAnswerOutcome, type ErrorAnswerOutcome } from '../../src/core/gateway/paidCall';
import { caught, gatewaySuite, MemorySink, paidRequests, SMALL } from './support/gateway';

const UNKNOWN: ErrorAnswerOutcome = 'may-have-been-charged';
const NOT: ErrorAnswerOutcome = 'not-charged';

/** [status, in the gateway's form, the body had begun to leave, outcome, why]. */
const TABLE: [number, boolean, boolean, ErrorAnswerOutcome, string][] = [
  // Before the body left the gateway had nothing to act on, whatever answered.
  [500, false, false, NOT, 'a proxy page before the body left'],
  [502, true, false, NOT, "the gateway's 502 before the body left"],
  [400, true, false, NOT, 'a refusal before the body left'],
  // The gateway's refusals, in its own form.
  [400, true, true, NOT, 'invalid request'],
  [401, true, true, NOT, 'key not accepted'],
  [402, true, true, NOT, 'insufficient funds'],
  [403, true, true, NOT, 'budget, moderation, forbidden'],
  [404, true, true, NOT, 'unknown model'],
  [413, true, true, NOT, "the gateway's own size limit"],
  [422, true, true, NOT, 'invalid parameters'],
  [429, true, true, NOT, 'rate limited'],
  // A proxy asking for its own credentials forwards nothing.
  [407, false, true, NOT, "a proxy's 407 page"],
  [407, true, true, NOT, "a proxy's 407 in JSON"],
  // A 4xx that is not in the gateway's form may come from something that gave up in between.
  [400, false, true, UNKNOWN, "a proxy's HTML 400"],
  [401, false, true, UNKNOWN, "a proxy's HTML 401"],
  [413, false, true, UNKNOWN, "a proxy's 413 page: it cannot prove it stopped before the gateway"],
  [429, false, true, UNKNOWN, "a CDN's rate-limit page"],
  [404, false, true, UNKNOWN, 'a plain-text 404'],
  // 4xx that say the request was under way, or of no standard.
  [408, true, true, UNKNOWN, 'a time limit ran out while it was under way'],
  [424, true, true, UNKNOWN, 'a dependency (the provider) failed'],
  [499, false, true, UNKNOWN, "a proxy's client-closed status"],
  // Any 5xx, in any form: the gateway, or what stands in front of it, failed on the way.
  [500, true, true, UNKNOWN, "the gateway's own 500 in JSON"],
  [500, false, true, UNKNOWN, "a proxy's 500 page"],
  [502, false, true, UNKNOWN, 'bad gateway'],
  [503, true, true, UNKNOWN, 'unavailable, in JSON'],
  [503, false, true, UNKNOWN, 'unavailable, a proxy page'],
  [504, false, true, UNKNOWN, 'gateway timeout'],
  [520, false, true, UNKNOWN, "Cloudflare's unknown error"],
  [521, false, true, UNKNOWN, "Cloudflare's web server down"],
  [522, false, true, UNKNOWN, "Cloudflare's connection timed out"],
  [523, false, true, UNKNOWN, "Cloudflare's origin unreachable"],
  [524, false, true, UNKNOWN, "Cloudflare's timeout"],
  [599, false, true, UNKNOWN, 'any other 5xx'],
  // A redirect is no refusal either.
  [301, false, true, UNKNOWN, 'a redirect page'],
  [307, false, true, UNKNOWN, 'a bare redirect'],
];

const NGINX_413 =
  '<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n</body>\r\n</html>\r\n';
const GATEWAY_400 = '{"error":{"message":"size must be a tier, WxH or auto","type":"invalid_request_error","param":"size","code":"invalid_value"}}';

describe('Error answers to a paid request: refused, or may have been charged', function () {
  this.timeout(20_000);

  describe('the rule', () => {
    for (const [status, gatewayForm, bodyLeft, outcome, why] of TABLE) {
      it(`${status} ${gatewayForm ? "in the gateway's form" : 'not in its form'}, ${bodyLeft ? 'after' : 'before'} the body left (${why}): ${outcome}`, () => {
        assert.equal(errorAnswerOutcome({ status, gatewayForm, bodyLeft }), outcome);
      });
    }
  });

  describe("the gateway's form", () => {
    const forms: [string, string, string | undefined, boolean][] = [
      ["the emulator's (OpenAI style)", GATEWAY_400, 'application/json', true],
      ['FastAPI detail', '{"detail":"Лимит ключа исчерпан"}', 'application/json', true],
      ['a code alone', '{"error":{"code":"insufficient_balance"}}', undefined, true],
      ["nginx's 413 page", NGINX_413, 'text/html', false],
      ["Cloudflare's 524 page", '<!DOCTYPE html><html><head><title>example.com | 524: A timeout occurred</title></head></html>', 'text/html', false],
      ['plain text', 'upstream connect error or disconnect/reset before headers', 'text/plain', false],
      ['an empty body', '', undefined, false],
      ['a JSON cut short', '{"error":{"message":"size must', 'application/json', false],
      ['JSON that names nothing', '{"ok":false}', 'application/json', false],
    ];
    for (const [name, body, contentType, gatewayForm] of forms) {
      it(`${name}: ${gatewayForm ? 'is' : 'is not'}`, () => {
        const error = classifyApiError(400, body, contentType ? { 'content-type': contentType } : {});
        assert.equal(error.gatewayForm, gatewayForm);
      });
    }
  });

  describe('through the client, against the emulator', () => {
    const gw = gatewaySuite({ dir: false });
    const generate = () => gw.client.generate({ model: 'aurora-1', prompt: 'a lighthouse', size: SMALL }, new MemorySink());
    /** The paid request failed with this answer after the emulator had read its whole body. */
    const failedWith = async (spec: { status: number; body?: string; contentType?: string }) => {
      gw.emu.state.armFault({ fault: 'status', ...spec });
      const error = await caught(generate);
      assert.ok(error instanceof ApiError, String(error));
      assert.equal(error.status, spec.status);
      const request = paidRequests(gw.emu).at(-1);
      assert.deepEqual([request?.status, request?.faults], [spec.status, ['status']], 'the emulator read the body, then answered');
      return error;
    };

    for (const status of [500, 503, 524]) {
      it(`${status} after the body left, as a proxy's page: outcome unknown`, async () => {
        const error = await failedWith({ status });
        assert.ok(error instanceof ServerError);
        assert.equal(error.outcomeUnknown, true, error.message);
        assert.match(error.message, new RegExp(`HTTP ${status} with an HTML page`));
      });
    }

    it("a 500 in the gateway's own JSON, and a plain-text 503: outcome unknown", async () => {
      const json = await failedWith({ status: 500, body: '{"error":{"message":"The provider failed.","type":"server_error","code":"provider_error"}}' });
      assert.deepEqual([json.gatewayForm, json.outcomeUnknown], [true, true]);
      gw.emu.state.reset();
      const text = await failedWith({ status: 503, body: 'upstream connect error or disconnect/reset before headers', contentType: 'text/plain' });
      assert.deepEqual([text.gatewayForm, text.outcomeUnknown], [false, true]);
    });

    it("a proxy's HTML 413 or 400 after the body left: outcome unknown; the same statuses in the gateway's JSON: refused", async () => {
      assert.equal((await failedWith({ status: 413, body: NGINX_413, contentType: 'text/html' })).outcomeUnknown, true);
      gw.emu.state.reset();
      assert.equal((await failedWith({ status: 400 })).outcomeUnknown, true);
      gw.emu.state.reset();
      const refused = await failedWith({ status: 400, body: GATEWAY_400 });
      assert.deepEqual([refused.kind, refused.gatewayForm, refused.outcomeUnknown], ['invalid-parameters', true, false]);
    });

    it("the gateway's 429 in its form is a refusal; a proxy's 407 page went no further", async () => {
      gw.emu.state.armFault({ fault: 'rate-limit' });
      const limited = await caught(generate);
      assert.ok(limited instanceof RateLimitedError, String(limited));
      assert.equal(limited.outcomeUnknown, false);
      assert.equal((await failedWith({ status: 407 })).outcomeUnknown, false);
    });
  });
});
