// The MCP tools, each defined once with zod: the SDK's registerTool turns these into the inputSchema
// and outputSchema of tools/list, checks the arguments before a handler runs, and checks each
// answer's structuredContent. A refusal names the field and what is allowed.
import * as z from 'zod';
import { OUTPUT_FORMAT_VALUES, QUALITY_VALUES } from '../../core/gateway/types';

// ---- Refusals in our words: "<field>" must be …; got … ----

type Issue = Parameters<z.core.$ZodErrorMap>[0];

function got(input: unknown): string {
  return `got ${JSON.stringify(input)?.slice(0, 80)}`;
}

/** The error map of one field: `rule(field)` says what is allowed. */
function refusal(rule: (field: string) => string): z.core.$ZodErrorMap {
  return (issue: Issue) => {
    const field = String(issue.path?.[0] ?? 'arguments');
    if (issue.code === 'invalid_type' && issue.input === undefined) return `"${field}" is required`;
    return `${rule(field)}; ${got(issue.input)}`;
  };
}

function text(description: string) {
  return z.string({ error: refusal((f) => `"${f}" must be a text`) }).describe(description);
}

function whole(min: number | undefined, max: number | undefined, description: string) {
  const range = min === undefined ? '' : max === undefined ? ` of ${min} or more` : ` from ${min} to ${max}`;
  const error = refusal((f) => `"${f}" must be a whole number${range}`);
  let schema = z.number({ error }).int({ error });
  if (min !== undefined) schema = schema.min(min, { error });
  if (max !== undefined) schema = schema.max(max, { error });
  return schema.describe(description);
}

function amount(description: string) {
  const error = refusal((f) => `"${f}" must be a number of 0 or more`);
  return z.number({ error }).min(0, { error }).describe(description);
}

function flag(description: string) {
  return z.boolean({ error: refusal((f) => `"${f}" must be true or false (allowed: true, false)`) }).describe(description);
}

function choice<T extends string>(values: readonly T[]) {
  return z.enum(values as readonly [T, ...T[]], { error: refusal((f) => `"${f}" must be one of ${values.join(', ')}`) });
}

const MAX_IMAGES = 16;
const imagesError = refusal((f) => `"${f}" must be a list of workspace-relative paths (texts)`);
const images = z
  .array(z.string({ error: imagesError }), { error: imagesError })
  .min(1, { error: (issue) => `"${String(issue.path?.[0])}" must have from 1 to ${MAX_IMAGES} items; got 0` })
  .max(MAX_IMAGES, { error: (issue) => `"${String(issue.path?.[0])}" must have from 1 to ${MAX_IMAGES} items; got ${(issue.input as unknown[]).length}` })
  .describe(`Reference images (PNG, JPEG or WebP, at most 25 MB each), as paths relative to the workspace folder (1 to ${MAX_IMAGES}).`);

/** The tool's arguments: unknown ones are refused, naming those that are allowed. */
function toolInput<Shape extends z.ZodRawShape>(shape: Shape) {
  const names = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue: Issue) =>
      issue.code === 'unrecognized_keys'
        ? `Unknown argument "${issue.keys[0]}". Allowed: ${names.join(', ') || 'none'}.`
        : `The arguments must be a JSON object; ${got(issue.input)}.`,
  });
}

// ---- Arguments ----

const options = {
  model: text('Image model id from list_models, without a provider prefix. Omit for the cheapest model that fits.').optional(),
  n: whole(1, 10, "Number of images (default 1; at most the model's max_n). Cost grows with n.").optional(),
  resolution: text("Resolution tier such as 1K, 2K, 4K; must be in the model's supported_resolutions.").optional(),
  aspect_ratio: text("Aspect ratio such as 1:1, 16:9, 9:16; must be in the model's supported_aspect_ratios.").optional(),
  background: text("auto, transparent or opaque; must be in the model's supported_background.").optional(),
  size: text(
    'A tier label (2K), exact pixels WIDTHxHEIGHT with the Latin letter x, or auto. Not together with resolution or aspect_ratio when in pixels.',
  ).optional(),
  quality: choice(QUALITY_VALUES).optional(),
  output_format: choice(OUTPUT_FORMAT_VALUES).optional(),
  output_compression: whole(0, 100, 'jpeg/webp compression, 0 to 100.').optional(),
  seed: whole(undefined, undefined, 'Seed for repeatable results (ignored by models without supports_seed).').optional(),
  params: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean()]), {
      error: refusal((f) => `"${f}" must be an object whose values are string, number, boolean`),
    })
    .describe("Provider-specific parameters; names must be in the model's allowed_passthrough_parameters.")
    .optional(),
};
const style = text(
  "A style of list_styles (the project's .gateway-images/styles.json, or a built-in one while there is no such file): its words go around the prompt, and its model, options, reference images and output folder apply where the call gives none.",
);
const prompt = text('What the image should show (for edits: the change to make). Any language.');
const outputDirectory = text(
  'Folder for the results, relative to the workspace folder (default: the configured output folder; for edits, next to the first image). Paths outside the workspace are refused.',
);

