// What the MCP tools answer: the shapes the protocol side (mcpServer.ts) turns into results, and
// the plain English of their text (models, account, saved images, the spending cap). Pure: no vscode import.
import * as path from 'node:path';
import { canEdit } from '../../core/gateway/catalog';
import { type AlertFacts, type AlertSettings, describeAlert, evaluateAlerts, type MoneyAlert } from '../../core/money/alerts';
import { type CostEstimate, formatRubles } from '../../core/money/cost';
import type { CapStatus } from '../../core/money/spendingCap';
import type { BalanceRecord, ImageModel, KeyRecord, StatsSummary } from '../../core/gateway/types';
import type { JobResult } from '../../jobs/jobTypes';

export interface ToolAnswer<Structured> {
  text: string;
  structured: Structured;
  /** A small PNG thumbnail (base64), never the full image. */
  preview?: string;
  /** Saved files, as resource links (clickable in VS Code's chat) for clients that know them. */
  links?: { uri: string; name: string; mimeType?: string }[];
}

/** A paid call that failed: whether it was sent, and the paid images saved or kept before the failure. */
export class PaidCallFailure extends Error {
  constructor(
    readonly error: unknown,
    readonly sent: boolean,
    /** Workspace-relative paths of the images saved before the failure. */
    readonly saved: { path: string; uri: string }[],
    readonly recovered: { manifestPath: string; files: string[]; reason: string } | undefined,
  ) {
    super(error instanceof Error ? error.message : String(error));
  }
}

/** What the protocol side gives a call: the client's cancellation, progress notes, and a channel for what comes after a cancel. */
export interface CallContext {
  signal?: AbortSignal;
  progress?: (message: string) => void;
  /** Said once the call's own answer can no longer be (it was cancelled after the gateway had charged). */
  notify?: (message: string) => void;
  /** The client's name from `initialize` (clientInfo.name): recorded as who made the result. */
  client?: string;
}

const MIME_TYPES: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp', '.svg': 'image/svg+xml' };

/** The media type of a saved image, for a resource link. */
export function mimeTypeOf(file: string): string | undefined {
  return MIME_TYPES[path.extname(file).toLowerCase()];
}

/** One line of list_models: prices, count, editing and the model's lists. */
export function modelLine(m: ImageModel): string {
  return (
    `- ${m.id}${m.provider ? ` (${m.provider})` : ''}: ${rub(m.min_price_per_image)}–${rub(m.max_price_per_image)} per image, max_n ${m.max_n}, ` +
    `${canEdit(m) ? `edits (up to ${m.max_input_references} references)` : 'no editing'}${m.supports_generation ? '' : ', edit only'}` +
    `${m.supported_resolutions.length ? `, resolutions ${m.supported_resolutions.join('/')}` : ''}` +
    `${m.supported_aspect_ratios.length ? `, aspect ratios ${m.supported_aspect_ratios.join('/')}` : ''}` +
    `${m.supported_background.length ? `, background ${m.supported_background.join('/')}` : ''}`
  );
}

/** A money alert in force, as get_account gives it: its kind, the sentence, and its figures. */
export type AccountWarning = MoneyAlert & { message: string };

/**
 * The money alerts in force now, by the same rules as the window's notifications (core/money/alerts.ts),
 * each time get_account is called: an agent is told while they hold, not once.
 */
export function accountWarnings(
  settings: AlertSettings,
  records: { balance: BalanceRecord; key: KeyRecord; stats: StatsSummary },
  now: Date,
  weekSpend?: number,
): AccountWarning[] {
  const { balance, key, stats } = records;
  const remaining = balance.budget ?? key.budget?.remaining;
  const facts: AlertFacts = {
    now,
    balance: balance.balance,
    ...(key.budget && typeof remaining === 'number'
      ? { budget: { remaining, initial: key.budget.initial, ...(key.budget.reset_at ? { resetAt: key.budget.reset_at } : {}) } }
      : {}),
    avgDailySpend: stats.avg_daily_spend,
    todaySpend: stats.today_spend,
    ...(weekSpend !== undefined ? { weekSpend } : {}),
  };
  return evaluateAlerts(settings, facts).inForce.map((alert) => ({ ...alert, message: describeAlert(alert, 'en') }));
}

/** The account tool's text: balance, the key's budget and expiry, spending today and over 30 days, and the warnings in force. */
export function accountLines(balance: BalanceRecord, key: KeyRecord, stats: StatsSummary, warnings: readonly AccountWarning[] = []): string[] {
  const lines = [`Balance ${rub(balance.balance)}.`];
  if (key.budget) {
    const reset = key.budget.reset_interval ? `, resets ${key.budget.reset_interval}${key.budget.reset_at ? ` on ${key.budget.reset_at}` : ''}` : '';
    lines.push(`Key "${key.name ?? ''}": budget ${rub(key.budget.remaining)} left of ${rub(key.budget.initial)}${reset}.`);
  } else lines.push(`Key "${key.name ?? ''}": no budget.`);
  lines.push(key.expires_at ? `The key expires on ${key.expires_at}.` : 'The key does not expire.');
  lines.push(
    `Today: ${rub(stats.today_spend)} in ${stats.today_requests} request(s); 30 days: ${rub(stats.month_spend)} in ${stats.month_requests}, ${rub(stats.avg_daily_spend)} a day on average.`,
  );
  if (stats.top_model_by_spend) lines.push(`Top model by spend: ${stats.top_model_by_spend}.`);
  for (const warning of warnings) lines.push(`WARNING: ${warning.message}`);
  if (warnings.length) lines.push('The money is about to run out: tell the user and make no more paid calls unless they say so.');
  return lines;
}

/** A paid call's text: what was made, the cost, the saved files, and paid images kept elsewhere. */
export function imageLines(result: JobResult, files: { path: string; uri: string }[], verb: string, style: string | undefined): string[] {
  const cost = result.usage?.cost_rub !== undefined ? rub(result.usage.cost_rub) : 'unknown';
  const balance = result.usage?.balance !== undefined ? rub(result.usage.balance) : 'unknown';
  const lines = [
    `${verb} ${files.length} image(s) with ${result.model}${style ? ` in style ${style}` : ''}. Cost ${cost} (reserved ${rub(result.estimate.reservation)}), balance after ${balance}.`,
    'Saved (workspace-relative paths):',
    ...files.map((f) => `- ${f.path} (${f.uri})`),
  ];
  if (result.recovered)
    lines.push(
      `Could not save ${result.recovered.files.length} paid image(s) into the workspace (${result.recovered.reason}); they are kept in ${result.recovered.manifestPath}.`,
    );
  return lines;
}

export function rub(amount: number): string {
  return formatRubles(amount, 'en');
}

export function range(estimate: CostEstimate): string {
  return estimate.expectedMin === estimate.expectedMax ? rub(estimate.expectedMax) : `${rub(estimate.expectedMin)}–${rub(estimate.expectedMax)}`;
}

export function capLine(cap: CapStatus): string {
  return `Spending cap: ${rub(cap.remainingThisSession)} left of ${rub(cap.maxCostPerSession)} this session (${rub(cap.spentThisSession)} spent); at most ${rub(cap.maxCostPerCall)} reserved per call.`;
}
