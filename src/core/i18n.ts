// Translatable messages for the pure modules (core, jobs) without a vscode import: they call
// `tr('…{0}…', value)` and the extension installs `vscode.l10n.t` as the translator at activation.
// Without a translator (unit tests, plain Node) the English message is formatted as is.
//
// The translator lives on globalThis, not in a module variable: esbuild inlines this module into
// each bundle (extension.js, errors.js, gateway.js), and all of them must see the one translator.

export type MessageArg = string | number | boolean;
export type Translator = (message: string, ...args: MessageArg[]) => string;

const SLOT = Symbol.for('gateway-images.i18n.translator');
const LANGUAGE = Symbol.for('gateway-images.i18n.language');
type Slot = { [SLOT]?: Translator; [LANGUAGE]?: string };

/** Replaces `{0}`, `{1}`… with the arguments; unknown placeholders stay as they are. */
export function formatMessage(message: string, args: readonly MessageArg[]): string {
  return message.replace(/\{(\d+)\}/g, (whole, index: string) => (Number(index) < args.length ? String(args[Number(index)]) : whole));
}

/** Installs the translator and its display language (`undefined` restores plain English). */
export function setTranslator(translator: Translator | undefined, language = 'en'): void {
  (globalThis as Slot)[SLOT] = translator;
  (globalThis as Slot)[LANGUAGE] = translator ? language : 'en';
}

/** The display language of the installed translator (plural rules follow it). */
export function displayLanguage(): string {
  return (globalThis as Slot)[LANGUAGE] ?? 'en';
}

/**
 * The message in the display language. The first argument must be a string literal: the
 * extractor (scripts/l10n-extract.mjs) collects it as the key of the l10n bundle.
 */
export function tr(message: string, ...args: MessageArg[]): string {
  const translator = (globalThis as Slot)[SLOT];
  if (translator) {
    try {
      return translator(message, ...args);
    } catch {
      // A broken translator must never hide the message.
    }
  }
  return formatMessage(message, args);
}
