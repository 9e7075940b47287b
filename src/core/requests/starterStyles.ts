// Starter styles: a handful of built-in styles offered while a project has no styles file, so a
// first-time user sees what a style does. Each is resolved against the current catalog by the
// catalog's own fields (generation, aspect ratios, backgrounds, quality), never by model names: a
// style whose options no model offers is not offered. "Save as Project Style…" copies one into the
// project's file. Pure: no vscode import.
import * as l10n from '@vscode/l10n';
import type { StyleDefinition, StylesSource } from './styleFile';
import type { ImageModel } from '../gateway/types';

/** How a built-in style is named where a styles file's name goes (history, provenance, messages). */
export const STARTER_STYLES_FILE = 'built-in styles';

interface StarterStyle {
  name: () => string;
  description: () => string;
  promptSuffix: () => string;
  /** Options a model must offer for the style to work: checked against the catalog's lists. */
  needs: { aspect_ratio?: string; background?: string };
  /** Options used when the model offers them (else left to the model's default). */
  prefers: { quality?: string; aspect_ratio?: string };
}

const STARTERS: StarterStyle[] = [
  {
    name: () => l10n.t('Article cover 16:9'),
    description: () => l10n.t('A wide cover image for an article or a blog post'),
    promptSuffix: () => l10n.t(', wide editorial cover illustration, clear focal point, generous empty space, no text'),
    needs: { aspect_ratio: '16:9' },
    prefers: { quality: 'high' },
  },
  {
    name: () => l10n.t('Icon, transparent'),
    description: () => l10n.t('A simple square icon on a transparent background'),
    promptSuffix: () => l10n.t(', simple flat icon, centred, bold shapes, no text, transparent background'),
    needs: { background: 'transparent' },
    prefers: { aspect_ratio: '1:1' },
  },
  {
    name: () => l10n.t('Photo-real'),
    description: () => l10n.t('A photograph-like image'),
    promptSuffix: () => l10n.t(', photorealistic, natural light, 35 mm photograph, sharp focus'),
    needs: {},
    prefers: { quality: 'high' },
  },
  {
    name: () => l10n.t('Flat illustration'),
    description: () => l10n.t('A flat vector illustration in soft colours'),
    promptSuffix: () => l10n.t(', flat vector illustration, soft pastel colours, plain background'),
    needs: {},
    prefers: {},
  },
  {
    name: () => l10n.t('Sketch'),
    description: () => l10n.t('A pencil sketch on paper'),
    promptSuffix: () => l10n.t(', loose pencil sketch on white paper, hand-drawn lines, light shading'),
    needs: {},
    prefers: {},
  },
];

function offers(model: ImageModel, needs: StarterStyle['needs']): boolean {
  if (!model.supports_generation) return false;
  if (needs.aspect_ratio && !model.supported_aspect_ratios.includes(needs.aspect_ratio)) return false;
  if (needs.background && !model.supported_background.includes(needs.background)) return false;
  return true;
}

/**
 * The starter styles this catalog can make, in order, each with a model: `preferred` (the last
 * model used) when it offers what the style needs, else the model that does with the lowest
 * highest price. A style no model can make is left out.
 */
export function starterStyles(models: readonly ImageModel[], preferred?: string): Map<string, StyleDefinition> {
  const styles = new Map<string, StyleDefinition>();
  for (const starter of STARTERS) {
    const able = models.filter((m) => offers(m, starter.needs));
    if (!able.length) continue;
    const model = able.find((m) => m.id === preferred) ?? [...able].sort((a, b) => a.max_price_per_image - b.max_price_per_image)[0]!;
    const options: NonNullable<StyleDefinition['options']> = { ...starter.needs };
    if (starter.prefers.quality && model.supported_quality.includes(starter.prefers.quality)) options.quality = starter.prefers.quality;
    if (starter.prefers.aspect_ratio && !options.aspect_ratio && model.supported_aspect_ratios.includes(starter.prefers.aspect_ratio)) {
      options.aspect_ratio = starter.prefers.aspect_ratio;
    }
    styles.set(starter.name(), {
      description: starter.description(),
      promptSuffix: starter.promptSuffix(),
      model: model.id,
      ...(Object.keys(options).length ? { options } : {}),
    });
  }
  return styles;
}

/** The starter styles as a styles source (used only where the project has no styles file): trusted, they are ours. */
export function starterSource(root: string, models: readonly ImageModel[], preferred?: string): StylesSource {
  return { root, file: STARTER_STYLES_FILE, trusted: true, styles: starterStyles(models, preferred), broken: new Map() };
}

/** Whether a styles source is the built-in one (its styles can be saved into the project). */
export function isStarterSource(source: StylesSource | undefined): boolean {
  return source?.file === STARTER_STYLES_FILE;
}