const region = {
  mask: text(
    'Region edit: a PNG in the workspace, the same size as the one image, where white (or opaque) marks what changes; only that region (plus a margin for context) is sent, and the result is pasted back so every pixel outside the region stays exactly as it was. Saved as <name>.region-N.png with the mask beside it. Checked before anything is sent: same size, inside the workspace, not empty.',
  ).optional(),
  feather: whole(0, 256, 'Region edit: soft edge in pixels outside the mask (default 8; 0 = hard edge). Only with mask.').optional(),
  format: choice(['png', 'jpeg'] as const)
    .describe(
      "Region edit: the result's format. png (default): nothing outside the region is re-compressed. jpeg: a smaller <name>.region-N.jpg, but every pixel is re-compressed (quality 90), so pixels outside the region change slightly; refused for an image with transparency. Only with mask.",
    )
    .optional(),
  wholeImage: flag('true: edit the whole image (the plain edit); not together with mask.').optional(),
};

export const generateInput = { prompt, ...options, style: style.optional(), output_directory: outputDirectory.optional() };
export const editInput = { prompt, images, ...options, style: style.optional(), output_directory: outputDirectory.optional(), ...region };
/** Every argument of generate_image and edit_image, so that an agent estimates the very call it will make. */
export const estimateInput = {
  prompt: prompt.optional(),
  images: images.optional(),
  ...options,
  style: style.optional(),
  output_directory: outputDirectory.optional(),
  ...region,
};
export const listModelsInput = {
  supports_edit: flag('Only models that edit images (true) or only those that do not (false).').optional(),
  max_price_per_image: amount('Only models whose maximum price per image is at most this many rubles.').optional(),
  resolution: text('Only models that support this resolution tier.').optional(),
  aspect_ratio: text('Only models that support this aspect ratio.').optional(),
  background: text('Only models that support this background value.').optional(),
  min_n: whole(1, 10, 'Only models that make at least this many images per request.').optional(),
  supports_seed: flag('Only models where seed has an effect.').optional(),
  parameter: text('Only models that accept this provider-specific parameter.').optional(),
};

export type GenerateArgs = z.infer<z.ZodObject<typeof generateInput>>;
export type EditArgs = z.infer<z.ZodObject<typeof editInput>>;
export type EstimateArgs = z.infer<z.ZodObject<typeof estimateInput>>;
export type ListModelsArgs = z.infer<z.ZodObject<typeof listModelsInput>>;
export const listStylesInput = {};

// ---- Answers (structuredContent). A failed call (isError) carries `error` and `spendingCap`. ----

const spendingCap = z
  .strictObject({ maxCostPerCall: z.number(), maxCostPerSession: z.number(), spentThisSession: z.number(), remainingThisSession: z.number() })
  .describe('The session allowance after this call, in rubles.');
const estimate = z
  .strictObject({ n: z.number().int(), reservation: z.number(), expectedMin: z.number(), expectedMax: z.number() })
  .describe('What the gateway reserves (max price × n) and the expected cost range, in rubles.');
const error = z
  .strictObject({
    kind: z.string(),
    message: z.string(),
    field: z.string().optional(),
    allowed: z.array(z.union([z.string(), z.number()])).optional(),
    status: z.number().optional(),
    code: z.string().optional(),
    requestId: z.string().optional(),
    outcomeUnknown: z.boolean().describe('True when the request may have been charged (never resent automatically).'),
  })
  .describe('Why the call failed (only on isError).');
