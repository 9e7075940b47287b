// Non-image routes: catalog, authentication, account endpoints, admin endpoints.
import type { IncomingMessage } from 'node:http';
import { CATALOG_GROUPS, type CatalogGroup } from './wire';
import { ApiFailure, badRequest } from './apiError';
import { CATALOG } from './catalog';
import { parseFaultSpec } from './faults';
import { parseForms } from './forms';
import { DEMO_KEYS, type KeyState } from './keys';
import { sendJson, sleep, type RequestContext } from './respond';
import type { EmulatorState } from './state';

export async function handleCatalog(ctx: RequestContext, path: string): Promise<void> {
  if (path === '/public/gateway/models') {
    await sendJson(ctx, { object: 'list', data: CATALOG });
    return;
  }
  const group = path.slice('/public/gateway/models/'.length);
  if (!(CATALOG_GROUPS as readonly string[]).includes(group)) {
    throw new ApiFailure(404, 'group_not_found', `Unknown model group "${group}". Groups: ${CATALOG_GROUPS.join(', ')}.`, 'group');
  }
  await sendJson(ctx, { object: 'list', data: CATALOG[group as CatalogGroup] });
}

/** Resolves the Bearer key, or throws the matching 401. Records the key's name in the log. */
export function authenticate(ctx: RequestContext, state: EmulatorState): KeyState {
  const header = ctx.req.headers.authorization;
  if (!header || header.trim() === '' || /^Bearer\s*$/i.test(header.trim())) {
    throw new ApiFailure(401, 'missing_api_key', 'No API key: send the header "Authorization: Bearer <API_KEY>".');
  }
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
  const key = m ? state.key(m[1]!) : undefined;
  ctx.entry.key = key?.name ?? 'unknown';
  if (!m) throw new ApiFailure(401, 'invalid_api_key', 'The Authorization header must be "Bearer <API_KEY>".');
  if (!key && state.forms.has('invalid-key-400')) throw new ApiFailure(400, 'invalid_request', 'Invalid API key provided.', null, 'invalid_request_error');
  if (!key) throw new ApiFailure(401, 'invalid_api_key', 'The API key is not valid.');
  if (key.revoked) throw new ApiFailure(401, 'key_revoked', `The API key "${key.name}" has been revoked.`);
  if (key.expiresAt !== undefined && key.expiresAt <= Date.now()) {
    throw new ApiFailure(401, 'key_expired', `The API key "${key.name}" expired on ${new Date(key.expiresAt).toISOString()}.`);
  }
  return key;
}

const ACCOUNT_PATHS = ['/v1/gateway/me', '/v1/gateway/balance', '/v1/gateway/key', '/v1/gateway/stats/summary'];

export function isAccountPath(path: string): boolean {
  return ACCOUNT_PATHS.includes(path);
}

export async function handleAccount(ctx: RequestContext, state: EmulatorState, key: KeyState, path: string): Promise<void> {
  const answer = accountAnswer(state, key, path);
  // Read now, sent later: a charge made meanwhile is not in this answer.
  if (state.accountGapMs > 0) await sleep(state.accountGapMs, ctx.shutdown);
  return sendJson(ctx, answer);
}

function accountAnswer(state: EmulatorState, key: KeyState, path: string): unknown {
  switch (path) {
    case '/v1/gateway/me':
      return { email: 'demo@example.com', id: 42 };
    case '/v1/gateway/balance': {
      const budget = state.keyBudgetRub(key.key);
      return budget === undefined ? { balance: state.balanceRub } : { balance: state.balanceRub, budget };
    }
    case '/v1/gateway/key':
      return state.keyRecord(key);
    default:
      return state.stats(key);
  }
}

export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) return {};
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw badRequest('invalid_json', 'The request body is not valid JSON.');
  }
}

