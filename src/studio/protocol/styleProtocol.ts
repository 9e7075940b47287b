// Messages of the studio's style picker (project styles). Pure: no vscode and no DOM import.

/** A style as the form shows it: what it sets, as the form's own text values. */
export interface StyleView {
  name: string;
  description?: string;
  /** Why it cannot be used (names the file, the style and the field). */
  error?: string;
  model?: string;
  promptPrefix?: string;
  promptSuffix?: string;
  /** The options it sets, as the form holds them (numbers as text). */
  options: Record<string, string>;
  params: Record<string, string>;
  /** Its reference images, relative to the workspace folder. */
  references: string[];
  /** "docs/images · {slug}-{index}", or why its output is ignored (translated). */
  outputText?: string;
}

/** The workspace's styles file as the picker shows it. */
export interface StylesView {
  /** The file, relative to the workspace folder. */
  file: string;
  exists: boolean;
  /** The styles are the built-in starter styles (the project has no styles file). */
  builtIn?: boolean;
  /** A problem of the whole file (no style can be used). */
  error?: string;
  styles: StyleView[];
}

/** host -> page: the styles, at start and whenever the file changes. */
export interface StylesMessage {
  type: 'styles';
  styles: StylesView;
}

/** host -> page: "Save as Style…" saved the form under this name (the picker selects it). */
export interface StyleSavedMessage {
  type: 'styleSaved';
  requestId: number;
  name: string;
}

/** page -> host: "Save as Style…" with the form as it is. */
export interface SaveStyleMessage<Form> {
  type: 'saveStyle';
  requestId: number;
  form: Form;
}

/** page -> host: open the styles file. */
export interface EditStylesMessage {
  type: 'editStyles';
}

export type StyleFromWebviewMessage<Form> = SaveStyleMessage<Form> | EditStylesMessage;

export function parseStyleMessage<Form>(
  value: Record<string, unknown>,
  parseForm: (form: unknown) => Form | undefined,
): StyleFromWebviewMessage<Form> | undefined {
  const keys = Object.keys(value);
  const only = (...allowed: string[]) => keys.every((k) => k === 'type' || allowed.includes(k));
  switch (value.type) {
    case 'saveStyle': {
      const id = value.requestId;
      if (!only('requestId', 'form') || typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) return undefined;
      const form = parseForm(value.form);
      return form && { type: 'saveStyle', requestId: id, form };
    }
    case 'editStyles':
      return only() ? { type: 'editStyles' } : undefined;
    default:
      return undefined;
  }
}
