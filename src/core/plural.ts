// Messages with a count ("Saved 1 image", "Сохранено 5 изображений"): the form follows the display
// language's plural rules (Intl.PluralRules). English has two forms, Russian four (one: 1, 21;
// few: 2-4, 22-24; many: 0, 5-20, 25; other: fractions). Each form is its own key in the l10n
// bundle: the English `one` and `other` texts, and the `other` text marked ` [few]` / ` [many]`
// for the forms English does not have. scripts/l10n-extract.mjs collects all four from
// `trPlural(count, { one: '…', other: '…' }, …)` and `pluralTable({ one: '…', other: '…' })`
// (both arguments must be string literals).
import { displayLanguage, formatMessage, tr, type MessageArg } from './i18n';

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
export function pluralCategory(count: number, language = displayLanguage()): Intl.LDMLPluralRule {
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
  const text = tr(key, ...args); // l10n-forward: the keys are collected from trPlural/pluralTable calls
  if (key !== forms.other && key !== forms.one && text === formatMessage(key, args)) return tr(forms.other, ...args); // l10n-forward
  return text;
}

/** The message for `count` in the display language; `{0}`… are `args` (pass the count among them). */
export function trPlural(count: number, forms: PluralForms, ...args: MessageArg[]): string {
  return translateForm(forms, pluralCategory(count), args);
}

/** Every form, translated, placeholders kept: for the webview, which picks by its own PluralRules. */
export function pluralTable(forms: PluralForms): Record<PluralCategory, string> {
  return Object.fromEntries(PLURAL_CATEGORIES.map((c) => [c, translateForm(forms, c, [])])) as Record<PluralCategory, string>;
}
