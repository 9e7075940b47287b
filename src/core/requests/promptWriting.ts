// A prompt written by the editor's language model: the instruction it gets (the selection or the
// whole Markdown/HTML document, the document's kind, the project style when one is chosen) and the
// cleaning of its answer into one prompt (no quotes, no "Prompt:" label, no code fence, a length
// limit). The gateway sets no prompt length (its spec shows none), so the limit is ours. Pure: no
// vscode import; the host side (commands/images/writePrompt.ts) sends the messages and streams the answer.
import * as l10n from '@vscode/l10n';
import { ValidationError } from '../gateway/errors';

/** The longest prompt kept from the model's answer (cut at a word boundary). */
export const MAX_WRITTEN_PROMPT = 1000;
/** The most text of the document sent to the model: a long article's beginning says what it is about. */
export const MAX_SOURCE_TEXT = 12_000;

export type SourceKind = 'markdown' | 'html' | 'plaintext';

/** The words of a project style that the model should know about (they are added to the prompt later). */
export interface StyleHint {
  name: string;
  description?: string;
  promptPrefix?: string;
  promptSuffix?: string;
}

export interface PromptSource {
  /** The selected text, or the whole document. */
  text: string;
  /** Whether `text` is the whole document (else a selection in it). */
  wholeDocument: boolean;
  kind: SourceKind;
  style?: StyleHint;
}

/** The text sent to the model, cut to MAX_SOURCE_TEXT at a line or word boundary; empty when there is nothing to describe. */
export function sourceExcerpt(text: string): string {
  const trimmed = text.trim();
  if (trimmed.length <= MAX_SOURCE_TEXT) return trimmed;
  const cut = trimmed.slice(0, MAX_SOURCE_TEXT);
  const boundary = Math.max(cut.lastIndexOf('\n'), cut.lastIndexOf(' '));
  return `${cut.slice(0, boundary > MAX_SOURCE_TEXT / 2 ? boundary : MAX_SOURCE_TEXT).trimEnd()}\n…`;
}

/**
 * The one user message the model gets. The instruction is in English whatever the display
 * language: image models follow English prompts best, and the model is told to answer with the
 * prompt alone so that cleanWrittenPrompt has little to remove.
 */
export function promptInstruction(source: PromptSource): string {
  const excerpt = sourceExcerpt(source.text);
  if (!excerpt)
    throw new ValidationError('prompt', l10n.t('There is no text to write an image prompt from: select some text or open a document that has some.'));
  const what = source.wholeDocument
    ? `the whole ${kindName(source.kind)} document below`
    : `the passage below, selected in a ${kindName(source.kind)} document`;
  const lines = [
    `Write a prompt for an image generation model: one image that illustrates ${what}, such as an article cover.`,
    'Describe the subject, the composition and the visual style in one paragraph of at most 80 words.',
    'The image must contain no text, letters or captions unless the passage explicitly asks for them.',
    'Answer with the prompt only: no title, no label such as "Prompt:", no quotes, no explanation.',
  ];
  if (source.style) {
    const style = source.style;
    const words = [
      style.description && `described as "${style.description}"`,
      style.promptPrefix && `its prompts start with "${style.promptPrefix}"`,
      style.promptSuffix && `and end with "${style.promptSuffix}"`,
    ]
      .filter(Boolean)
      .join(', ');
    lines.push(
      `The image is made with the project style "${style.name}"${words ? ` (${words})` : ''}. Those words are added to your prompt automatically: do not repeat them, and do not contradict the style.`,
    );
  }
  const fence = source.kind === 'html' ? 'html' : source.kind === 'markdown' ? 'markdown' : 'text';
  return `${lines.join('\n')}\n\n\`\`\`\`${fence}\n${excerpt}\n\`\`\`\``;
}

function kindName(kind: SourceKind): string {
  return kind === 'html' ? 'HTML' : kind === 'markdown' ? 'Markdown' : 'plain text';
}

/** Labels a model puts before the prompt ("Prompt:", "**Image prompt:**", "Промпт:"), removed with what follows them on the line. */
const LABEL = /^(?:[*_#>\s]*)(?:image\s+prompt|prompt|промпт|запрос)\s*[*_]*\s*[:：]\s*[*_]*\s*/iu;
/** Pairs of quotes a model wraps the whole answer in. */
const QUOTES: [string, string][] = [
  ['"', '"'],
  ["'", "'"],
  ['“', '”'],
  ['«', '»'],
  ['„', '“'],
  ['`', '`'],
];

/**
 * The model's answer as one prompt: without a code fence, a label, surrounding quotes or Markdown
 * emphasis around the whole, on one line, at most MAX_WRITTEN_PROMPT characters (cut at a word).
 * An answer with nothing left is refused: the caller then falls back to the selection.
 */
export function cleanWrittenPrompt(answer: string, maxLength = MAX_WRITTEN_PROMPT): string {
  let text = answer.trim();
  const fenced = /^(`{3,}|~{3,})[^\n]*\n([\s\S]*?)\n\1\s*$/.exec(text);
  if (fenced) text = fenced[2]!.trim();
  for (let changed = true; changed;) {
    changed = false;
    const unlabelled = text.replace(LABEL, '');
    if (unlabelled !== text) [text, changed] = [unlabelled.trim(), true];
    for (const [open, close] of QUOTES) {
      const inner = text.slice(open.length, -close.length);
      // Only quotes around the whole: '"a" and "b"' keeps its own.
      if (text.length >= 2 && text.startsWith(open) && text.endsWith(close) && !inner.includes(open) && !inner.includes(close)) {
        [text, changed] = [inner.trim(), true];
      }
    }
    const emphasis = /^(\*\*|__|\*|_)([^*_]+)\1$/.exec(text);
    if (emphasis) [text, changed] = [emphasis[2]!.trim(), true];
  }
  text = text.replace(/\s+/g, ' ').trim();
  if (text.length > maxLength) {
    const cut = text.slice(0, maxLength);
    const space = cut.lastIndexOf(' ');
    text = (space > maxLength / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:]+$/, '');
  }
  if (!text) throw new ValidationError('prompt', l10n.t('The language model answered without a prompt.'));
  return text;
}

/** What a document's language is, for the instruction (VS Code's language ids). */
export function sourceKindOf(languageId: string): SourceKind {
  return languageId === 'markdown' ? 'markdown' : languageId === 'html' ? 'html' : 'plaintext';
}
