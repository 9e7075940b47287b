// Turns any error answer of the gateway (or of a proxy in front of it) into one typed error.
// Reads its headers (Retry-After, request id); its body is errorBody.ts's. Never throws.
import {
  ApiError,
  type ApiErrorDetails,
  AuthenticationError,
  type AuthenticationReason,
  EditNotSupportedError,
  type FundsScope,
  InsufficientFundsError,
  InvalidParametersError,
  PayloadTooLargeError,
  RateLimitedError,
  ServerError,
  UnknownModelError,
} from './errors';
import * as l10n from '@vscode/l10n';
import { inGatewayForm, parseErrorBody, type ParsedErrorBody } from './errorBody';

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

/**
 * Builds the typed error for a non-success answer. The order matters: explicit codes first, then
 * the status, and the message text (English and Russian) only where the status leaves room.
 * Whatever is not recognised keeps the gateway's own words (a plain ApiError).
 */
export function classifyApiError(status: number, bodyText: string, headers: Record<string, string | string[] | undefined>): ApiError {
  const parsed = parseErrorBody(bodyText, headerValue(headers, 'content-type'));
  const details: ApiErrorDetails = {
    status,
    message: humanMessage(status, parsed),
    code: parsed.code,
    type: parsed.type,
    param: parsed.param,
    requestId: requestIdOf(headers),
    gatewayForm: inGatewayForm(parsed),
  };
  const code = `${parsed.code ?? ''} ${parsed.type ?? ''}`.toLowerCase();
  const text = (parsed.html ? '' : (parsed.message ?? '')).toLowerCase();
  const hint = `${code} ${text}`;

  // 1. Codes say what happened whatever the status (OpenAI's insufficient_quota comes with 429).
  const byCode = classifyByCode(code, hint, status, details, parsed.param);
  if (byCode) return byCode;

  // 2. The status.
  if (status === 401) return new AuthenticationError(details, authReason(hint));
  if (status === 402) return new InsufficientFundsError(details, fundsScope(hint));
  if (status === 413) return new PayloadTooLargeError(details);
  if (status === 429) return new RateLimitedError(details, parseRetryAfter(headers));
  if (status >= 500) return new ServerError(details);
  // A proxy's HTML 404 is a wrong address, not a model the gateway does not know.
  if (status === 404) return parsed.html ? new ApiError(details) : new UnknownModelError(details);

  // 3. The words, for the statuses that do not say it by themselves (400, 403, 422, others).
  if (looksLikeFunds(text)) return new InsufficientFundsError(details, fundsScope(hint));
  if (looksLikeEditUnsupported(text)) return new EditNotSupportedError(details);
  if (looksLikeUnknownModel(text, parsed.param)) return new UnknownModelError(details);
  if ((status === 400 || status === 403) && looksLikeAuth(text)) return new AuthenticationError(details, authReason(hint));
  if (status === 400 || status === 422) return new InvalidParametersError(details);
  // A 403 about anything else (moderation, the plan, a region) keeps the gateway's words.
  return new ApiError(details);
}

const FUNDS_CODES =
  /\b(insufficient_(balance|funds|budget|quota|credits?)|budget_(exceeded|exhausted)|key_budget_exceeded|quota_exceeded|payment_required|not_enough_(balance|funds|money))\b/;
const AUTH_CODES =
  /\b(invalid_api_key|invalid_key|missing_api_key|api_key_(missing|invalid|expired|revoked)|key_(expired|revoked|disabled|invalid)|token_expired|invalid_token|authentication_error)\b/;
const MODEL_CODES = /\b(model_not_found|unknown_model|invalid_model|model_does_not_exist|model_not_available|unsupported_model)\b/;
const EDIT_CODES = /\b(edit_not_supported|editing_not_supported|edits_not_supported|image_edit_not_supported)\b/;

function classifyByCode(code: string, hint: string, status: number, details: ApiErrorDetails, param?: string): ApiError | undefined {
  if (!code.trim()) return undefined;
  if (FUNDS_CODES.test(code)) return new InsufficientFundsError(details, fundsScope(hint));
  if (AUTH_CODES.test(code)) return new AuthenticationError(details, authReason(hint));
  if (EDIT_CODES.test(code)) return new EditNotSupportedError(details);
  if (MODEL_CODES.test(code)) return new UnknownModelError(details);
  // `param: "model"` with a not-found code (a generic "not_found" on the model field).
  if (param === 'model' && /not_found|does_not_exist|unknown/.test(code) && status < 500) return new UnknownModelError(details);
  return undefined;
}

/** Specific wording only: a message that merely mentions the balance ("баланс") is not a funds refusal. */
function looksLikeFunds(text: string): boolean {
  return (
    /insufficient (balance|funds|budget|quota|credits?)|budget (is )?(exceeded|exhausted|depleted)|(not enough|no) (balance|funds|money|credits?)|(balance|funds|credits?) (is |are )?(too low|insufficient|exhausted)|(limit|quota) (of the key |of this key )?(is )?(exceeded|exhausted|reached)|top up/.test(
      text,
    ) ||
    /недостаточно (средств|денег)|не хватает (средств|денег)|недостаточно .{0,20}на (балансе|счёте|счете)|баланс.{0,20}недостаточ|пополните (баланс|счёт|счет)|(лимит|бюджет|квота)[^.]{0,30}(исчерпан|превышен)|(исчерпан|превышен)[^.]{0,10}(лимит|бюджет|квота)/.test(
      text,
    )
  );
}

