// The MCP server's configuration, from environment variables only: the extension passes its
// settings and the key from SecretStorage this way, and standalone clients (Claude Code, Cursor,
// Codex CLI) set them in their MCP configuration. Pure: no vscode import.
import * as os from 'node:os';
import * as path from 'node:path';
import type { ConnectionSettings } from '../../core/gateway/proxy';
import { type AlertSettings, cleanThresholds, DEFAULT_ALERT_SETTINGS } from '../../core/money/alerts';
import { agentJournalFile } from '../../jobs/results/agentJournal';

export const ENV = {
  baseUrl: 'GATEWAY_IMAGES_BASE_URL',
  apiKey: 'GATEWAY_IMAGES_API_KEY',
  workspace: 'GATEWAY_IMAGES_WORKSPACE',
  outputDirectory: 'GATEWAY_IMAGES_OUTPUT_DIR',
  maxCostPerCall: 'GATEWAY_IMAGES_MAX_COST_PER_CALL',
  maxCostPerSession: 'GATEWAY_IMAGES_MAX_COST_PER_SESSION',
  timeoutSeconds: 'GATEWAY_IMAGES_TIMEOUT_SECONDS',
  recoveryDir: 'GATEWAY_IMAGES_RECOVERY_DIR',
  resultsJournal: 'GATEWAY_IMAGES_RESULTS_JOURNAL',
  workspaceTrusted: 'GATEWAY_IMAGES_WORKSPACE_TRUSTED',
  // The money alerts get_account carries (gatewayImages.alerts.*).
  alertBudgetThresholds: 'GATEWAY_IMAGES_ALERT_BUDGET_THRESHOLDS',
  alertRunwayDays: 'GATEWAY_IMAGES_ALERT_RUNWAY_DAYS',
  alertDailySpend: 'GATEWAY_IMAGES_ALERT_DAILY_SPEND',
  // The connection, as VS Code's `http.*` settings give it to the extension (see connectionEnvironment).
  proxyAuthorization: 'GATEWAY_IMAGES_PROXY_AUTHORIZATION',
  noProxy: 'GATEWAY_IMAGES_NO_PROXY',
  proxyStrictSSL: 'GATEWAY_IMAGES_PROXY_STRICT_SSL',
  proxySupport: 'GATEWAY_IMAGES_PROXY_SUPPORT',
  systemCertificates: 'GATEWAY_IMAGES_SYSTEM_CERTIFICATES',
} as const;

/** The standard variables the server's connection also follows (read by core/gateway/proxy.ts and Node itself). */
export const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'] as const;

/** Defaults of the spending cap, in rubles (the same as the settings' defaults). */
export const DEFAULT_MAX_COST_PER_CALL = 50;
export const DEFAULT_MAX_COST_PER_SESSION = 200;

export interface McpConfig {
  baseUrl: string;
  /** Undefined without a key: the catalog and estimates still work. */
  apiKey?: string;
  /** Absolute, real path (symlinks resolved) of the folder outputs are confined to. */
  workspaceRoot: string;
  /** Relative to the workspace root. */
  outputDirectory: string;
  maxCostPerCall: number;
  maxCostPerSession: number;
  timeoutMs: number;
  recoveryDir: string;
  /** The results journal its paid results go into: the window's when VS Code starts it, else agentJournalFile(). */
  resultsJournal?: string;
  /** False when VS Code has not trusted the workspace: its styles are read, but never send on their own (default true). */
  workspaceTrusted?: boolean;
  /** The money alerts get_account carries (default: the settings' defaults). */
  alerts?: AlertSettings;
  /** Proxy and certificate settings beyond HTTPS_PROXY/HTTP_PROXY/NO_PROXY (default: the extension's defaults). */
  connection?: ConnectionSettings;
}

