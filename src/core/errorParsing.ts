// Turns any error answer of the gateway (or of a proxy in front of it) into one typed error.
// The spec does not show the error body shape, so every plausible form is read. Never throws.
import {
  ApiError,
  ApiErrorDetails,
  AuthenticationError,
  AuthenticationReason,
  EditNotSupportedError,
  FundsScope,
  InsufficientFundsError,
  InvalidParametersError,
  PayloadTooLargeError,
  RateLimitedError,
  ServerError,
  UnknownModelError,
} from './errors';
import { tr } from './i18n';

export interface ParsedErrorBody {
  message?: string;
  code?: string;
  type?: string;
  param?: string;
  /** True when the body was an HTML page (typically a proxy's). */
  html?: boolean;
}

const MAX_MESSAGE_LENGTH = 400;

export function parseErrorBody(text: string, contentType = ''): ParsedErrorBody {
  try {
    const trimmed = text.trim();
    if (!trimmed) return {};
    const json = parseJsonError(trimmed);
    if (json) return json;
    // Cut or broken JSON (a truncated body, say): salvage the message, never show raw JSON.
    if (/^[[{]/.test(trimmed)) return salvageJsonMessage(trimmed);
    if (/html/i.test(contentType) || /^<(!doctype|html|head|body|\?xml)/i.test(trimmed)) {
      return { message: htmlHeadline(trimmed), html: true };
    }
    // Binary or garbled bodies are no message at all: the status speaks instead.
    if (!isReadable(trimmed)) return {};
    return { message: clip(trimmed.replace(/\s+/g, ' ')) };
  } catch {
    return {};
  }
}

function parseJsonError(text: string): ParsedErrorBody | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (Array.isArray(value)) value = value[0];
  // A JSON string is the message itself; null, numbers, booleans and empty arrays carry none.
  if (typeof value === 'string') return value.trim() && isReadable(value) ? { message: clip(value.trim().replace(/\s+/g, ' ')) } : {};
  if (!isRecord(value)) return {};

  const result: ParsedErrorBody = {};
  const error = value.error;
  if (isRecord(error)) {
    Object.assign(result, fieldsOf(error));
  } else if (typeof error === 'string') {
    result.message = error;
  }
  const top = fieldsOf(value);
  result.message ??= top.message ?? detailMessage(value.detail) ?? errorsListMessage(value.errors);
  result.code ??= top.code;
  result.type ??= top.type;
  result.param ??= top.param ?? detailParam(value.detail);
  if (result.message) result.message = clip(result.message);
  return result;
}

function salvageJsonMessage(text: string): ParsedErrorBody {
  const match = /"(?:message|msg|detail|error)"\s*:\s*"((?:[^"\\]|\\.)*)/.exec(text);
  const message = match?.[1].replace(/\\(.)/g, '$1').replace(/\s+/g, ' ').trim();
  return message && isReadable(message) ? { message: clip(message) } : {};
}

function fieldsOf(record: Record<string, unknown>): ParsedErrorBody {
  const message = firstString(record.message, record.msg, record.error_description, record.title, record.description);
  return {
    message,
    code: scalarString(record.code ?? record.error_code),
    type: scalarString(record.type),
    param: scalarString(record.param ?? record.field),
  };
}

/** FastAPI style: `detail` is a string, an object, or a list of `{loc, msg}`. */
function detailMessage(detail: unknown): string | undefined {
  if (typeof detail === 'string') return detail;
  if (isRecord(detail)) return firstString(detail.message, detail.msg);
  if (Array.isArray(detail)) {
    const parts = detail
      .map((item) => {
        if (typeof item === 'string') return item;
        if (!isRecord(item)) return undefined;
        const msg = firstString(item.msg, item.message);
        const loc = Array.isArray(item.loc) ? item.loc.filter((p) => p !== 'body').join('.') : undefined;
        return msg && loc ? `${loc}: ${msg}` : msg;
      })
      .filter((p): p is string => !!p);
    return parts.length ? parts.join('; ') : undefined;
  }
  return undefined;
}

function detailParam(detail: unknown): string | undefined {
  if (!Array.isArray(detail) || !isRecord(detail[0]) || !Array.isArray(detail[0].loc)) return undefined;
  const loc = detail[0].loc.filter((p: unknown) => p !== 'body');
  return loc.length ? String(loc[loc.length - 1]) : undefined;
}

function errorsListMessage(errors: unknown): string | undefined {
  if (!Array.isArray(errors)) return undefined;
  const parts = errors.map((e) => (typeof e === 'string' ? e : isRecord(e) ? firstString(e.message, e.msg, e.detail) : undefined));
  const found = parts.filter((p): p is string => !!p);
  return found.length ? found.join('; ') : undefined;
}