const refusedBy = z.enum(['maxCostPerCall', 'maxCostPerSession']);
const recovered = z
  .strictObject({ manifestPath: z.string(), files: z.array(z.string()), reason: z.string() })
  .describe('Paid images kept in the recovery folder (Gateway Images: Recover Unsaved Images in VS Code).');
const imageModel = z.strictObject({
  id: z.string(),
  provider: z.string().optional(),
  description: z.string().optional(),
  min_price_per_image: z.number(),
  max_price_per_image: z.number(),
  supported_resolutions: z.array(z.string()),
  supported_aspect_ratios: z.array(z.string()),
  supported_quality: z.array(z.string()),
  supported_output_formats: z.array(z.string()),
  supported_background: z.array(z.string()),
  supports_seed: z.boolean(),
  max_n: z.number().int(),
  max_input_references: z.number().int(),
  supports_generation: z.boolean(),
  supports_edit: z.boolean(),
  allowed_passthrough_parameters: z.array(z.string()),
});

export const listModelsOutput = z.strictObject({ models: z.array(imageModel).optional(), error: error.optional(), spendingCap });
const styleValues = z.looseObject({
  description: z.string().optional(),
  promptPrefix: z.string().optional(),
  promptSuffix: z.string().optional(),
  model: z.string().optional(),
  options: z.record(z.string(), z.unknown()).optional(),
  references: z.array(z.string()).optional(),
  outputFolder: z.string().optional(),
  fileNamePattern: z.string().optional(),
});
export const listStylesOutput = z.strictObject({
  file: z.string().describe('The styles file, relative to the workspace folder ("built-in styles" for the built-in ones).').optional(),
  builtIn: z.boolean().describe('True when the workspace has no styles file and the built-in starter styles are listed instead.').optional(),
  styles: z
    .array(
      z.strictObject({
        name: z.string(),
        values: styleValues.describe('The style with `extends` applied.').optional(),
        error: z.string().describe('Why the style cannot be used (it names the field).').optional(),
      }),
    )
    .optional(),
  trusted: z
    .boolean()
    .describe('False in an untrusted VS Code workspace: styles are listed and estimated, but a paid call with a style is refused.')
    .optional(),
  error: error.optional(),
  spendingCap,
});
/** The request as a paid call would send it: the final prompt (with the style's words) and every option. */
const sentRequest = z
  .looseObject({ model: z.string(), prompt: z.string() })
  .describe('The request as it would be sent: the final prompt (with the style’s words) and every option.');
export const estimateOutput = z.strictObject({
  model: z.string().optional(),
  request: sentRequest.optional(),
  references: z.array(z.string()).describe('Reference images that would be sent (workspace-relative), a style’s included.').optional(),
  style: z.string().optional(),
  notes: z.array(z.string()).describe('What the style does not apply here, and why.').optional(),
  estimate: estimate.optional(),
  region: z.string().describe('A region edit: the part of the image that would be sent, e.g. "region 412×300 of 2048×1536, sent as 3:2".').optional(),
  allowed: z.boolean().describe('Whether the spending cap lets generate_image/edit_image send this call now.').optional(),
  refusedBy: refusedBy.optional(),
  error: error.optional(),
  spendingCap,
});
export const imageOutput = z.strictObject({
  files: z
    .array(z.strictObject({ path: z.string().describe('Relative to the workspace folder.'), uri: z.string() }))
    .describe('The saved images; on a failure, those that arrived whole before it.'),
  model: z.string().optional(),
  style: z.string().describe('The style the request was made with.').optional(),
  cost_rub: z.number().describe('What the gateway charged.').optional(),
  balance_rub: z.number().describe('The balance after the call.').optional(),
  estimate: estimate.optional(),
  recovered: recovered.optional(),
  region: z.string().describe('A region edit: the part of the image that was sent and pasted back.').optional(),
  masks: z.array(z.string()).describe('A region edit: the masks saved beside the results (workspace-relative).').optional(),
  sent: z.boolean().describe('Whether the request left for the gateway (false: nothing can have been charged).').optional(),
  refusedBy: refusedBy.optional(),
  error: error.optional(),
  spendingCap,
});
export const accountOutput = z.strictObject({
  balance: z.looseObject({ balance: z.number(), budget: z.number().optional() }).optional(),
  key: z.looseObject({ name: z.string().nullable() }).describe('The key as the gateway describes it: name, budget, expiry.').optional(),
  stats: z
    .looseObject({ today_spend: z.number(), today_requests: z.number(), month_spend: z.number(), month_requests: z.number(), avg_daily_spend: z.number() })
    .optional(),
  warnings: z
    .array(
      z
        .looseObject({ kind: z.enum(['budget', 'runway', 'dailySpend']), message: z.string() })
        .describe(
          'budget: threshold, usedPercent, spent, initial, remaining, resetAt; runway: days, daysLeft, balance, pace (rubles a day), paceOver (week or month); dailySpend: limit, todaySpend.',
        ),
    )
    .describe(
      "The user's money alerts in force now (the key's budget past a threshold, the balance lasting under the user's days, today's spend past the user's daily amount). Not empty: tell the user, and make no more paid calls unless they say so.",
    )
    .optional(),
  error: error.optional(),
  spendingCap,
});

