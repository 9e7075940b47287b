// The JSON schema of the styles file, in the display language, with the catalog's models as
// suggestions: the editor completes and checks .gateway-images/styles.json with it (package.json
// jsonValidation). The same rules as styleFile.ts checks, which refuses what the schema misses.
// Pure: no vscode import.
import * as l10n from '@vscode/l10n';
import { OUTPUT_FORMAT_VALUES, QUALITY_VALUES, type ImageModel } from '../gateway/types';

/** The schema for the current display language; `models` become the suggestions of "model". */
export function stylesSchema(models: readonly ImageModel[]): object {
  const ids = models.map((m) => m.id);
  const values = (list: (m: ImageModel) => string[]) => [...new Set(models.flatMap(list))];
  const text = (description: string, examples: string[] = []) => ({ type: 'string', description, ...(examples.length ? { examples } : {}) });
  const whole = (description: string, minimum?: number, maximum?: number) => ({
    type: 'integer',
    description,
    ...(minimum === undefined ? {} : { minimum }),
    ...(maximum === undefined ? {} : { maximum }),
  });
  const options = {
    type: 'object',
    description: l10n.t('Default options of every request made with the style; what the person chooses replaces them.'),
    additionalProperties: false,
    properties: {
      n: whole(l10n.t("Number of images (1 to 10, at most the model's max_n)."), 1, 10),
      resolution: text(
        l10n.t("Resolution tier such as 1K or 2K: one of the model's supported_resolutions."),
        values((m) => m.supported_resolutions),
      ),
      aspect_ratio: text(
        l10n.t("Aspect ratio such as 16:9: one of the model's supported_aspect_ratios."),
        values((m) => m.supported_aspect_ratios),
      ),
      size: text(
        l10n.t('A tier label (2K), exact pixels WIDTHxHEIGHT with the Latin letter x, or auto. Not together with resolution or aspect_ratio when in pixels.'),
      ),
      quality: { enum: [...QUALITY_VALUES], description: l10n.t('Quality; ignored by models that list none.') },
      output_format: { enum: [...OUTPUT_FORMAT_VALUES], description: l10n.t('Output format; ignored by models that list none.') },
      background: text(
        l10n.t("Background such as auto, transparent or opaque: one of the model's supported_background."),
        values((m) => m.supported_background),
      ),
      seed: whole(l10n.t('Seed for repeatable results (ignored by models without supports_seed).')),
      output_compression: whole(l10n.t('Compression for jpeg and webp, 0 to 100.'), 0, 100),
      params: {
        type: 'object',
        description: l10n.t("Provider-specific parameters; their names must be in the model's allowed_passthrough_parameters."),
        additionalProperties: { type: ['string', 'number', 'boolean'] },
      },
    },
  };
  const style = {
    type: 'object',
    additionalProperties: false,
    properties: {
      description: text(l10n.t('What the style is for; shown where a style is picked.')),
      extends: text(l10n.t('Another style of this file whose fields this one starts from; its own fields replace them, options merge.')),
      promptPrefix: text(l10n.t('Text put before the prompt.')),
      promptSuffix: text(l10n.t('Text put after the prompt (no space is added before punctuation such as ", …").')),
      model: text(l10n.t('Image model id from the gateway catalog, without a provider prefix.'), ids),
      options,
      references: {
        type: 'array',
        description: l10n.t('Style reference images: paths relative to the workspace folder, sent as references on models that edit.'),
        items: { type: 'string', minLength: 1 },
      },
      outputFolder: text(l10n.t('Folder for the images, relative to the workspace folder (ignored in an untrusted workspace).'), ['generated-images']),
      fileNamePattern: text(
        l10n.t('File name of the images. Placeholders {date} {time} {slug} {model} {index} {seed} {name} (ignored in an untrusted workspace).'),
        ['{date}-{slug}-{model}-{index}'],
      ),
    },
  };
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: l10n.t('Gateway Images project styles'),
    type: 'object',
    required: ['styles'],
    additionalProperties: false,
    properties: {
      $schema: { type: 'string' },
      styles: {
        type: 'object',
        description: l10n.t('The styles of this project by name: one look for every image, shared through the repository.'),
        propertyNames: { minLength: 1, maxLength: 64 },
        additionalProperties: style,
      },
    },
  };
}