function fundsScope(hint: string): FundsScope {
  if (/budget|бюджет|лимит.{0,10}ключ|ключ.{0,10}лимит|key.{0,10}limit|limit.{0,15}key/.test(hint)) return 'budget';
  if (/balance|funds|credit|quota|money|средств|денег|баланс|сч[её]т/.test(hint)) return 'balance';
  return 'unknown';
}

/** About the key itself: invalid, missing, expired, revoked. Not any text that contains the word "key". */
function looksLikeAuth(text: string): boolean {
  return (
    /(invalid|incorrect|unknown|bad|wrong|missing|expired|revoked|disabled) (api )?(key|token)|(api )?(key|token) (is )?(invalid|not valid|incorrect|expired|revoked|disabled|missing|required|not found)|unauthori[sz]ed|authentication (failed|required)|no api key/.test(
      text,
    ) ||
    /(неверный|недействительный|неизвестный|некорректный|просроченный|отозванный) (api[- ])?(ключ|токен)|(ключ|токен)[^.]{0,25}(недействител|неверен|не найден|истёк|истек|отозван|заблокирован|просрочен)|срок действия (api[- ])?ключа (истёк|истек)|не авторизован|требуется авторизация/.test(
      text,
    )
  );
}

function authReason(hint: string): AuthenticationReason {
  if (/expired|истёк|истек|просрочен/.test(hint)) return 'expired';
  if (/revoked|disabled|deactivated|отозван|заблокирован|отключ/.test(hint)) return 'revoked';
  if (/missing|no api key|not provided|required|отсутству|не указан|требуется/.test(hint)) return 'missing';
  return 'invalid';
}

function looksLikeUnknownModel(text: string, param?: string): boolean {
  return (
    /model[_ ]not[_ ]found|unknown[_ ]model|invalid[_ ]model|model (\S+ )?does not exist|no such model|unsupported[_ ]model|model (\S+ )?(is )?not (found|available|supported)/.test(
      text,
    ) ||
    /модель[^.]{0,40}не (найдена|существует|доступна|поддерживается)|неизвестная модель|нет такой модели|модели[^.]{0,30}не существует/.test(text) ||
    (param === 'model' && /not found|unknown|does not exist|не найден|неизвестн/.test(text))
  );
}

function looksLikeEditUnsupported(text: string): boolean {
  return (
    /edit[_ ]not[_ ]supported|does not support edit|editing is not supported|not support(ed)? (image )?edit|edits? (are|is) not (supported|available)/.test(
      text,
    ) || /не поддерживает (редактирование|правку|изменение изображ)|редактирование[^.]{0,30}не поддерживается|не умеет редактировать/.test(text)
  );
}

/** What each status means, in words (functions, so each message is translated when it is used). */
const STATUS_TEXT: Record<number, () => string> = {
  400: () => l10n.t('the request was rejected as invalid'),
  401: () => l10n.t('the API key was not accepted'),
  402: () => l10n.t('the balance is not sufficient'),
  403: () => l10n.t('access was refused'),
  404: () => l10n.t('the resource was not found'),
  408: () => l10n.t('the request timed out'),
  413: () => l10n.t('the request is too large'),
  422: () => l10n.t('the request was rejected as invalid'),
  429: () => l10n.t('too many requests were sent'),
  500: () => l10n.t('the gateway failed'),
  502: () => l10n.t('a proxy could not reach the gateway'),
  503: () => l10n.t('the gateway is unavailable'),
  504: () => l10n.t('a proxy timed out waiting for the gateway'),
  // Cloudflare's own statuses for an origin it could not reach, or that did not answer in time.
  521: () => l10n.t('a proxy could not reach the gateway'),
  522: () => l10n.t('a proxy timed out waiting for the gateway'),
  523: () => l10n.t('a proxy could not reach the gateway'),
  524: () => l10n.t('a proxy timed out waiting for the gateway'),
};

function humanMessage(status: number, parsed: ParsedErrorBody): string {
  const what = STATUS_TEXT[status] ? STATUS_TEXT[status]() : status >= 500 ? l10n.t('the gateway failed') : l10n.t('the request failed');
  if (parsed.html) {
    return parsed.message
      ? l10n.t('The gateway answered HTTP {0} with an HTML page ("{1}"): {2}.', status, parsed.message, what)
      : l10n.t('The gateway answered HTTP {0} with an HTML page: {1}.', status, what);
  }
  if (parsed.message) return endSentence(parsed.message);
  return l10n.t('The gateway answered HTTP {0}: {1}.', status, what);
}

function endSentence(text: string): string {
  const first = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?…]$/.test(first) ? first : `${first}.`;
}
