// The job a tool call would run: the arguments, the style (if any) and the workspace's paths made
// into one ImageJob by the same resolution the extension uses. Pure: no vscode import.
import * as path from 'node:path';
import { canEdit } from '../../core/gateway/catalog';
import type { CatalogCache } from '../../core/gateway/catalogCache';
import { ValidationError } from '../../core/gateway/errors';
import type { ImageModel } from '../../core/gateway/types';
import type { ImageJob } from '../../jobs/jobTypes';
import { regionArgsOf } from '../../core/files/maskInput';
import { planRegionEdit, type RegionPlan, regionJobOf } from '../../jobs/regionEdit';
import type { StyledRequest, StyleInput } from '../../jobs/styledRequest';
import type { McpConfig } from './config';
import type { WorkspaceStyles } from './styleTools';
import type { EstimateArgs } from './toolDefinitions';
import type { WorkspacePaths } from './workspacePaths';

export const EDIT_FILE_NAME_PATTERN = '{name}.edit-{index}';
export const FILE_NAME_PATTERN = '{date}-{slug}-{model}-{index}';

export class ToolJobs {
  constructor(
    private readonly config: McpConfig,
    private readonly paths: WorkspacePaths,
    private readonly styles: WorkspaceStyles,
    private readonly catalog: CatalogCache,
  ) {}

  /**
   * The job a paid call would run (an edit when `images` is given), its paths resolved inside the
   * workspace: the style (if any) and the arguments made into the request by the one resolution.
   * The output folder: the argument's, else the style's, else next to the first image or the default.
   */
  async jobOf(args: EstimateArgs, images: string[] | undefined): Promise<{ job: ImageJob; styled: StyledRequest }> {
    const references: string[] = [];
    for (const image of images ?? []) references.push(await this.paths.resolve('images', image));
    const {
      prompt,
      model,
      style,
      images: _images,
      output_directory: _output,
      mask: _mask,
      feather: _feather,
      format: _format,
      wholeImage: _whole,
      ...options
    } = args;
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

  /**
   * A region edit's job when `mask` is given (undefined: the plain edit): the mask confined to the
   * workspace and checked, the crop decided and written to a temporary file (`dispose` removes it).
   * Every refusal comes before any estimate.
   */
  async regionOf(args: EstimateArgs, job: ImageJob): Promise<{ job: ImageJob; plan: RegionPlan; dispose: () => Promise<void> } | undefined> {
    const region = regionArgsOf(args);
    if (region.mask === undefined) return undefined;
    if (!args.images?.length) throw new ValidationError('mask', '"mask" needs the one image to edit, in "images".');
    const mask = await this.paths.resolve('mask', region.mask);
    const model = (await this.catalog.get()).find((m) => m.id === job.request.model);
    const plan = await planRegionEdit({ images: job.references ?? [], mask, feather: region.feather, format: region.format, model });
    return { ...(await regionJobOf(job, plan, model)), plan };
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