/** A configuration problem, named by its variable, reported on stderr before the server starts. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
  }
}

/** Reads the configuration. `realpath` resolves the workspace root (fs.realpathSync in production). */
export function readConfig(env: NodeJS.ProcessEnv, cwd: string, realpath: (p: string) => string): McpConfig {
  const text = (name: string) => env[name]?.trim() || undefined;
  const baseUrl = text(ENV.baseUrl);
  if (!baseUrl) throw new ConfigError(ENV.baseUrl, 'set it to the gateway address, for example https://gateway.example/.');
  const root = path.resolve(cwd, text(ENV.workspace) ?? '.');
  let workspaceRoot: string;
  try {
    workspaceRoot = realpath(root);
  } catch {
    throw new ConfigError(ENV.workspace, `the folder ${root} does not exist.`);
  }
  return {
    baseUrl,
    apiKey: text(ENV.apiKey),
    workspaceRoot,
    outputDirectory: text(ENV.outputDirectory) ?? 'generated-images',
    maxCostPerCall: rubles(env, ENV.maxCostPerCall, DEFAULT_MAX_COST_PER_CALL),
    maxCostPerSession: rubles(env, ENV.maxCostPerSession, DEFAULT_MAX_COST_PER_SESSION),
    timeoutMs: Math.round(rubles(env, ENV.timeoutSeconds, 600) * 1000) || 600_000,
    recoveryDir: text(ENV.recoveryDir) ?? path.join(os.homedir(), '.gateway-images', 'recovery'),
    resultsJournal: path.resolve(cwd, text(ENV.resultsJournal) ?? agentJournalFile(workspaceRoot, os.homedir())),
    workspaceTrusted: text(ENV.workspaceTrusted) !== '0',
    alerts: readAlerts(env),
    connection: readConnection(env),
  };
}

/** The alerts' settings: percents separated by commas ("none" or "off": no budget alerts), days and rubles (0: off). */
export function readAlerts(env: NodeJS.ProcessEnv): AlertSettings {
  const raw = env[ENV.alertBudgetThresholds]?.trim();
  let budgetThresholds = DEFAULT_ALERT_SETTINGS.budgetThresholds;
  if (raw && ['none', 'off', '[]'].includes(raw.toLowerCase())) budgetThresholds = [];
  else if (raw) {
    const values = raw
      .replace(/^\[|\]$/g, '')
      .split(/[,;\s]+/)
      .filter(Boolean)
      .map(Number);
    if (!values.every((v) => Number.isFinite(v) && v > 0 && v <= 100))
      throw new ConfigError(ENV.alertBudgetThresholds, `must be percents from 1 to 100 separated by commas, or "none"; got "${raw}".`);
    budgetThresholds = cleanThresholds(values);
  }
  return {
    budgetThresholds,
    runwayDays: rubles(env, ENV.alertRunwayDays, DEFAULT_ALERT_SETTINGS.runwayDays),
    dailySpend: rubles(env, ENV.alertDailySpend, DEFAULT_ALERT_SETTINGS.dailySpend),
  };
}

/** The connection settings from the environment; the defaults are VS Code's. */
export function readConnection(env: NodeJS.ProcessEnv): ConnectionSettings {
  const support = env[ENV.proxySupport]?.trim().toLowerCase() || 'on';
  // VS Code's values: only `off` turns the proxies off.
  if (!['off', 'on', 'fallback', 'override'].includes(support))
    throw new ConfigError(ENV.proxySupport, `must be "on" or "off" (VS Code's "fallback" and "override" mean "on"); got "${env[ENV.proxySupport]}".`);
  const systemCertificates = flag(env, ENV.systemCertificates, true);
  if (support === 'off') return { proxySupport: 'off', systemCertificates };
  return {
    strictSSL: flag(env, ENV.proxyStrictSSL, true),
    noProxy: (env[ENV.noProxy] ?? '')
      .split(/[,\s]/)
      .map((host) => host.trim())
      .filter(Boolean),
    proxyAuthorization: env[ENV.proxyAuthorization]?.trim() || undefined,
    systemCertificates,
  };
}