function htmlHeadline(html: string): string | undefined {
  const pick = (tag: string) => html.match(new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`, 'i'))?.[1];
  const raw = pick('title') ?? pick('h1');
  if (!raw) return undefined;
  const text = decodeEntities(raw.replace(/<[^>]*>/g, ' ')).replace(/\s+/g, ' ').trim();
  return text ? clip(text) : undefined;
}

function decodeEntities(text: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
  return text.replace(/&(#x?[0-9a-f]+|\w+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code < 0x110000 ? String.fromCodePoint(code) : whole;
    }
    return named[name.toLowerCase()] ?? whole;
  });
}

/** Retry-After is seconds or an HTTP date; some services send retry-after-ms. */
export function parseRetryAfter(headers: Record<string, string | string[] | undefined>, now = Date.now()): number | undefined {
  const ms = headerValue(headers, 'retry-after-ms');
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.round(Number(ms));
  const value = headerValue(headers, 'retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  // An HTTP date names its month; anything else (a negative number, junk) is ignored.
  const date = /[a-z]/i.test(value) ? Date.parse(value) : NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

export function requestIdOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  for (const name of ['x-request-id', 'request-id', 'x-amzn-requestid', 'cf-ray', 'x-correlation-id']) {
    const value = headerValue(headers, name);
    if (value) return value;
  }
  return undefined;
}

/** Builds the typed error for a non-success answer. */
export function classifyApiError(
  status: number,
  bodyText: string,
  headers: Record<string, string | string[] | undefined>,
): ApiError {
  const parsed = parseErrorBody(bodyText, headerValue(headers, 'content-type'));
  const details: ApiErrorDetails = {
    status,
    message: humanMessage(status, parsed),
    code: parsed.code,
    type: parsed.type,
    param: parsed.param,
    requestId: requestIdOf(headers),
  };
  const hint = `${parsed.code ?? ''} ${parsed.type ?? ''} ${parsed.message ?? ''}`.toLowerCase();

  if (status === 402 || looksLikeFunds(hint)) return new InsufficientFundsError(details, fundsScope(hint));
  if (status === 401 || (status === 403 && looksLikeAuth(hint))) return new AuthenticationError(details, authReason(status, hint));
  if (status === 413) return new PayloadTooLargeError(details);
  if (status === 429) return new RateLimitedError(details, parseRetryAfter(headers));
  if (status >= 500) return new ServerError(details);
  if (looksLikeUnknownModel(hint, parsed.param)) return new UnknownModelError(details);
  if (looksLikeEditUnsupported(hint)) return new EditNotSupportedError(details);
  if (status === 400 || status === 422) return new InvalidParametersError(details);
  if (status === 403) return new AuthenticationError(details, 'forbidden');
  return new ApiError(details);
}

function looksLikeFunds(hint: string): boolean {
  return /insufficient[_ ](balance|funds|budget|quota|credit)|budget[_ ](exceeded|exhausted)|not enough (balance|funds|money)|недостаточно (средств|денег)|баланс/.test(hint);
}

function fundsScope(hint: string): FundsScope {
  if (/budget|бюджет/.test(hint)) return 'budget';
  if (/balance|funds|credit|quota|средств|баланс/.test(hint)) return 'balance';
  return 'unknown';
}

function looksLikeAuth(hint: string): boolean {
  return /key|token|auth|expired|revoked/.test(hint);
}

function authReason(status: number, hint: string): AuthenticationReason {
  if (/expired|истек/.test(hint)) return 'expired';
  if (/revoked|disabled|deactivated|отозван/.test(hint)) return 'revoked';
  if (/missing|no api key|not provided|required/.test(hint)) return 'missing';
  return status === 403 ? 'forbidden' : 'invalid';
}

function looksLikeUnknownModel(hint: string, param?: string): boolean {
  return (
    /model[_ ]not[_ ]found|unknown[_ ]model|invalid[_ ]model|model[_ ]does not exist|no such model|unsupported[_ ]model/.test(hint) ||
    (param === 'model' && /not found|unknown|does not exist/.test(hint))
  );
}

function looksLikeEditUnsupported(hint: string): boolean {
  return /edit[_ ]not[_ ]supported|does not support edit|editing is not supported|not support(ed)? (image )?edit/.test(hint);
}

/** What each status means, in words (functions, so each message is translated when it is used). */
const STATUS_TEXT: Record<number, () => string> = {
  400: () => tr('the request was rejected as invalid'),
  401: () => tr('the API key was not accepted'),
  402: () => tr('the balance is not sufficient'),
  403: () => tr('access was refused'),
  404: () => tr('the resource was not found'),
  408: () => tr('the request timed out'),
  413: () => tr('the request is too large'),
  422: () => tr('the request was rejected as invalid'),
  429: () => tr('too many requests were sent'),
  500: () => tr('the gateway failed'),
  502: () => tr('a proxy could not reach the gateway'),
  503: () => tr('the gateway is unavailable'),
  504: () => tr('a proxy timed out waiting for the gateway'),
};

function humanMessage(status: number, parsed: ParsedErrorBody): string {
  const what = Object.hasOwn(STATUS_TEXT, status) ? STATUS_TEXT[status]() : status >= 500 ? tr('the gateway failed') : tr('the request failed');
  if (parsed.html) {
    return parsed.message
      ? tr('The gateway answered HTTP {0} with an HTML page ("{1}"): {2}.', status, parsed.message, what)
      : tr('The gateway answered HTTP {0} with an HTML page: {1}.', status, what);
  }
  if (parsed.message) return endSentence(parsed.message);
  return tr('The gateway answered HTTP {0}: {1}.', status, what);
}

function endSentence(text: string): string {
  const first = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?…]$/.test(first) ? first : `${first}.`;
}

/** False for text without letters, or with control or replacement characters (a binary body decoded as UTF-8). */
function isReadable(text: string): boolean {
  return /\p{L}/u.test(text) && !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffd]/.test(text);
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE_LENGTH ? `${text.slice(0, MAX_MESSAGE_LENGTH - 1)}…` : text;
}

function firstString(...values: unknown[]): string | undefined {
  for (const value of values) if (typeof value === 'string' && value.trim()) return value.trim();
  return undefined;
}

function scalarString(value: unknown): string | undefined {
  if (typeof value === 'string' && value) return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
