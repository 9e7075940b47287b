// The account endpoints' answers (me, balance, key, stats) as typed records. Gateways differ in
// small ways: a record may come inside a `data`/`result` envelope, numbers may come as strings.
// Pure: no vscode import.
import * as l10n from '@vscode/l10n';
import { ResponseFormatError } from './errors';
import type { BalanceRecord, KeyRecord, StatsSummary, UserRecord } from './types';
import { isRecord } from '../common/json';

export function toUserRecord(body: unknown): UserRecord {
  return unwrap(body, 'email') as unknown as UserRecord;
}

export function toBalanceRecord(answer: unknown): BalanceRecord {
  const body = unwrap(answer, 'balance');
  const balance = toNumber(body.balance);
  if (balance === undefined) throw new ResponseFormatError(l10n.t('The balance answer has no numeric "balance" field.'));
  const budget = toNumber(body.budget);
  return budget === undefined ? { balance } : { balance, budget };
}

export function toKeyRecord(answer: unknown): KeyRecord {
  const body = unwrap(answer, 'name');
  return { ...body, name: typeof body.name === 'string' ? body.name : null };
}

export function toStatsSummary(answer: unknown): StatsSummary {
  const body = unwrap(answer, 'today_spend');
  const numberOr0 = (v: unknown) => toNumber(v) ?? 0;
  return {
    ...body,
    today_spend: numberOr0(body.today_spend),
    today_requests: numberOr0(body.today_requests),
    month_spend: numberOr0(body.month_spend),
    month_requests: numberOr0(body.month_requests),
    avg_daily_spend: numberOr0(body.avg_daily_spend),
  };
}

/** Accepts the record itself or the record inside a `data`/`result` envelope. */
function unwrap(body: unknown, expectedField: string): Record<string, unknown> {
  if (!isRecord(body)) throw new ResponseFormatError(l10n.t('The gateway answered with something other than a JSON object.'));
  if (expectedField in body) return body;
  for (const envelope of ['data', 'result']) {
    const inner = body[envelope];
    if (isRecord(inner) && expectedField in inner) return inner;
  }
  return body;
}

function toNumber(value: unknown): number | undefined {
  const n = typeof value === 'string' && value.trim() ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}
