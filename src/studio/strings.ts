// The page's user-facing strings, translated on the host so the webview has no English of its own.
import * as vscode from 'vscode';
import type { StudioStrings } from './protocol';
import { pluralTable } from '../core/plural';

export function studioTitle(): string {
  return vscode.l10n.t('Image Studio');
}

/** A counted string for the page: one entry per plural form, `<key>.one`, `<key>.few`… (see media/studio/host.ts tn()). */
function plural(key: string, forms: Record<string, string>): StudioStrings {
  return Object.fromEntries(Object.entries(forms).map(([category, text]) => [`${key}.${category}`, text]));
}

export function studioStrings(): StudioStrings {
  const t = vscode.l10n.t;
  return {
    title: studioTitle(),
    formHeading: t('Create'),
    model: t('Model'),
    modelPlaceholder: t('Choose a model'),
    refreshModels: t('Reload models'),
    noModels: t('No models yet. Check the gateway address and reload.'),
    provider: t('Provider: {0}'),
    pricePerImage: t('{0} per image'),
    maxN: t('up to {0} per request'),
    ...plural('editsUpTo', pluralTable({ one: 'edits up to {0} image', other: 'edits up to {0} images' })),
    noEditing: t('no editing'),
    generationOnlyWithReferences: t('edits only (needs a reference)'),
    prompt: t('Prompt'),
    promptPlaceholder: t('A lighthouse on a cliff at dawn, watercolour'),
    count: t('Number of images'),
    resolution: t('Resolution'),
    aspectRatio: t('Aspect ratio'),
    background: t('Background'),
    quality: t('Quality'),
    format: t('Format'),
    size: t('Size'),
    sizePlaceholder: t('2K, 1024x1024 or auto'),
    seed: t('Seed'),
    seedPlaceholder: t('random'),
    compression: t('Compression (0–100)'),
    defaultOption: t('default'),
    ignoredByModel: t('ignored by this model'),
    moreOptions: t('More options'),
    providerParameters: t('Provider parameters'),
    references: t('References'),
    addReferences: t('Add images…'),
    referencesHint: t('Add from the workspace, paste an image, or drag files here (hold Shift while dragging from the Explorer).'),
    referencesNotSupported: t('This model does not edit images: references are not accepted.'),
    referencesCount: t('{0} of {1}'),
    removeReference: t('Remove {0}'),
    estimate: t('Estimate'),
    reservation: t('Reserved before generating'),
    expected: t('Expected cost'),
    balanceAfter: t('Balance after (at most)'),
    budgetAfter: t('Key budget after (at most)'),
    balance: t('Balance'),
    budget: t('Key budget'),
    unknown: t('unknown'),
    cannotAffordBalance: t('The balance does not cover the reservation.'),
    cannotAffordBudget: t('The key budget does not cover the reservation.'),
    accountStatus: t('Account: {0}'),
    generate: t('Generate'),
    edit: t('Edit'),
    cancel: t('Cancel'),
    generating: t('Working… the images appear below when they are saved.'),
    disabledBecause: t('Cannot send yet: {0}'),
    ...plural('done', pluralTable({ one: 'Saved {0} image. Cost {1}.', other: 'Saved {0} images. Cost {1}.' })),
    failed: t('Failed: {0}'),
    filledFromHistory: t('The form was filled from a previous result. Review it and press Generate to send (nothing was sent yet).'),
    gallery: t('Results in this workspace'),
    galleryEmpty: t('No results yet. Generated images of this workspace appear here.'),
    cost: t('Cost {0}'),
    edited: t('edit'),
    open: t('Open'),
    reveal: t('Reveal in Explorer'),
    copyPath: t('Copy Path'),
    insertLink: t('Insert Markdown Link'),
    useAsReference: t('Use as Reference'),
    regenerate: t('Regenerate…'),
    delete: t('Delete…'),
    actionsFor: t('Actions for {0}'),
    pasteTooLarge: t('The pasted image is larger than 25 MB.'),
    pasteUnsupported: t('Only PNG, JPEG and WebP images can be used as references.'),
    loading: t('Loading…'),
  };
}
