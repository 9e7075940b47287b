// Messages of the studio's "Write a prompt from the active document…": the page asks, the host has
// the editor's language model write a prompt from the active Markdown or HTML editor (its
// selection, else the whole document) and answers with it, or with why there is none. The prompt
// goes into the form, where the live estimate is shown before anything is sent. Pure: no vscode
// and no DOM import.

/** page -> host: write a prompt from the active document, for the form's style. */
export interface WritePromptMessage {
  type: 'writePrompt';
  requestId: number;
  style?: string;
}

/** host -> page: the prompt written (into the form), and/or a line that says where it came from or why there is none. */
export interface PromptWrittenMessage {
  type: 'promptWritten';
  requestId: number;
  prompt?: string;
  note?: string;
}

/** A page message of this part, checked field by field; undefined when it is not one or is malformed. */
export function parsePromptMessage(value: Record<string, unknown>): WritePromptMessage | undefined {
  if (value.type !== 'writePrompt') return undefined;
  const keys = Object.keys(value);
  const id = value.requestId;
  if (!keys.every((k) => ['type', 'requestId', 'style'].includes(k)) || typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) return undefined;
  if (value.style !== undefined && (typeof value.style !== 'string' || value.style.length > 64)) return undefined;
  return { type: 'writePrompt', requestId: id, ...(value.style ? { style: value.style } : {}) };
}
