// The JSON schemas of the MCP tools, and a checker that applies them to the arguments before
// anything else happens: every refusal names the field and what is allowed.
import { ValidationError } from '../../core/errors';
import { OUTPUT_FORMAT_VALUES, QUALITY_VALUES } from '../../core/types';

export interface PropertySchema {
  type: 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object';
  description?: string;
  enum?: readonly string[];
  minimum?: number;
  maximum?: number;
  items?: { type: 'string' };
  minItems?: number;
  maxItems?: number;
  additionalProperties?: { type: ('string' | 'number' | 'boolean')[] };
}

export interface ObjectSchema {
  type: 'object';
  properties: Record<string, PropertySchema>;
  required?: string[];
  additionalProperties: false;
}

export interface ToolSchema {
  name: ToolName;
  title: string;
  description: string;
  inputSchema: ObjectSchema;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
}

export type ToolName = 'list_models' | 'estimate_cost' | 'generate_image' | 'edit_image' | 'get_account';

const options: Record<string, PropertySchema> = {
  model: { type: 'string', description: 'Image model id from list_models, without a provider prefix. Omit for the cheapest model that fits.' },
  n: { type: 'integer', minimum: 1, maximum: 10, description: "Number of images (default 1; at most the model's max_n). Cost grows with n." },
  resolution: { type: 'string', description: "Resolution tier such as 1K, 2K, 4K; must be in the model's supported_resolutions." },
  aspect_ratio: { type: 'string', description: "Aspect ratio such as 1:1, 16:9, 9:16; must be in the model's supported_aspect_ratios." },
  background: { type: 'string', description: "auto, transparent or opaque; must be in the model's supported_background." },
  size: {
    type: 'string',
    description: 'A tier label (2K), exact pixels WIDTHxHEIGHT with the Latin letter x, or auto. Not together with resolution or aspect_ratio when in pixels.',
  },
  quality: { type: 'string', enum: QUALITY_VALUES },
  output_format: { type: 'string', enum: OUTPUT_FORMAT_VALUES },
  output_compression: { type: 'integer', minimum: 0, maximum: 100, description: 'jpeg/webp compression, 0 to 100.' },
  seed: { type: 'integer', description: 'Seed for repeatable results (ignored by models without supports_seed).' },
  params: {
    type: 'object',
    additionalProperties: { type: ['string', 'number', 'boolean'] },
    description: "Provider-specific parameters; names must be in the model's allowed_passthrough_parameters.",
  },
};
const prompt: PropertySchema = { type: 'string', description: 'What the image should show (for edits: the change to make). Any language.' };
const outputDirectory: PropertySchema = {
  type: 'string',
  description:
    'Folder for the results, relative to the workspace folder (default: the configured output folder; for edits, next to the first image). Paths outside the workspace are refused.',
};
const images: PropertySchema = {
  type: 'array',
  items: { type: 'string' },
  minItems: 1,
  maxItems: 16,
  description: 'Reference images (PNG, JPEG or WebP, at most 25 MB each), as paths relative to the workspace folder.',
};
const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };
const paid = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

export const TOOL_SCHEMAS: readonly ToolSchema[] = [
  {
    name: 'list_models',
    title: 'List image models',
    description:
      "Lists the gateway's image models with their price range per image (rubles), max_n, editing support and option lists. Free. Filters: supports_edit, max_price_per_image, resolution, aspect_ratio, background, min_n, supports_seed, parameter.",
    inputSchema: {
      type: 'object',
      properties: {
        supports_edit: { type: 'boolean', description: 'Only models that edit images (true) or only those that do not (false).' },
        max_price_per_image: { type: 'number', minimum: 0, description: 'Only models whose maximum price per image is at most this many rubles.' },
        resolution: { type: 'string', description: 'Only models that support this resolution tier.' },
        aspect_ratio: { type: 'string', description: 'Only models that support this aspect ratio.' },
        background: { type: 'string', description: 'Only models that support this background value.' },
        min_n: { type: 'integer', minimum: 1, maximum: 10, description: 'Only models that make at least this many images per request.' },
        supports_seed: { type: 'boolean', description: 'Only models where seed has an effect.' },
        parameter: { type: 'string', description: 'Only models that accept this provider-specific parameter.' },
      },
      additionalProperties: false,
    },
    annotations: readOnly,
  },
  {
    name: 'estimate_cost',
    title: 'Estimate the cost of an image request',
    description:
      'Validates a request against the model and returns what the gateway would reserve (max price × n), the expected cost range and whether the spending cap allows it. Sends nothing and costs nothing.',
    inputSchema: { type: 'object', properties: { ...options, images }, additionalProperties: false },
    annotations: readOnly,
  },
  {
    name: 'generate_image',
    title: 'Generate images',
    description:
      'Generates images from a text prompt and saves them into the workspace. COSTS MONEY (rubles): call estimate_cost first. Refused before sending when the reservation exceeds the per-call or session cap. Returns the saved paths, the actual cost, the balance after and the remaining session allowance.',
    inputSchema: { type: 'object', properties: { prompt, ...options, output_directory: outputDirectory }, required: ['prompt'], additionalProperties: false },
    annotations: paid,
  },
  {
    name: 'edit_image',
    title: 'Edit images',
    description:
      'Edits workspace images (references) according to a prompt and saves the results next to the first image (originals are never changed). COSTS MONEY (rubles): call estimate_cost with the same images first. Same spending cap as generate_image.',
    inputSchema: {
      type: 'object',
      properties: { prompt, images, ...options, output_directory: outputDirectory },
      required: ['prompt', 'images'],
      additionalProperties: false,
    },
    annotations: paid,
  },
  {
    name: 'get_account',
    title: 'Account, budget and usage',
    description: "Balance, the key's budget and expiry, usage statistics, and the spending cap of this session. Free.",
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: readOnly,
  },
];