export type ListModelsAnswer = z.infer<typeof listModelsOutput>;
export type ListStylesAnswer = z.infer<typeof listStylesOutput>;
export type EstimateAnswer = z.infer<typeof estimateOutput>;
export type ImageAnswer = z.infer<typeof imageOutput>;
export type AccountAnswer = z.infer<typeof accountOutput>;
export type ErrorAnswer = z.infer<typeof error>;

const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };
const paid = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

export const TOOLS = {
  list_models: {
    title: 'List image models',
    description:
      "Lists the gateway's image models with their price range per image (rubles), max_n, editing support and option lists. Free. Filters: supports_edit, max_price_per_image, resolution, aspect_ratio, background, min_n, supports_seed, parameter.",
    inputSchema: toolInput(listModelsInput),
    outputSchema: listModelsOutput,
    annotations: readOnly,
  },
  list_styles: {
    title: 'List project styles',
    description:
      "Lists the project's styles (.gateway-images/styles.json in the workspace): named presets of prompt words, model, options, reference images and output folder that give every image of the project one look. While the workspace has no styles file, lists the built-in starter styles instead (builtIn: true). Pass a style's name as `style` to estimate_cost, generate_image or edit_image. Free.",
    inputSchema: toolInput(listStylesInput),
    outputSchema: listStylesOutput,
    annotations: readOnly,
  },
  estimate_cost: {
    title: 'Estimate the cost of an image request',
    description:
      'Takes the same arguments as generate_image or edit_image (give images for an edit), validates them exactly as that call would (paths and style included) and returns the request as it would be sent (the final prompt and options), what the gateway would reserve (max price × n), the expected cost range and whether the spending cap allows it. Sends nothing and costs nothing.',
    inputSchema: toolInput(estimateInput),
    outputSchema: estimateOutput,
    annotations: readOnly,
  },
  generate_image: {
    title: 'Generate images',
    description:
      'Generates images from a text prompt and saves them into the workspace. COSTS MONEY (rubles): call estimate_cost with the same arguments first. Refused before sending when the reservation exceeds the per-call or session cap. Returns the saved paths, the actual cost, the balance after and the remaining session allowance. Send a progressToken for progress; a cancel before the gateway answers stops the call.',
    inputSchema: toolInput(generateInput),
    outputSchema: imageOutput,
    annotations: paid,
  },
  edit_image: {
    title: 'Edit images',
    description:
      'Edits workspace images (references) according to a prompt and saves the results next to the first image (originals are never changed). COSTS MONEY (rubles): call estimate_cost with the same arguments first. Same spending cap, progress and cancel as generate_image.',
    inputSchema: toolInput(editInput),
    outputSchema: imageOutput,
    annotations: paid,
  },
  get_account: {
    title: 'Account, budget and usage',
    description:
      "Balance, the key's budget and expiry, usage statistics, the spending cap of this session, and `warnings`: the user's money alerts in force now (budget nearly spent, balance running out, today's spend past the user's amount). With warnings, tell the user and make no more paid calls unless they say so. Free.",
    inputSchema: toolInput({}),
    outputSchema: accountOutput,
    annotations: readOnly,
  },
} as const;

export type ToolName = keyof typeof TOOLS;
