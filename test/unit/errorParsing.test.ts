// Error answers in every plausible form: parsed into a typed error with a readable sentence, never a throw.
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { GatewayClient } from '../../src/core/client/client';
import {
  ApiError,
  AuthenticationError,
  EditNotSupportedError,
  InsufficientFundsError,
  InvalidParametersError,
  PayloadTooLargeError,
  RateLimitedError,
  ServerError,
  UnknownModelError,
} from '../../src/core/gateway/errors';
import { classifyApiError, parseRetryAfter, requestIdOf } from '../../src/core/gateway/errorParsing';
import { parseErrorBody } from '../../src/core/gateway/errorBody';
import { caught, localServer, type LocalServer, MemorySink, newClient } from './support/gateway';

const NGINX_502 =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n';

/** A readable sentence: non-empty, no control characters, ends with punctuation, bounded. */
function assertReadable(message: string, label: string): void {
  assert.equal(typeof message, 'string', label);
  assert.ok(message.length > 2 && message.length <= 600, `${label}: length ${message.length}`);
  // eslint-disable-next-line no-control-regex -- the check is that no control characters are there.
  assert.doesNotMatch(message, /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffd]/, `${label}: control characters in ${JSON.stringify(message)}`);
  assert.match(message, /[.!?…]$/, `${label}: ${JSON.stringify(message)}`);
  assert.match(message, /^[A-Z"(]/, `${label}: starts with a capital: ${JSON.stringify(message)}`);
}

interface BodyCase {
  name: string;
  body: string;
  contentType?: string;
  message?: RegExp;
  param?: string;
  code?: string;
  /** In the gateway's own form (a JSON object naming a message or a code): only then does a 4xx after the body left prove a refusal. */
  gatewayForm?: true;
}

const BODIES: BodyCase[] = [
  {
    name: 'OpenAI error object',
    gatewayForm: true,
    body: '{"error":{"message":"Invalid size","type":"invalid_request_error","param":"size","code":"invalid_value"}}',
    message: /^Invalid size\.$/,
    param: 'size',
    code: 'invalid_value',
  },
  { name: 'top-level message', gatewayForm: true, body: '{"message":"quality must be one of low, high"}', message: /^Quality must be one of low, high\.$/ },
  { name: 'detail string', gatewayForm: true, body: '{"detail":"Not enough credits!"}', message: /^Not enough credits!$/ },
  {
    name: 'FastAPI detail list',
    gatewayForm: true,
    body: '{"detail":[{"loc":["body","n"],"msg":"ensure this value is less than 11","type":"value_error"}]}',
    message: /^N: ensure this value is less than 11\.$/,
    param: 'n',
  },
  {
    name: 'FastAPI detail list of two',
    gatewayForm: true,
    body: '{"detail":[{"loc":["body","size"],"msg":"bad"},{"loc":["body","seed"],"msg":"not int"}]}',
    message: /size: bad; seed: not int/i,
    param: 'size',
  },
  { name: 'error string', gatewayForm: true, body: '{"error":"model not available"}', message: /^Model not available\.$/ },
  {
    name: 'errors list of objects',
    gatewayForm: true,
    body: '{"errors":[{"message":"first problem"},{"message":"second problem"}]}',
    message: /^First problem; second problem\.$/,
  },
  { name: 'errors list of strings', gatewayForm: true, body: '{"errors":["one","two"]}', message: /^One; two\.$/ },
  { name: 'array of error objects', gatewayForm: true, body: '[{"error":{"message":"in an array","code":"x1"}}]', message: /^In an array\.$/, code: 'x1' },
  {
    name: 'msg and field',
    gatewayForm: true,
    body: '{"msg":"wrong value","field":"background","error_code":42}',
    message: /^Wrong value\.$/,
    param: 'background',
    code: '42',
  },
  { name: 'plain text', body: 'Service temporarily overloaded', message: /^Service temporarily overloaded\.$/ },
  { name: 'plain text with newlines', body: 'line one\n\n  line two\t', message: /^Line one line two\.$/ },
  { name: 'nginx 502 page', body: NGINX_502, contentType: 'text/html', message: /HTML page \("502 Bad Gateway"\)/ },
  {
    name: 'HTML without content type',
    body: '<!DOCTYPE html><html><head><title>Just a moment &amp; wait</title></head></html>',
    message: /"Just a moment & wait"/,
  },
  { name: 'HTML without a title', body: '<html><body><p>oops</p></body></html>', contentType: 'text/html', message: /HTML page: / },
  { name: 'empty body', body: '', message: /^The gateway answered HTTP \d+/ },
  { name: 'whitespace body', body: ' \r\n ', message: /^The gateway answered HTTP \d+/ },
  { name: 'invalid JSON', body: '{"error": {"message": "cut', message: /^Cut\.$/ },
  { name: 'JSON null', body: 'null', message: /^The gateway answered HTTP \d+/ },
  { name: 'JSON number', body: '42', message: /^The gateway answered HTTP \d+/ },
  { name: 'JSON empty array', body: '[]', message: /^The gateway answered HTTP \d+/ },
  { name: 'JSON string', body: '"quota exceeded for today"', message: /^Quota exceeded for today\.$/ },
  { name: 'error null', body: '{"error":null}', message: /^The gateway answered HTTP \d+/ },
  { name: 'unrelated object', body: '{"foo":{"bar":1}}', message: /^The gateway answered HTTP \d+/ },
  { name: 'message not a string', body: '{"error":{"message":{"deep":true}},"message":17}', message: /^The gateway answered HTTP \d+/ },
  { name: 'huge message', gatewayForm: true, body: JSON.stringify({ error: { message: 'x'.repeat(100_000) } }), message: /…$/ },
  { name: 'huge plain text', body: 'word '.repeat(50_000), message: /…$/ },
  { name: 'binary junk', body: randomBytes(512).toString('utf8'), message: /^The gateway answered HTTP \d+/ },
  { name: 'NUL bytes', body: '\u0000\u0001\u0002abc', message: /^The gateway answered HTTP \d+/ },
];

describe('errorParsing', () => {
  describe('parseErrorBody / classifyApiError on every body form', () => {
    for (const c of BODIES) {
      it(c.name, () => {
        assert.doesNotThrow(() => parseErrorBody(c.body, c.contentType));
        for (const status of [400, 500, 502]) {
          const error = classifyApiError(status, c.body, c.contentType ? { 'content-type': c.contentType } : {});
          assert.ok(error instanceof ApiError);
          assert.equal(error.status, status);
          assertReadable(error.message, `${c.name} @${status}`);
          if (c.message) assert.match(error.message, c.message, `${c.name} @${status}`);
          if (c.param) assert.equal(error.param, c.param);
          if (c.code) assert.equal(error.code, c.code);
          assert.equal(error.gatewayForm, c.gatewayForm === true, `${c.name}: in the gateway's form`);
        }
      });
    }

    it('never throws on hostile input', () => {
      const bodies = [
        '{',
        '[',
        '{"error":',
        '<',
        '<html',
        '{"detail":[null,1,"bad input",{"loc":"notalist"}]}',
        '{"errors":{}}',
        '\ud800',
        '{"__proto__":{"message":"p"}}',
      ];
      for (const body of bodies) {
        for (const status of [0, 100, 200, 399, 401, 403, 404, 409, 413, 418, 422, 429, 500, 599, 999]) {
          const error = classifyApiError(status, body, { 'content-type': 'application/json', 'retry-after': 'garbage' });
          assertReadable(error.message, `${JSON.stringify(body)} @${status}`);
        }
      }
    });
  });

  describe('classification by status and body', () => {
    const kind = (status: number, body: string, headers = {}) => classifyApiError(status, body, headers);
    it('401 reasons', () => {
      const reason = (body: string) => (kind(401, body) as AuthenticationError).reason;
      assert.equal(reason('{"error":{"code":"key_expired","message":"The key expired"}}'), 'expired');
      assert.equal(reason('{"error":{"code":"key_revoked","message":"The key was revoked"}}'), 'revoked');
      assert.equal(reason('{"error":{"code":"missing_api_key","message":"No API key"}}'), 'missing');
      assert.equal(reason('{"error":{"code":"invalid_api_key","message":"The API key is not valid."}}'), 'invalid');
      assert.equal(reason(''), 'invalid');
    });
    it("403 about a key is authentication; any other 403 keeps the gateway's words and is no auth error", () => {
      assert.equal((kind(403, '{"message":"API key disabled"}') as AuthenticationError).reason, 'revoked');
      assert.equal((kind(403, '{"detail":"Ключ отозван"}') as AuthenticationError).reason, 'revoked');
      for (const body of [
        'Forbidden',
        '{"error":{"code":"content_policy_violation","message":"Your prompt was rejected by the moderation system."}}',
        '{"error":{"message":"Image models are not available on your plan."}}',
        '{"detail":"Запрос отклонён модерацией"}',
        '{"message":"This key cannot use this model"}',
        '{"error":{"code":"unauthorized","message":"Your plan does not include image models."}}',
      ]) {
        const error = kind(403, body);
        assert.ok(!(error instanceof AuthenticationError), `${body}: ${error.constructor.name}`);
        assert.equal(error.kind, 'api', body);
      }
      assert.match(
        kind(403, '{"error":{"message":"Your prompt was rejected by the moderation system."}}').message,
        /^Your prompt was rejected by the moderation system\.$/,
      );
    });
    it('403 "budget exhausted" and "Лимит ключа исчерпан" are funds (budget), in the gateway\'s words', () => {
      for (const body of ['{"error":{"message":"budget exhausted"}}', '{"detail":"Лимит ключа исчерпан"}', '{"message":"Бюджет ключа исчерпан"}']) {
        const error = kind(403, body);
        assert.ok(error instanceof InsufficientFundsError, body);
        assert.equal(error.scope, 'budget', body);
      }
      assert.equal(kind(403, '{"detail":"Лимит ключа исчерпан"}').message, 'Лимит ключа исчерпан.');
    });
    it('400 "invalid key" is authentication, not invalid parameters', () => {
      assert.equal((kind(400, '{"error":{"message":"Invalid API key provided."}}') as AuthenticationError).reason, 'invalid');
      assert.equal((kind(400, '{"error":{"code":"invalid_api_key","message":"bad"}}') as AuthenticationError).reason, 'invalid');
      assert.equal((kind(400, '{"detail":"Неверный API-ключ"}') as AuthenticationError).reason, 'invalid');
      assert.ok(kind(400, '{"error":{"param":"size","message":"Invalid size"}}') instanceof InvalidParametersError);
    });
    it('"истёк" with ё and "истек" are both expired', () => {
      assert.equal((kind(401, '{"detail":"Срок действия ключа истёк"}') as AuthenticationError).reason, 'expired');
      assert.equal((kind(401, '{"detail":"Срок действия ключа истек"}') as AuthenticationError).reason, 'expired');
      assert.equal((kind(403, '{"detail":"API-ключ истёк"}') as AuthenticationError).reason, 'expired');
    });
    it('the funds wording is not tried before the status, and the bare word "баланс" is no funds error', () => {
      assert.ok(kind(401, '{"detail":"Неверный ключ: баланс недоступен"}') instanceof AuthenticationError);
      assert.ok(kind(401, '{"error":{"message":"insufficient balance"}}') instanceof AuthenticationError, '401 stays auth');
      assert.ok(kind(500, '{"detail":"Ошибка при чтении баланса"}') instanceof ServerError);
      assert.ok(kind(503, '{"detail":"Insufficient funds service down"}') instanceof ServerError);
      assert.ok(!(kind(400, '{"detail":"Баланс будет обновлён позже"}') instanceof InsufficientFundsError));
      assert.ok(kind(400, '{"detail":"Недостаточно средств на балансе"}') instanceof InsufficientFundsError);
      assert.ok(kind(400, '{"detail":"На балансе недостаточно средств"}') instanceof InsufficientFundsError);
      assert.equal((kind(429, '{"error":{"code":"insufficient_quota","message":"You exceeded your quota"}}') as InsufficientFundsError).scope, 'balance');
    });
    it('unknown model by status 404, by code and by Russian wording', () => {
      assert.ok(kind(404, '{"error":{"message":"no"}}') instanceof UnknownModelError);
      assert.ok(kind(404, '') instanceof UnknownModelError);
      assert.ok(
        !(kind(404, '<html><title>404 Not Found</title></html>', { 'content-type': 'text/html' }) instanceof UnknownModelError),
        'a proxy page is a wrong address',
      );
      assert.ok(kind(400, '{"error":{"code":"model_not_found","message":"no"}}') instanceof UnknownModelError);
      assert.ok(kind(422, '{"detail":"Модель aurora-9 не найдена"}') instanceof UnknownModelError);
      assert.ok(kind(400, '{"detail":"Неизвестная модель"}') instanceof UnknownModelError);
      assert.ok(kind(400, '{"message":"Model foo is not available"}') instanceof UnknownModelError);
    });
    it('edit not supported by code and by Russian wording', () => {
      assert.ok(kind(404, '{"error":{"code":"edit_not_supported","message":"no"}}') instanceof EditNotSupportedError);
      assert.ok(kind(400, '{"detail":"Модель sketch-mini не поддерживает редактирование"}') instanceof EditNotSupportedError);
      assert.ok(kind(422, '{"detail":"Редактирование изображений не поддерживается этой моделью"}') instanceof EditNotSupportedError);
    });
    it('413, 429, 5xx', () => {
      assert.ok(kind(413, '') instanceof PayloadTooLargeError);
      assert.ok(kind(429, '') instanceof RateLimitedError);
      assert.ok(kind(503, '') instanceof ServerError);
      assert.ok(kind(502, NGINX_502, { 'content-type': 'text/html' }) instanceof ServerError);
    });
  });

  describe('Retry-After and request ids', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    it('seconds, fractions, HTTP date, retry-after-ms', () => {
      assert.equal(parseRetryAfter({ 'retry-after': '3' }, now), 3000);
      assert.equal(parseRetryAfter({ 'retry-after': ' 1.5 ' }, now), 1500);
      assert.equal(parseRetryAfter({ 'retry-after': 'Tue, 01 Jan 2030 00:00:10 GMT' }, now), 10_000);
      assert.equal(parseRetryAfter({ 'retry-after': 'Mon, 31 Dec 2029 23:59:00 GMT' }, now), 0, 'a past date means now');
      assert.equal(parseRetryAfter({ 'retry-after-ms': '250', 'retry-after': '9' }, now), 250, 'retry-after-ms wins');
      assert.equal(parseRetryAfter({ 'retry-after': ['2', '7'] }, now), 2000);
    });
    it('absent or junk values give undefined', () => {
      assert.equal(parseRetryAfter({}, now), undefined);
      assert.equal(parseRetryAfter({ 'retry-after': '' }, now), undefined);
      assert.equal(parseRetryAfter({ 'retry-after': 'soon' }, now), undefined);
      assert.equal(parseRetryAfter({ 'retry-after': '-5' }, now), undefined);
      assert.equal(parseRetryAfter({ 'retry-after-ms': 'x' }, now), undefined);
    });
    it('a 429 carries retryAfterMs', () => {
      assert.equal((classifyApiError(429, '', { 'retry-after': '4' }) as RateLimitedError).retryAfterMs, 4000);
      assert.equal((classifyApiError(429, '', {}) as RateLimitedError).retryAfterMs, undefined);
    });
    it('request id headers', () => {
      assert.equal(requestIdOf({ 'x-request-id': 'a1' }), 'a1');
      assert.equal(requestIdOf({ 'request-id': 'b2' }), 'b2');
      assert.equal(requestIdOf({ 'cf-ray': 'c3' }), 'c3');
      assert.equal(requestIdOf({ 'x-correlation-id': 'd4' }), 'd4');
      assert.equal(requestIdOf({}), undefined);
      assert.equal(classifyApiError(400, '', { 'x-request-id': 'zz' }).requestId, 'zz');
    });
  });

  describe('the whole path through the client (local server)', () => {
    let server: LocalServer;
    let client: GatewayClient;
    let next: { status: number; body: string | Buffer; headers?: Record<string, string> };
    before(async () => {
      server = await localServer((_req, res) => {
        res.writeHead(next.status, { 'x-request-id': 'rid-7', ...(next.headers ?? {}) }).end(next.body);
      });
      client = newClient(server, 'k', { maxRetries: 0 });
    });
    after(async () => {
      await client.close();
      await server.close();
    });

    for (const c of BODIES) {
      it(`${c.name} (paid and free)`, async () => {
        for (const status of [400, 502]) {
          next = { status, body: c.body, headers: c.contentType ? { 'content-type': c.contentType } : {} };
          const calls = [
            { paid: true, call: () => client.generate({ model: 'm', prompt: 'p' }, new MemorySink()) },
            { paid: false, call: () => client.balance() },
          ];
          for (const { paid, call } of calls) {
            const error = await caught(call);
            assert.ok(error instanceof ApiError, `${c.name}: ${String(error)}`);
            assert.equal(error.status, status);
            assert.equal(error.requestId, 'rid-7');
            // A paid request may have been charged unless the gateway refused it in its own form.
            assert.equal(error.outcomeUnknown, paid && (status === 502 || !c.gatewayForm), `${c.name} @${status}`);
            assertReadable(error.message, c.name);
            if (c.message) assert.match(error.message, c.message);
          }
        }
      });
    }

    it('binary junk bytes (not valid UTF-8) through the client', async () => {
      next = { status: 500, body: randomBytes(4096), headers: { 'content-type': 'application/octet-stream' } };
      const error = await caught(() => client.me());
      assert.ok(error instanceof ServerError);
      assertReadable(error.message, 'binary');
    });
  });
});
