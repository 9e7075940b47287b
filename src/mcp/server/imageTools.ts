// What each MCP tool does, over the same pure core as the extension: the catalog, validation and
// the estimate (prepare), the one job service (send once, stream to files, never lose a paid image),
// and the spending cap, held by the job service from just before each paid call is sent. Arguments
// arrive checked against their schemas (toolDefinitions.ts). The job a call runs is resolved in
// toolJobs.ts, the answers' shapes and text are toolAnswers.ts. Pure: no vscode import.
import { canEdit } from '../../core/gateway/catalog';
import { CatalogCache } from '../../core/gateway/catalogCache';
import type { FundsSnapshot } from '../../core/money/cost';
import { CancelledError, NotConfiguredError, ValidationError } from '../../core/gateway/errors';
import { SpendingCap } from '../../core/money/spendingCap';
import { DEFAULT_ALERT_SETTINGS } from '../../core/money/alerts';
import { type BalanceRecord, type ImageModel, type KeyRecord, type StatsSummary } from '../../core/gateway/types';
import type { HistoryStore } from '../../jobs/results/history';
import { ImageJobService } from '../../jobs/imageJobs';
import { JobHistoryRecord } from '../../jobs/jobRecord';
import { settleBy } from '../../jobs/settle';
import type { ImageApi, ImageJob, JobResult, PaidFailure } from '../../jobs/jobTypes';
import type { McpConfig } from './config';
import { PREVIEW_SIDE, previewOf } from '../../core/files/imagePreview';
import { WorkspaceStyles } from './styleTools';
import { accountIdentity } from '../../core/gateway/identity';
import { weekSpendOf, weekWindow } from '../../core/money/alerts';
import {
  accountLines,
  accountWarnings,
  type CallContext,
  capLine,
  imageLines,
  mimeTypeOf,
  modelLine,
  PaidCallFailure,
  range,
  rub,
  type ToolAnswer,
} from './toolAnswers';
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
import { ToolJobs } from './toolJobs';
import { finishRegionEdit, outsideRegionNote, recordedReferences, type RegionOutcome } from '../../jobs/regionEdit';
import { markRegionEditSent } from '../../jobs/regionPending';
import { WorkspacePaths } from './workspacePaths';

/** The part of the gateway client the tools use. */
export interface GatewayApi extends ImageApi {
  imageModels(): Promise<ImageModel[]>;
  balance(): Promise<BalanceRecord>;
  key(): Promise<KeyRecord>;
  stats(): Promise<StatsSummary>;
}

