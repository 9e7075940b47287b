// What each MCP tool does, over the same pure core as the extension: the catalog, validation and
// the estimate (prepare), the one job service (send once, stream to files, never lose a paid image),
// and the spending cap in front of every paid call. Pure: no vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { canEdit } from '../../core/catalog';
import { CatalogCache } from '../../core/catalogCache';
import { type CostEstimate, formatRubles, type FundsSnapshot } from '../../core/cost';
import { ApiError, NotConfiguredError, ValidationError } from '../../core/errors';
import { pngThumbnail } from '../../core/pngThumbnail';
import { type BalanceRecord, type GenerationRequest, type ImageModel, type KeyRecord, type StatsSummary } from '../../core/types';
import { ImageJobService } from '../../jobs/imageJobs';
import type { ImageApi, ImageJob } from '../../jobs/jobTypes';
import type { McpConfig } from './config';
import { type CapStatus, SpendingCap } from './spendingCap';
import { checkArguments, type ToolName, toolSchema } from './toolSchemas';
import { WorkspacePaths } from './workspacePaths';

/** The part of the gateway client the tools use. */
export interface GatewayApi extends ImageApi {
  imageModels(): Promise<ImageModel[]>;
  balance(): Promise<BalanceRecord>;
  key(): Promise<KeyRecord>;
  stats(): Promise<StatsSummary>;
}

export interface ToolAnswer {
  text: string;
  structured: Record<string, unknown>;
  /** A small PNG thumbnail (base64), never the full image. */
  preview?: string;
  /** Saved files, as resource links (clickable in VS Code's chat) for clients that know them. */
  links?: { uri: string; name: string; mimeType?: string }[];
  isError?: boolean;
}

/** A paid call that failed after images had arrived: saved into the workspace as they landed, or kept in the recovery folder. */
export class FailureWithRecovery extends Error {
  constructor(
    readonly error: unknown,
    readonly recovered: { manifestPath: string; files: string[]; reason: string } | undefined,
    /** Workspace-relative paths of the images saved before the failure. */
    readonly saved: string[] = [],
  ) {
    super(error instanceof Error ? error.message : String(error));
  }
}

