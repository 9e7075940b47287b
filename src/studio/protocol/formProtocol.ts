// The studio's form as the page holds it, shared by the page's messages (protocol.ts) and the
// comparison's (compareProtocol.ts). Pure: no vscode and no DOM import.

/** The form as the page holds it. Numbers typed by people stay text until the host parses them. */
export interface FormValues {
  model: string;
  prompt: string;
  n: number;
  resolution?: string;
  aspect_ratio?: string;
  background?: string;
  quality?: string;
  output_format?: string;
  size?: string;
  seed?: string;
  output_compression?: string;
  /** Provider-specific parameters by name (only the model's allowed names are offered). */
  params: Record<string, string>;
  /** File system paths of the reference images (given by the host). */
  references: string[];
  /** A project style: its words go around the prompt, its references after these, its values fill the fields. */
  style?: string;
  /** Fields that show the style's value (not the person's): the style decides them. An emptied field not listed clears the style's value. */
  fromStyle?: StyleField[];
}

/** The fields a style may fill. */
export const STYLE_FIELDS = [
  'model',
  'n',
  'resolution',
  'aspect_ratio',
  'background',
  'quality',
  'output_format',
  'size',
  'seed',
  'output_compression',
  'params',
] as const;
export type StyleField = (typeof STYLE_FIELDS)[number];

/** The form's fields as the person edits them (issues are matched to them). */
export const FORM_FIELDS = ['model', 'prompt', ...STYLE_FIELDS.slice(1), 'references', 'style'] as const;
export type FormField = (typeof FORM_FIELDS)[number];

/** What the person has done to the form: errors show only for fields edited, or all after Generate. */
export interface FormInteraction {
  edited: FormField[];
  /** Generate was pressed (with issues, it only shows them). */
  submitted: boolean;
}
