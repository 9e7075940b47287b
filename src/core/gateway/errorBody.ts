// Reads the body of a gateway error answer (or a proxy's) into its message, code, type and param.
// The spec does not show the error body shape, so every plausible form is read: JSON in its
// common shapes, a truncated JSON, an HTML page, plain text. Never throws. Pure: no vscode import.
import { isRecord } from '../common/json';

export interface ParsedErrorBody {
  message?: string;
  code?: string;
  type?: string;
  param?: string;
  /** True when the body was an HTML page (typically a proxy's). */
  html?: boolean;
  /** True when the body was a JSON object (or a list of them), read whole. */
  json?: boolean;
}

/**
 * Whether an error answer is in the gateway's own form: the contract's bodies are JSON, so a JSON
 * object that names a message or a code. An HTML page, plain text, a cut or empty body may come from
 * anything between the client and the gateway (docs/money.md, "Status and outcome").
 */
export function inGatewayForm(parsed: ParsedErrorBody): boolean {
  return parsed.json === true && (parsed.message !== undefined || parsed.code !== undefined || parsed.type !== undefined);
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

  const result: ParsedErrorBody = { json: true };
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
  const message = match?.[1]?.replace(/\\(.)/g, '$1').replace(/\s+/g, ' ').trim();
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
  const text = decodeEntities(raw.replace(/<[^>]*>/g, ' '))
    .replace(/\s+/g, ' ')
    .trim();
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

/** False for text without letters, or with control or replacement characters (a binary body decoded as UTF-8). */
function isReadable(text: string): boolean {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what marks a binary body
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