/** A paid call reports progress this often while the gateway works (some clients time out when silent). */
const HEARTBEAT_MS = 10_000;

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
  private readonly toolJobs: ToolJobs;
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
    this.toolJobs = new ToolJobs(config, this.paths, this.styles, this.catalog);
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
    const lines = models.map(modelLine);
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
    const { job: plain, styled } = await this.toolJobs.jobOf(args, args.images);
    // A region edit is estimated as it would be sent: the crop as its one reference, at the crop's ratio.
    const region = await this.toolJobs.regionOf(args, plain);
    const { model, estimate, request } = await this.jobs.prepare(region?.job ?? plain).finally(() => region?.dispose());
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
      ...(region ? [`Region edit: ${region.plan.description}; ${outsideRegionNote(region.plan.record.format)}.`] : []),
      ...styled.notes,
      verdict,
    ].join('\n');
    return this.answer(text, {
      model: model.id,
      request: { ...request },
      ...(references.length ? { references } : {}),
      ...(styled.style ? { style: styled.style.name } : {}),
      ...(styled.notes.length ? { notes: styled.notes } : {}),
      ...(region ? { region: region.plan.description } : {}),
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

  private async paidCall(args: GenerateArgs | EditArgs, images: string[] | undefined, context: CallContext): Promise<ToolAnswer<ImageAnswer>> {
    const { job: plain, styled } = await this.toolJobs.jobOf(args, images);
    if (styled.confirm) {
      throw new ValidationError(
        'style',
        `Not sent: the workspace is not trusted in VS Code, and a style from it does not send on its own (no person confirms an agent's call). list_styles and estimate_cost still read it; trust the workspace, or give the options without "style".`,
      );
    }
    // The mask first (a region edit), then validation, references, the estimate and the cap: bad input is refused before anything is reserved.
    const region = await this.toolJobs.regionOf(args, plain);
    // The window's next start looks for a region edit this process left half done (jobs/regionRecovery.ts).
    if (region && this.options.journal) await markRegionEditSent(this.options.journal.file);
    try {
      return await this.sendCall(region?.job ?? plain, context, region && ((result) => finishRegionEdit(region.plan, result)), region?.plan.description);
    } finally {
      await region?.dispose();
    }
  }

  private async sendCall(
    job: ImageJob,
    context: CallContext,
    finish: ((result: JobResult) => Promise<RegionOutcome>) | undefined,
    regionText: string | undefined,
  ): Promise<ToolAnswer<ImageAnswer>> {
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
    const region = finish && (await finish(result));
    if (region) result = { ...result, files: region.files };
    const answer = await this.imageAnswer(
      result,
      job.references?.length ? 'Edited' : 'Generated',
      job.style?.name,
      region && { ...region, text: regionText, format: job.region?.format },
    );
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
    const record = new JobHistoryRecord(journal, {
      request: job.request,
      references: recordedReferences(job),
      model: job.request.model,
      style: job.style,
      origin,
      ...(job.region ? { region: job.region } : {}),
    });
    return {
      saved: (file: string) => void record.saved(file).catch((error: unknown) => warn(`results journal: ${String(error)}`)),
      settlement: {
        settle: settleBy((done: JobResult) => record.finish(done), warn, 'The result'),
        settleFailure: settleBy((failure: PaidFailure) => record.failed(failure), warn, 'The paid request'),
      },
    };
  }

  private async imageAnswer(
    result: JobResult,
    verb: string,
    style: string | undefined,
    region?: RegionOutcome & { text?: string; format?: 'png' | 'jpeg' },
  ): Promise<ToolAnswer<ImageAnswer>> {
    const files = result.files.map((file) => this.fileOf(file));
    const lines = imageLines(result, files, verb, style);
    const masks = region?.masks.map((file) => this.paths.relative(file));
    if (region)
      lines.push(`Region edit: ${region.text ?? ''}; ${outsideRegionNote(region.format)}. Mask saved: ${masks!.join(', ') || 'none'}.`, ...region.notes);
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
        ...(region?.text ? { region: region.text } : {}),
        ...(masks ? { masks } : {}),
      }),
      preview,
      links: files.map((f) => ({ uri: f.uri, name: f.path, mimeType: mimeTypeOf(f.path) })),
    };
  }

  async account(): Promise<ToolAnswer<AccountAnswer>> {
    const api = this.paidApi();
    const [balance, key, stats] = await Promise.all([api.balance(), api.key(), api.stats()]);
    this.funds = { balance: balance.balance, budget: balance.budget ?? key.budget?.remaining };
    const now = new Date();
    const settings = this.config.alerts ?? DEFAULT_ALERT_SETTINGS;
    const weekSpend = settings.runwayDays > 0 ? await this.weekSpend(now) : undefined;
    const warnings = accountWarnings(settings, { balance, key, stats }, now, weekSpend);
    const lines = accountLines(balance, key, stats, warnings);
    // Copies: the records' own types have no index signature; the answer's schema lets a gateway's extra fields through.
    return this.answer(lines.join('\n'), { balance: { ...balance }, key: { ...key }, stats: { ...stats }, warnings });
  }

  /** This key's known spend of the last 7 days in the results journal (this week's pace); undefined without one. */
  private async weekSpend(now: Date): Promise<number | undefined> {
    const journal = this.options.journal;
    if (!journal || !this.config.apiKey) return undefined;
    try {
      const { from, to } = weekWindow(now);
      return weekSpendOf((await journal.index()).createdBetween(from, to), accountIdentity(this.config.baseUrl, this.config.apiKey), now);
    } catch (error) {
      this.options.warn?.(`get_account: the results journal could not be read for this week's spend: ${String(error)}`);
      return undefined;
    }
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
}