/** A refusal by the spending cap: nothing was sent. */
export class CapRefusal extends Error {
  constructor(
    message: string,
    readonly details: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** What the protocol side gives a call: the client's cancellation, and progress notes for long waits. */
export interface CallContext {
  signal?: AbortSignal;
  progress?: (message: string) => void;
}

/** A paid call reports progress this often while the gateway works (some clients time out when silent). */
const HEARTBEAT_MS = 10_000;

export const EDIT_FILE_NAME_PATTERN = '{name}.edit-{index}';
export const FILE_NAME_PATTERN = '{date}-{slug}-{model}-{index}';
const PREVIEW_SIDE = 128;
const MIME_TYPES: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp', '.svg': 'image/svg+xml' };
/** Images above this are not read back for a preview. */
const MAX_PREVIEW_SOURCE_BYTES = 32 * 1024 * 1024;

export class ImageTools {
  readonly cap: SpendingCap;
  readonly paths: WorkspacePaths;
  private readonly catalog: CatalogCache;
  private readonly jobs: ImageJobService;
  private funds: FundsSnapshot = {};

  constructor(
    private readonly config: McpConfig,
    private readonly api: () => GatewayApi,
    private readonly provenance = true,
  ) {
    this.cap = new SpendingCap(config.maxCostPerCall, config.maxCostPerSession);
    this.paths = new WorkspacePaths(config.workspaceRoot);
    this.catalog = new CatalogCache(() => this.api().imageModels());
    this.jobs = new ImageJobService({
      api: () => Promise.resolve(this.paidApi()),
      models: () => this.catalog.get(),
      funds: () => this.funds,
      applyUsage: (usage) => {
        // Either figure may be missing from a real gateway's answer: keep what was not given.
        const cost = usage.cost_rub;
        const budget = this.funds.budget === undefined || cost === undefined ? this.funds.budget : Math.max(0, this.funds.budget - cost);
        this.funds = { balance: usage.balance ?? this.funds.balance, budget };
      },
      reconcile: () => undefined,
      // No person confirms here: the spending cap is the guard, checked before run().
      confirm: () => Promise.resolve(true),
      confirmAbove: () => Number.POSITIVE_INFINITY,
      provenance: () => this.provenance,
      recoveryDir: config.recoveryDir,
      locale: 'en',
    });
  }

  async call(name: string, rawArgs: unknown, context: CallContext = {}): Promise<ToolAnswer> {
    const schema = toolSchema(name);
    if (!schema) throw new ValidationError('name', `Unknown tool "${name}".`, ['list_models', 'estimate_cost', 'generate_image', 'edit_image', 'get_account']);
    const args = checkArguments(schema.inputSchema, rawArgs);
    const handlers: Record<ToolName, () => Promise<ToolAnswer>> = {
      list_models: () => this.listModels(args),
      estimate_cost: () => this.estimate(args),
      generate_image: () => this.generate(args, false, context),
      edit_image: () => this.generate(args, true, context),
      get_account: () => this.account(),
    };
    return handlers[schema.name]();
  }

  private async listModels(args: Record<string, unknown>): Promise<ToolAnswer> {
    const has = (list: string[], value: unknown) => value === undefined || list.includes(value as string);
    const models = (await this.catalog.get()).filter(
      (m) =>
        (args.supports_edit === undefined || canEdit(m) === args.supports_edit) &&
        (args.max_price_per_image === undefined || m.max_price_per_image <= (args.max_price_per_image as number)) &&
        has(m.supported_resolutions, args.resolution) &&
        has(m.supported_aspect_ratios, args.aspect_ratio) &&
        has(m.supported_background, args.background) &&
        has(m.allowed_passthrough_parameters, args.parameter) &&
        (args.min_n === undefined || m.max_n >= (args.min_n as number)) &&
        (args.supports_seed === undefined || m.supports_seed === args.supports_seed),
    );
    const lines = models.map(
      (m) =>
        `- ${m.id}${m.provider ? ` (${m.provider})` : ''}: ${rub(m.min_price_per_image)}–${rub(m.max_price_per_image)} per image, max_n ${m.max_n}, ` +
        `${canEdit(m) ? `edits (up to ${m.max_input_references} references)` : 'no editing'}${m.supports_generation ? '' : ', edit only'}` +
        `${m.supported_resolutions.length ? `, resolutions ${m.supported_resolutions.join('/')}` : ''}` +
        `${m.supported_aspect_ratios.length ? `, aspect ratios ${m.supported_aspect_ratios.join('/')}` : ''}` +
        `${m.supported_background.length ? `, background ${m.supported_background.join('/')}` : ''}`,
    );
    const head = models.length
      ? `${models.length} image model(s). Prices are per image in rubles; a request reserves max price × n.`
      : 'No image model matches these filters.';
    return this.answer([head, ...lines].join('\n'), { models });
  }

  private async estimate(args: Record<string, unknown>): Promise<ToolAnswer> {
    const references = await this.resolveImages(args.images);
    const request = await this.requestOf(args, references.length);
    const { model, estimate } = await this.jobs.prepare({ request, references, output: { directory: '', pattern: '' } });
    const decision = this.cap.check(estimate.reservation, false);
    const verdict = decision.ok ? 'Within the spending cap: generate_image/edit_image would be sent.' : decision.message;
    const text = [
      `${model.id}, n=${estimate.n}: the gateway reserves ${rub(estimate.reservation)} and charges the actual cost, expected ${range(estimate)}. Nothing was sent.`,
      verdict,
    ].join('\n');
    return this.answer(text, { model: model.id, estimate, allowed: decision.ok, ...(decision.ok ? {} : { refusedBy: decision.field }) });
  }

  private async generate(args: Record<string, unknown>, edit: boolean, context: CallContext): Promise<ToolAnswer> {
    const references = edit ? await this.resolveImages(args.images) : [];
    const request = await this.requestOf(args, references.length);
    const first = references[0];
    const outputInput =
      typeof args.output_directory === 'string' ? args.output_directory : first ? this.paths.relative(path.dirname(first)) || '.' : this.config.outputDirectory;
    const directory = await this.paths.resolve('output_directory', outputInput);
    const job: ImageJob = {
      request,
      references,
      transport: 'input_references',
      output: first
        ? { directory, pattern: EDIT_FILE_NAME_PATTERN, sourceName: path.basename(first, path.extname(first)) }
        : { directory, pattern: FILE_NAME_PATTERN },
    };
    // Validation, references and the estimate first: bad input is refused before the cap is touched.
    const { estimate } = await this.jobs.prepare(job);
    const decision = this.cap.check(estimate.reservation);
    if (!decision.ok) throw new CapRefusal(decision.message, { refusedBy: decision.field, reservation: decision.reservation, limit: decision.limit, estimate });
    let result;
    let recovered: FailureWithRecovery['recovered'];
    const saved: string[] = [];
    let sent = false;
    const started = Date.now();
    const heartbeat = setInterval(() => context.progress?.(`Waiting for the gateway (${Math.round((Date.now() - started) / 1000)} s)…`), HEARTBEAT_MS);
    try {
      await this.paths.ensureDirectory('output_directory', outputInput);
      result = await this.jobs.run(job, {
        // A cancelled call is aborted; once sent, its outcome is unknown and the cap counts it in full.
        signal: context.signal,
        onEvent: (event) => {
          if (event.type === 'sending') sent = true;
          if (event.type === 'sending') context.progress?.(`Sending to ${event.model.id}; the gateway reserves ${rub(event.estimate.reservation)}.`);
          if (event.type === 'image-received') context.progress?.(`Image ${event.index + 1} of ${estimate.n} received.`);
          if (event.type === 'recovered') recovered = event;
          if (event.type === 'image-saved') saved.push(this.paths.relative(event.file));
        },
      });
    } catch (error) {
      // Only an error answer of the gateway proves it charged nothing; any other failure after
      // sending (a broken connection, a full disk while saving) counts the whole reservation.
      const notCharged = !sent || (error instanceof ApiError && !error.outcomeUnknown);
      if (notCharged) decision.hold.release();
      else decision.hold.settle(undefined);
      throw recovered || saved.length ? new FailureWithRecovery(error, recovered, saved) : error;
    } finally {
      clearInterval(heartbeat);
    }
    decision.hold.settle(result.usage?.cost_rub);
    const files = result.files.map((file) => ({ path: this.paths.relative(file), uri: this.paths.fileUri(file) }));
    const cost = result.usage?.cost_rub !== undefined ? rub(result.usage.cost_rub) : 'unknown';
    const balance = result.usage?.balance !== undefined ? rub(result.usage.balance) : 'unknown';
    const lines = [
      `${edit ? 'Edited' : 'Generated'} ${files.length} image(s) with ${result.model}. Cost ${cost} (reserved ${rub(estimate.reservation)}), balance after ${balance}.`,
      'Saved (workspace-relative paths):',
      ...files.map((f) => `- ${f.path} (${f.uri})`),
    ];
    if (result.recovered)
      lines.push(
        `Could not save ${result.recovered.files.length} paid image(s) into the workspace (${result.recovered.reason}); they are kept in ${result.recovered.manifestPath}.`,
      );
    const preview = result.files[0] ? await previewOf(result.files[0]) : undefined;
    lines.push(preview ? `Preview: the first image, at most ${PREVIEW_SIDE} px.` : 'No preview: only PNG results get one.');
    return {
      ...this.answer(lines.join('\n'), {
        files,
        model: result.model,
        cost_rub: result.usage?.cost_rub,
        balance_rub: result.usage?.balance,
        estimate,
        ...(result.recovered ? { recovered: result.recovered } : {}),
      }),
      preview,
      links: files.map((f) => ({ uri: f.uri, name: f.path, mimeType: MIME_TYPES[path.extname(f.path).toLowerCase()] })),
    };
  }

  private async account(): Promise<ToolAnswer> {
    const api = this.paidApi();
    const [balance, key, stats] = await Promise.all([api.balance(), api.key(), api.stats()]);
    this.funds = { balance: balance.balance, budget: balance.budget ?? key.budget?.remaining };
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
    return this.answer(lines.join('\n'), { balance, key, stats });
  }

  /** Every answer carries the session allowance. */
  private answer(text: string, structured: Record<string, unknown>): ToolAnswer {
    const cap = this.cap.status();
    return { text: `${text}\n${capLine(cap)}`, structured: { ...structured, spendingCap: cap } };
  }

  private paidApi(): GatewayApi {
    if (!this.config.apiKey)
      throw new NotConfiguredError('apiKey', 'No API key: set GATEWAY_IMAGES_API_KEY (in VS Code: Gateway Images: Set API Key). Nothing was sent.');
    return this.api();
  }

  private async resolveImages(value: unknown): Promise<string[]> {
    if (!Array.isArray(value)) return [];
    const files: string[] = [];
    for (const item of value as string[]) files.push(await this.paths.resolve('images', item));
    return files;
  }

  private async requestOf(args: Record<string, unknown>, references: number): Promise<GenerationRequest> {
    const fields = ['n', 'resolution', 'aspect_ratio', 'size', 'quality', 'output_format', 'background', 'output_compression', 'seed', 'params'] as const;
    const model = typeof args.model === 'string' && args.model.trim() ? args.model.trim() : await this.defaultModel(references);
    const request: GenerationRequest = { model, prompt: typeof args.prompt === 'string' ? args.prompt.trim() : 'estimate' };
    for (const field of fields) if (args[field] !== undefined) (request as unknown as Record<string, unknown>)[field] = args[field];
    return request;
  }

  /** The cheapest model that can do the job (generation, or an edit with that many references). */
  private async defaultModel(references: number): Promise<string> {
    const fits = (m: ImageModel) => (references ? canEdit(m) && m.max_input_references >= references : m.supports_generation);
    const [cheapest] = (await this.catalog.get()).filter(fits).sort((a, b) => a.max_price_per_image - b.max_price_per_image || a.id.localeCompare(b.id));
    if (!cheapest)
      throw new ValidationError(
        'model',
        references ? `No model edits with ${references} reference image(s).` : 'The gateway lists no model that generates images.',
      );
    return cheapest.id;
  }
}

function rub(amount: number): string {
  return formatRubles(amount, 'en');
}

function range(estimate: CostEstimate): string {
  return estimate.expectedMin === estimate.expectedMax ? rub(estimate.expectedMax) : `${rub(estimate.expectedMin)}–${rub(estimate.expectedMax)}`;
}

export function capLine(cap: CapStatus): string {
  return `Spending cap: ${rub(cap.remainingThisSession)} left of ${rub(cap.maxCostPerSession)} this session (${rub(cap.spentThisSession)} spent); at most ${rub(cap.maxCostPerCall)} reserved per call.`;
}

async function previewOf(file: string): Promise<string | undefined> {
  try {
    const stat = await fs.stat(file);
    if (stat.size > MAX_PREVIEW_SOURCE_BYTES) return undefined;
    return pngThumbnail(await fs.readFile(file), PREVIEW_SIDE)?.toString('base64');
  } catch {
    return undefined;
  }
}