export function toolSchema(name: string): ToolSchema | undefined {
  return TOOL_SCHEMAS.find((tool) => tool.name === name);
}

/** Checks `args` against the tool's schema; throws a ValidationError naming the first bad field. */
export function checkArguments(schema: ObjectSchema, args: unknown): Record<string, unknown> {
  if (args === undefined || args === null) args = {};
  if (typeof args !== 'object' || Array.isArray(args)) throw new ValidationError('arguments', 'The arguments must be a JSON object.');
  const record = args as Record<string, unknown>;
  const names = Object.keys(schema.properties);
  for (const field of Object.keys(record)) {
    if (!Object.hasOwn(schema.properties, field)) {
      throw new ValidationError(field, `Unknown argument "${field}". Allowed: ${names.join(', ') || 'none'}.`, names);
    }
  }
  for (const field of schema.required ?? []) {
    if (record[field] === undefined) throw new ValidationError(field, `"${field}" is required.`);
  }
  for (const [field, value] of Object.entries(record)) {
    const property = schema.properties[field]; // present: unknown fields were refused above
    if (value !== undefined && property) checkValue(field, value, property);
  }
  return record;
}

function checkValue(field: string, value: unknown, schema: PropertySchema): void {
  const got = `got ${JSON.stringify(value)?.slice(0, 80)}`;
  switch (schema.type) {
    case 'string':
      if (typeof value !== 'string') throw new ValidationError(field, `"${field}" must be a text; ${got}.`);
      if (schema.enum && !schema.enum.includes(value)) {
        throw new ValidationError(field, `"${field}" must be one of ${schema.enum.join(', ')}; ${got}.`, schema.enum);
      }
      return;
    case 'integer':
    case 'number': {
      const whole = schema.type === 'integer';
      const ok = typeof value === 'number' && Number.isFinite(value) && (!whole || Number.isSafeInteger(value));
      const inRange = ok && (schema.minimum === undefined || value >= schema.minimum) && (schema.maximum === undefined || value <= schema.maximum);
      if (!inRange) {
        const kind = whole ? 'a whole number' : 'a number';
        const range =
          schema.minimum !== undefined && schema.maximum !== undefined
            ? ` from ${schema.minimum} to ${schema.maximum}`
            : schema.minimum !== undefined
              ? ` of ${schema.minimum} or more`
              : '';
        throw new ValidationError(field, `"${field}" must be ${kind}${range}; ${got}.`);
      }
      return;
    }
    case 'boolean':
      if (typeof value !== 'boolean') throw new ValidationError(field, `"${field}" must be true or false; ${got}.`, ['true', 'false']);
      return;
    case 'array': {
      const limits = `from ${schema.minItems ?? 0} to ${schema.maxItems ?? 'any number of'}`;
      if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
        throw new ValidationError(field, `"${field}" must be a list of workspace-relative paths (texts); ${got}.`);
      }
      if ((schema.minItems !== undefined && value.length < schema.minItems) || (schema.maxItems !== undefined && value.length > schema.maxItems)) {
        throw new ValidationError(field, `"${field}" must have ${limits} items; got ${value.length}.`);
      }
      return;
    }
    case 'object': {
      const allowed = schema.additionalProperties?.type ?? [];
      const ok =
        typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => allowed.includes(typeof v as 'string'));
      if (!ok) throw new ValidationError(field, `"${field}" must be an object whose values are ${allowed.join(', ')}; ${got}.`);
      return;
    }
  }
}
