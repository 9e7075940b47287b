// What each MCP tool does, over the same pure core as the extension: the catalog, validation and
// the estimate (prepare), the one job service (send once, stream to files, never lose a paid image),
// and the spending cap, held by the job service from just before each paid call is sent. Arguments
// arrive checked against their schemas (toolDefinitions.ts). Pure: no vscode import.
import * as path from 'node:path';
import { canEdit } from '../../core/gateway/catalog';
import { CatalogCache } from '../../core/gateway/catalogCache';
import { type CostEstimate, formatRubles, type FundsSnapshot } from '../../core/money/cost';
import { CancelledError, NotConfiguredError, ValidationError } from '../../core/gateway/errors';
import { type CapStatus, SpendingCap } from '../../core/money/spendingCap';
import { type BalanceRecord, type ImageModel, type KeyRecord, type StatsSummary } from '../../core/gateway/types';
import type { HistoryStore } from '../../jobs/history';
import { ImageJobService } from '../../jobs/imageJobs';
import { JobHistoryRecord } from '../../jobs/jobRecord';
import { settleBy } from '../../jobs/settle';
import type { ImageApi, ImageJob, JobResult, PaidFailure } from '../../jobs/jobTypes';
import type { StyledRequest, StyleInput } from '../../jobs/styledRequest';
import type { McpConfig } from './config';
import { PREVIEW_SIDE, previewOf } from './preview';
import { WorkspaceStyles } from './styleTools';
import type {
  AccountAnswer,
  EditArgs,
  EstimateAnswer,
  EstimateArgs,
  GenerateArgs,
  ImageAnswer,
  ListModelsAnswer,
  ListModelsArgs,
  ListStylesAnswer,
} from './toolDefinitions';
import { WorkspacePaths } from './workspacePaths';

/** The part of the gateway client the tools use. */
export interface GatewayApi extends ImageApi {
  imageModels(): Promise<ImageModel[]>;
  balance(): Promise<BalanceRecord>;
  key(): Promise<KeyRecord>;
  stats(): Promise<StatsSummary>;
}

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

/** A paid call reports progress this often while the gateway works (some clients time out when silent). */
const HEARTBEAT_MS = 10_000;

export const EDIT_FILE_NAME_PATTERN = '{name}.edit-{index}';
export const FILE_NAME_PATTERN = '{date}-{slug}-{model}-{index}';
const MIME_TYPES: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp', '.svg': 'image/svg+xml' };

export interface ImageToolsOptions {
  /** Whether saved PNGs carry their request (GATEWAY_IMAGES_EMBED_PROVENANCE). */
  provenance?: boolean;
  /** The catalog (default: read through `api`, kept for an hour). */
  catalog?: CatalogCache;
  /** The results journal paid results are recorded in (config.resultsJournal); none: nothing is recorded. */
  journal?: HistoryStore;
  /** Where a result that could not be recorded is told (stderr). */
  warn?: (message: string) => void;
}

export class ImageTools {
  readonly cap: SpendingCap;
  readonly paths: WorkspacePaths;
  private readonly catalog: CatalogCache;
  private readonly styles: WorkspaceStyles;
  private readonly jobs: ImageJobService;
  private funds: FundsSnapshot = {};
  private readonly inFlight = new Set<Promise<unknown>>();
  private closing = false;