/** /__emulator/* : control and inspection for tests in other processes. Not logged. */
export async function handleAdmin(ctx: RequestContext, state: EmulatorState, req: IncomingMessage, path: string, body: Buffer): Promise<void> {
  const route = `${req.method} ${path.slice('/__emulator'.length)}`;
  switch (route) {
    case 'GET /health':
      return sendJson(ctx, { ok: true });
    case 'GET /requests':
      return sendJson(ctx, { requests: state.requests, totalReservations: state.totalReservations, totalCharges: state.totalCharges });
    case 'GET /downloads':
      return sendJson(ctx, { downloads: state.downloads });
    case 'POST /reset':
      state.reset();
      return sendJson(ctx, { ok: true });
    case 'GET /faults':
      return sendJson(ctx, { faults: state.faults.list() });
    case 'POST /faults': {
      const spec = parseFaultSpec(parseJsonBody(body));
      if (typeof spec === 'string') throw badRequest('invalid_value', spec, 'fault');
      state.armFault(spec);
      return sendJson(ctx, { faults: state.faults.list() });
    }
    case 'GET /forms':
      return sendJson(ctx, { forms: [...state.forms] });
    case 'POST /forms': {
      const forms = parseForms((parseJsonBody(body) as { forms?: unknown }).forms);
      if (typeof forms === 'string') throw badRequest('invalid_value', forms, 'forms');
      state.setForms(forms);
      return sendJson(ctx, { forms: [...state.forms] });
    }
    case 'DELETE /forms':
      state.setForms([]);
      return sendJson(ctx, { forms: [] });
    case 'DELETE /faults':
      state.clearFaults();
      return sendJson(ctx, { faults: [] });
    case 'POST /keys': {
      const b = parseJsonBody(body) as { key?: unknown; like?: unknown };
      if (typeof b.key !== 'string' || !/^\S{1,200}$/.test(b.key)) throw badRequest('invalid_value', '"key" must be 1 to 200 non-space characters.', 'key');
      if (typeof b.like !== 'string' || !Object.prototype.hasOwnProperty.call(DEMO_KEYS, b.like)) {
        throw badRequest('invalid_value', `"like" must be one of: ${Object.keys(DEMO_KEYS).join(', ')}.`, 'like');
      }
      const added = state.addKey(b.key, b.like as keyof typeof DEMO_KEYS);
      return sendJson(ctx, { ok: true, name: added.name });
    }
    case 'GET /state':
      return sendJson(ctx, state.snapshot());
    case 'POST /state':
      applyStateBody(state, parseJsonBody(body));
      return sendJson(ctx, state.snapshot());
    default:
      throw new ApiFailure(404, 'not_found', `No admin route ${route}.`);
  }
}

function applyStateBody(state: EmulatorState, body: unknown): void {
  if (typeof body !== 'object' || body === null) throw badRequest('invalid_value', 'Body must be a JSON object.');
  const b = body as { balance?: unknown; keyBudgets?: unknown; imageGapMs?: unknown; headGapMs?: unknown; midImageGapMs?: unknown; accountGapMs?: unknown };
  if (b.balance !== undefined && (typeof b.balance !== 'number' || !Number.isFinite(b.balance)))
    throw badRequest('invalid_value', '"balance" must be a number.', 'balance');
  for (const field of ['imageGapMs', 'headGapMs', 'midImageGapMs', 'accountGapMs'] as const) {
    const value = b[field];
    if (value !== undefined && (typeof value !== 'number' || !(value >= 0) || value > 60_000)) {
      throw badRequest('invalid_value', `"${field}" must be a number from 0 to 60000.`, field);
    }
  }
  const budgets = (b.keyBudgets ?? {}) as Record<string, unknown>;
  if (typeof budgets !== 'object' || budgets === null) throw badRequest('invalid_value', '"keyBudgets" must be an object.', 'keyBudgets');
  for (const [key, value] of Object.entries(budgets)) {
    if (value !== null && (typeof value !== 'number' || !Number.isFinite(value)))
      throw badRequest('invalid_value', `keyBudgets["${key}"] must be a number or null.`, 'keyBudgets');
    if (!state.findKey(key)) throw badRequest('invalid_value', `Unknown key "${key}".`, 'keyBudgets');
  }
  // Everything checked: apply.
  if (typeof b.balance === 'number') state.setBalance(b.balance);
  if (typeof b.imageGapMs === 'number') state.imageGapMs = b.imageGapMs;
  if (typeof b.headGapMs === 'number') state.headGapMs = b.headGapMs;
  if (typeof b.midImageGapMs === 'number') state.midImageGapMs = b.midImageGapMs;
  if (typeof b.accountGapMs === 'number') state.accountGapMs = b.accountGapMs;
  for (const [key, value] of Object.entries(budgets)) state.setKeyBudget(key, value as number | null);
}