/**
 * The variables that give the server the extension's connection settings (VS Code's `http.*`).
 * `secret` holds the proxy's credentials (`http.proxyAuthorization`, and a proxy URL with a user or
 * password): like the key, they go into the server's environment only right before it starts, never
 * into the definition VS Code lists and caches.
 */
export function connectionEnvironment(
  settings: ConnectionSettings,
  extraCaCerts: string | undefined,
): { listed: Record<string, string>; secret: Record<string, string> } {
  const listed: Record<string, string> = {
    [ENV.proxySupport]: settings.proxySupport === 'off' ? 'off' : 'on',
    [ENV.systemCertificates]: settings.systemCertificates === false ? '0' : '1',
  };
  const secret: Record<string, string> = {};
  // Node reads it at start: the server trusts what the extension host trusts.
  if (extraCaCerts?.trim()) listed.NODE_EXTRA_CA_CERTS = extraCaCerts.trim();
  if (settings.proxySupport === 'off') return { listed, secret };
  listed[ENV.proxyStrictSSL] = settings.strictSSL === false ? '0' : '1';
  if (settings.noProxy?.length) listed[ENV.noProxy] = settings.noProxy.join(',');
  if (settings.proxyAuthorization) secret[ENV.proxyAuthorization] = settings.proxyAuthorization;
  const proxy = settings.proxy?.trim();
  if (proxy) {
    // `http.proxy` serves both schemes and wins over the environment, as in the extension.
    const withoutCredentials = proxyWithoutCredentials(proxy);
    if (withoutCredentials !== proxy) secret.HTTPS_PROXY = secret.HTTP_PROXY = proxy;
    if (withoutCredentials) listed.HTTPS_PROXY = listed.HTTP_PROXY = withoutCredentials;
  }
  return { listed, secret };
}

/** The proxy URL without user and password; undefined when it has some but cannot be parsed (it is then only passed as a secret). */
function proxyWithoutCredentials(proxy: string): string | undefined {
  if (!proxy.includes('@')) return proxy;
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(proxy) ? proxy : `http://${proxy}`);
    url.username = url.password = '';
    return url.href;
  } catch {
    return undefined;
  }
}

/** Where the proxy's credentials may show, to be kept out of every answer and log line. */
export function connectionSecrets(env: NodeJS.ProcessEnv, connection: ConnectionSettings | undefined): string[] {
  const secrets: string[] = [];
  const authorization = connection?.proxyAuthorization;
  if (authorization) {
    // The header value, its token alone ("Basic <token>"), and what a Basic token encodes (user:password).
    const token = authorization.replace(/^\S+\s+/, '');
    secrets.push(authorization, token);
    if (/^basic\s/i.test(authorization)) secrets.push(...userInfoSecrets(Buffer.from(token, 'base64').toString('utf8')));
  }
  for (const name of PROXY_VARIABLES) {
    const value = env[name]?.trim();
    if (!value?.includes('@')) continue;
    const userInfo = value.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/@[^@]*$/, '');
    secrets.push(value, ...userInfoSecrets(userInfo), ...userInfoSecrets(safeDecode(userInfo)));
  }
  // Longest first, so that a part never leaves the rest of a longer secret behind; very short ones would blank ordinary text.
  return [...new Set(secrets)].filter((s) => s.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
}

const MIN_SECRET_LENGTH = 4;

/** "user:password" and the password alone. */
function userInfoSecrets(userInfo: string): string[] {
  return userInfo.includes(':') ? [userInfo, userInfo.slice(userInfo.indexOf(':') + 1)] : [userInfo];
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return fallback;
  if (['1', 'true', 'on', 'yes'].includes(raw)) return true;
  if (['0', 'false', 'off', 'no'].includes(raw)) return false;
  throw new ConfigError(name, `must be 1 or 0 (true or false); got "${env[name]}".`);
}

function rubles(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw.replace(',', '.'));
  if (!Number.isFinite(value) || value < 0) throw new ConfigError(name, `must be a number of 0 or more; got "${raw}".`);
  return value;
}