  constructor(
    private readonly config: McpConfig,
    private readonly api: () => GatewayApi,
    private readonly options: ImageToolsOptions = {},
  ) {
    this.cap = new SpendingCap(() => config);
    this.paths = new WorkspacePaths(config.workspaceRoot);
    this.catalog = options.catalog ?? new CatalogCache(() => this.api().imageModels());
    this.styles = new WorkspaceStyles(config.workspaceRoot, config.workspaceTrusted !== false, this.catalog);
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
      // No person confirms here: the spending cap is the guard, held just before sending.
      confirm: () => Promise.resolve(true),
      confirmAbove: () => Number.POSITIVE_INFINITY,
      cap: this.cap,
      provenance: () => options.provenance ?? true,
      ...(options.journal ? { resultsJournal: options.journal.file } : {}),
      recoveryDir: config.recoveryDir,
      locale: 'en',
    });
  }

  /** Runs one call, unless the server is shutting down; drain() waits for the calls admitted. */
  admit<T>(call: () => Promise<T>): Promise<T> {
    if (this.closing) return Promise.reject(new CancelledError('The server is shutting down: nothing was sent.'));
    const running = call();
    this.inFlight.add(running);
    const forget = () => this.inFlight.delete(running);
    running.then(forget, forget);
    return running;
  }

  /** Takes no new call and waits for those in flight, at most `timeoutMs`; true when all ended. */
  async drain(timeoutMs: number): Promise<boolean> {
    this.closing = true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const settled = Promise.allSettled([...this.inFlight]).then(() => true);
    try {
      return await Promise.race([settled, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  get callsInFlight(): number {
    return this.inFlight.size;
  }

  async listModels(args: ListModelsArgs): Promise<ToolAnswer<ListModelsAnswer>> {
    const has = (list: string[], value: string | undefined) => value === undefined || list.includes(value);
    const models = (await this.catalog.get()).filter(
      (m) =>
        (args.supports_edit === undefined || canEdit(m) === args.supports_edit) &&
        (args.max_price_per_image === undefined || m.max_price_per_image <= args.max_price_per_image) &&
        has(m.supported_resolutions, args.resolution) &&
        has(m.supported_aspect_ratios, args.aspect_ratio) &&
        has(m.supported_background, args.background) &&
        has(m.allowed_passthrough_parameters, args.parameter) &&
        (args.min_n === undefined || m.max_n >= args.min_n) &&
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

  /** The project's styles, each with `extends` applied, or why it cannot be used. */
  async listStyles(): Promise<ToolAnswer<ListStylesAnswer>> {
    const { text, structured } = await this.styles.list();
    return this.answer(text, structured);
  }

  /** The very checks of generate_image (no images) or edit_image (images), paths and style included; sends nothing. */
  async estimate(args: EstimateArgs): Promise<ToolAnswer<EstimateAnswer>> {
    const { job, styled } = await this.jobOf(args, args.images);
    const { model, estimate, request } = await this.jobs.prepare(job);
    const refused = this.cap.refusal(estimate.reservation);
    const verdict = refused
      ? refused.message
      : this.config.apiKey
        ? `Within the spending cap: ${args.images ? 'edit_image' : 'generate_image'} would be sent.`
        : `No API key: ${args.images ? 'edit_image' : 'generate_image'} would be refused (set GATEWAY_IMAGES_API_KEY).`;
    const references = styled.references.map((file) => this.paths.relative(file));
    const text = [
      `${model.id}, n=${estimate.n}: the gateway reserves ${rub(estimate.reservation)} and charges the actual cost, expected ${range(estimate)}. Nothing was sent.`,
      ...(styled.style ? [`Style ${styled.style.name}: the prompt sent is "${request.prompt}".`] : []),
      ...styled.notes,
      verdict,
    ].join('\n');
    return this.answer(text, {
      model: model.id,
      request: { ...request },
      ...(references.length ? { references } : {}),
      ...(styled.style ? { style: styled.style.name } : {}),
      ...(styled.notes.length ? { notes: styled.notes } : {}),
      estimate,
      allowed: !refused,
      ...(refused ? { refusedBy: refused.cap } : {}),
    });
  }

  generate(args: GenerateArgs, context: CallContext = {}): Promise<ToolAnswer<ImageAnswer>> {
    return this.paidCall(args, undefined, context);
  }

  edit(args: EditArgs, context: CallContext = {}): Promise<ToolAnswer<ImageAnswer>> {
    return this.paidCall(args, args.images, context);
  }

  private async paidCall(args: GenerateArgs, images: string[] | undefined, context: CallContext): Promise<ToolAnswer<ImageAnswer>> {
    const { job, styled } = await this.jobOf(args, images);
    if (styled.confirm) {
      throw new ValidationError(
        'style',
        `Not sent: the workspace is not trusted in VS Code, and a style from it does not send on its own (no person confirms an agent's call). list_styles and estimate_cost still read it; trust the workspace, or give the options without "style".`,
      );
    }
    // Validation, references, the estimate and the cap first: bad input is refused before the disk is touched.
    const { estimate } = await this.jobs.prepare(job);
    const refused = this.cap.refusal(estimate.reservation);
    if (refused) throw refused;
    const progress = context.progress ?? (() => undefined);
    const saved: { path: string; uri: string }[] = [];
    let recovered: PaidCallFailure['recovered'];
    let sent = false;
    let lateCancel = false;
    const started = Date.now();
    const heartbeat = setInterval(() => progress(`Waiting for the gateway (${Math.round((Date.now() - started) / 1000)} s)…`), HEARTBEAT_MS);
    let result: JobResult;
    const record = this.recordOf(job, context.client);
    try {
      await this.paths.ensureDirectory('output_directory', job.output.directory);
      result = await this.jobs.run(job, {
        // A cancel aborts the call until the gateway answers; after that the paid images are saved whole.
        signal: context.signal,
        // The job prepares again: a reservation that rose since the check above is refused.
        confirmedReservation: estimate.reservation,
        ...record?.settlement,
        onEvent: (event) => {
          if (event.type === 'sending') progress(`Reserved ${rub(event.estimate.reservation)} of the spending cap for ${event.model.id}; sending.`);
          if (event.type === 'sent') {
            sent = true;
            progress('Sent; waiting for the gateway.');
          }
          if (event.type === 'answered') progress(`The gateway answered (it has charged); receiving ${estimate.n} image(s).`);
          if (event.type === 'image-saved') {
            record?.saved(event.file);
            saved.push(this.fileOf(event.file));
            progress(`Image ${saved.length} of ${estimate.n} saved: ${this.paths.relative(event.file)}.`);
          }
          if (event.type === 'cancel-after-charge') lateCancel = true;
          if (event.type === 'recovered') recovered = event;
        },
      });
    } catch (error) {
      throw new PaidCallFailure(error, sent, saved, recovered);
    } finally {
      clearInterval(heartbeat);
    }
    const answer = await this.imageAnswer(result, images?.length ? 'Edited' : 'Generated', job.style?.name);
    if (lateCancel) {
      context.notify?.(
        `The call was cancelled after the gateway had answered (it has charged): the paid image(s) are saved anyway: ${answer.structured.files.map((f) => f.path).join(', ')}.`,
      );
    }
    return answer;
  }

  /** The call's entry in the results journal (who made it: MCP and the client's name), written as images are saved and then with the cost. */
  private recordOf(job: ImageJob, client: string | undefined) {
    const journal = this.options.journal;
    if (!journal) return undefined;
    const warn = this.options.warn ?? (() => undefined);
    // The client names itself: kept short (it is shown in Account and Usage and the search).
    const origin = { kind: 'mcp' as const, ...(client ? { client: client.slice(0, 100) } : {}) };
    const record = new JobHistoryRecord(journal, { request: job.request, references: job.references, model: job.request.model, style: job.style, origin });
    return {
      saved: (file: string) => void record.saved(file).catch((error: unknown) => warn(`results journal: ${String(error)}`)),
      settlement: {
        settle: settleBy((done: JobResult) => record.finish(done), warn, 'The result'),
        settleFailure: settleBy((failure: PaidFailure) => record.failed(failure), warn, 'The paid request'),
      },
    };
  }

  private async imageAnswer(result: JobResult, verb: string, style: string | undefined): Promise<ToolAnswer<ImageAnswer>> {
    const files = result.files.map((file) => this.fileOf(file));
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
    const preview = result.files[0] ? await previewOf(result.files[0]) : undefined;
    lines.push(preview ? `Preview: the first image, at most ${PREVIEW_SIDE} px.` : 'No preview of this image.');
    return {
      ...this.answer(lines.join('\n'), {
        files,
        model: result.model,
        ...(style ? { style } : {}),
        cost_rub: result.usage?.cost_rub,
        balance_rub: result.usage?.balance,
        estimate: result.estimate,
        sent: true,
        ...(result.recovered ? { recovered: result.recovered } : {}),
      }),
      preview,
      links: files.map((f) => ({ uri: f.uri, name: f.path, mimeType: MIME_TYPES[path.extname(f.path).toLowerCase()] })),
    };
  }

  async account(): Promise<ToolAnswer<AccountAnswer>> {
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
    // Copies: the records' own types have no index signature; the answer's schema lets a gateway's extra fields through.
    return this.answer(lines.join('\n'), { balance: { ...balance }, key: { ...key }, stats: { ...stats } });
  }

  /** Every answer carries the session allowance. */
  private answer<T>(text: string, structured: Omit<T, 'spendingCap'>): ToolAnswer<T> {
    const cap = this.cap.status();
    return { text: `${text}\n${capLine(cap)}`, structured: { ...structured, spendingCap: cap } as T };
  }

  private fileOf(file: string): { path: string; uri: string } {
    return { path: this.paths.relative(file), uri: this.paths.fileUri(file) };
  }

  private paidApi(): GatewayApi {
    if (!this.config.apiKey)
      throw new NotConfiguredError('apiKey', 'No API key: set GATEWAY_IMAGES_API_KEY (in VS Code: Gateway Images: Set API Key). Nothing was sent.');
    return this.api();
  }

  /**
   * The job a paid call would run (an edit when `images` is given), its paths resolved inside the
   * workspace: the style (if any) and the arguments made into the request by the one resolution.
   * The output folder: the argument's, else the style's, else next to the first image or the default.
   */
  private async jobOf(args: EstimateArgs, images: string[] | undefined): Promise<{ job: ImageJob; styled: StyledRequest }> {
    const references: string[] = [];
    for (const image of images ?? []) references.push(await this.paths.resolve('images', image));
    const { prompt, model, style, images: _images, output_directory: _output, ...options } = args;
    // An estimate may come before the prompt is written: any text estimates the same.
    const input: StyleInput = { prompt: prompt?.trim() ?? 'estimate', model: model?.trim(), options, references };
    let styled = await this.styles.apply(style, input);
    if (!styled.request.model) styled = await this.styles.apply(style, { ...input, model: await this.defaultModel(references.length) });
    const first = references[0];
    // The argument, else the style's (decided by the same rule), else next to the first image (as it was named), else the default.
    const directory =
      args.output_directory !== undefined
        ? await this.paths.outputFolder('output_directory', args.output_directory)
        : (styled.output.directory ?? (await this.paths.outputFolder('output_directory', first ? path.dirname(first) : this.config.outputDirectory)));
    const job: ImageJob = {
      request: styled.request,
      references: styled.references,
      transport: 'input_references',
      output: first
        ? { directory, pattern: styled.output.pattern ?? EDIT_FILE_NAME_PATTERN, sourceName: path.basename(first, path.extname(first)) }
        : { directory, pattern: styled.output.pattern ?? FILE_NAME_PATTERN },
      ...(styled.style ? { style: styled.style } : {}),
    };
    return { job, styled };
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
