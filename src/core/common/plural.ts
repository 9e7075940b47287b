// Messages with a count ("Saved 1 image", "Сохранено 5 изображений"): the form follows the display
// language's plural rules (Intl.PluralRules). English has two forms, Russian four (one: 1, 21;
// few: 2-4, 22-24; many: 0, 5-20, 25; other: fractions). Each form is its own key in the l10n
// bundle: the English `one` and `other` texts, and the `other` text marked ` [few]` / ` [many]`
// for the forms English does not have. The texts go through `l10n.t` of @vscode/l10n like every
// other message. `l10n-dev export` only sees `l10n.t('…')` calls, so scripts/l10n-plurals.mjs adds
// all four keys from `trPlural(count, { one: '…', other: '…' }, …)` and
// `pluralTable({ one: '…', other: '…' })` (both arguments must be string literals).
import * as l10n from '@vscode/l10n';

export type MessageArg = l10n.L10nReplacement;

// The display language whose plural rules apply (set at activation, see src/host/l10n.ts). This
// module is its own file in dist/ (esbuild.mjs, sharedModules), so every bundle sees the one value.
let currentLanguage = 'en';

/** Sets the language whose plural rules pick the form (`undefined`: English). */
export function setPluralLanguage(displayLanguage: string | undefined): void {
  currentLanguage = displayLanguage || 'en';
}

/** The language whose plural rules pick the form. */
export function pluralLanguage(): string {
  return currentLanguage;
}

/** The plural categories of the shipped languages (English uses one and other). */
export const PLURAL_CATEGORIES = ['one', 'few', 'many', 'other'] as const;
export type PluralCategory = (typeof PLURAL_CATEGORIES)[number];

/** The English forms of a counted message. */
export interface PluralForms {
  one: string;
  other: string;
}

/** The bundle key of one form. */
export function pluralKey(forms: PluralForms, category: string): string {
  if (category === 'one') return forms.one;
  if (category === 'few' || category === 'many') return `${forms.other} [${category}]`;
  return forms.other; // other, and zero/two of languages this extension does not ship
}

const rulesCache = new Map<string, Intl.PluralRules>();

/** The plural category of `count` in `language` (English when the language is unknown to Intl). */
export function pluralCategory(count: number, language = pluralLanguage()): Intl.LDMLPluralRule {
  let rules = rulesCache.get(language);
  if (!rules) {
    try {
      rules = new Intl.PluralRules(language);
    } catch {
      rules = new Intl.PluralRules('en');
    }
    rulesCache.set(language, rules);
  }
  return rules.select(count);
}

/** Translates one form; a marked form nobody translated falls back to the `other` form. */
function translateForm(forms: PluralForms, category: string, args: readonly MessageArg[]): string {
  const key = pluralKey(forms, category);
  // Without arguments l10n.t returns the bundle's text untouched, or the key itself when the bundle lacks it.
  const marked = key !== forms.other && key !== forms.one;
  if (marked && l10n.t(key) === key) return l10n.t(forms.other, ...args); // l10n-forward: keys come from trPlural/pluralTable calls
  return l10n.t(key, ...args); // l10n-forward
}

/** The message for `count` in the display language; `{0}`… are `args` (pass the count among them). */
export function trPlural(count: number, forms: PluralForms, ...args: MessageArg[]): string {
  return translateForm(forms, pluralCategory(count), args);
}

/** Every form, translated, placeholders kept: for the webview, which picks by its own PluralRules. */
export function pluralTable(forms: PluralForms): Record<PluralCategory, string> {
  return Object.fromEntries(PLURAL_CATEGORIES.map((c) => [c, translateForm(forms, c, [])])) as Record<PluralCategory, string>;
}
