// The MCP server's configuration, from environment variables only: the extension passes its
// settings and the key from SecretStorage this way, and standalone clients (Claude Code, Cursor,
// Codex CLI) set them in their MCP configuration. Pure: no vscode import.
import * as os from 'node:os';
import * as path from 'node:path';

export const ENV = {
  baseUrl: 'GATEWAY_IMAGES_BASE_URL',
  apiKey: 'GATEWAY_IMAGES_API_KEY',
  workspace: 'GATEWAY_IMAGES_WORKSPACE',
  outputDirectory: 'GATEWAY_IMAGES_OUTPUT_DIR',
  maxCostPerCall: 'GATEWAY_IMAGES_MAX_COST_PER_CALL',
  maxCostPerSession: 'GATEWAY_IMAGES_MAX_COST_PER_SESSION',
  timeoutSeconds: 'GATEWAY_IMAGES_TIMEOUT_SECONDS',
  recoveryDir: 'GATEWAY_IMAGES_RECOVERY_DIR',
  workspaceTrusted: 'GATEWAY_IMAGES_WORKSPACE_TRUSTED',
} as const;

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
  /** False when VS Code has not trusted the workspace: its styles are read, but never send on their own (default true). */
  workspaceTrusted?: boolean;
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
    workspaceTrusted: text(ENV.workspaceTrusted) !== '0',
  };
}

function rubles(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw.replace(',', '.'));
  if (!Number.isFinite(value) || value < 0) throw new ConfigError(name, `must be a number of 0 or more; got "${raw}".`);
  return value;
}
