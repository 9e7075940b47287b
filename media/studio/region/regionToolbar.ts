// The editor's toolbar: the tool (Brush, Eraser, Rectangle, Ellipse as real radio inputs), the
// brush size, Invert, Clear, Undo and Redo, and their shortcuts (B, E, R, O, [ and ], Ctrl/Cmd+Z,
// Ctrl/Cmd+Shift+Z and Ctrl+Y), taken anywhere in the editor but in its text fields.
import { el } from '../dom';
import { t } from '../host';
import { stepBrushSize } from './maskOperations';

export const REGION_TOOLS = ['brush', 'eraser', 'rectangle', 'ellipse'] as const;
export type RegionTool = (typeof REGION_TOOLS)[number];

const TOOL_KEYS: Record<string, RegionTool> = { b: 'brush', e: 'eraser', r: 'rectangle', o: 'ellipse' };
const TOOL_SHORTCUTS: Record<RegionTool, string> = { brush: 'B', eraser: 'E', rectangle: 'R', ellipse: 'O' };

export interface ToolbarActions {
  invert(): void;
  clear(): void;
  undo(): void;
  redo(): void;
  /** The tool or the size changed (the stage shows the brush's size). */
  changed(): void;
}

export class RegionToolbar {
  readonly element: HTMLElement;
  private readonly radios = new Map<RegionTool, HTMLInputElement>();
  private readonly size = el('input', { type: 'range', id: 'region-brush-size', class: 'region-brush-size', min: '1', max: '100', step: '1' });
  private readonly sizeValue = el('output', { for: 'region-brush-size', class: 'region-brush-size-value' });
  private readonly undoButton = button('regionUndo', 'region-undo');
  private readonly redoButton = button('regionRedo', 'region-redo');
  private readonly invertButton = button('regionInvert', 'region-invert');
  private readonly clearButton = button('regionClear', 'region-clear');

  constructor(private readonly actions: ToolbarActions) {
    const tools = el(
      'div',
      { role: 'radiogroup', class: 'region-tools', 'aria-label': t('regionTool') },
      REGION_TOOLS.map((tool) => {
        const radio = el('input', {
          type: 'radio',
          name: 'region-tool',
          value: tool,
          id: `region-tool-${tool}`,
          class: `region-tool region-tool-${tool}`,
          'aria-keyshortcuts': TOOL_SHORTCUTS[tool],
        });
        radio.addEventListener('change', () => actions.changed());
        this.radios.set(tool, radio);
        return el('label', { for: radio.id, class: 'region-tool-label', title: t(`regionToolKey_${tool}`) }, [radio, t(`regionTool_${tool}`)]);
      }),
    );
    this.radios.get('brush')!.checked = true;
    this.size.addEventListener('input', () => {
      this.showSize();
      actions.changed();
    });
    this.invertButton.addEventListener('click', () => actions.invert());
    this.clearButton.addEventListener('click', () => actions.clear());
    this.undoButton.addEventListener('click', () => actions.undo());
    this.redoButton.addEventListener('click', () => actions.redo());
    this.undoButton.setAttribute('aria-keyshortcuts', 'Control+Z Meta+Z');
    this.redoButton.setAttribute('aria-keyshortcuts', 'Control+Shift+Z Meta+Shift+Z Control+Y');
    this.element = el('div', { role: 'toolbar', class: 'region-toolbar', 'aria-label': t('regionToolbar') }, [
      tools,
      el('div', { class: 'region-size' }, [el('label', { for: this.size.id }, [t('regionBrushSize')]), this.size, this.sizeValue]),
      el('div', { class: 'region-buttons' }, [this.undoButton, this.redoButton, this.invertButton, this.clearButton]),
    ]);
  }

  get tool(): RegionTool {
    for (const [tool, radio] of this.radios) if (radio.checked) return tool;
    return 'brush';
  }

  setTool(tool: RegionTool): void {
    this.radios.get(tool)!.checked = true;
    this.actions.changed();
  }

  get brushSize(): number {
    return Number(this.size.value) || 1;
  }

  /** The size range of an image (maskOperations.brushSizes); the size is kept when it fits. */
  setSizeRange(range: { min: number; max: number; initial: number }, keep: boolean): void {
    const current = this.brushSize;
    this.size.min = String(range.min);
    this.size.max = String(range.max);
    this.size.value = String(keep && current >= range.min && current <= range.max ? current : range.initial);
    this.showSize();
  }

  setHistory(canUndo: boolean, canRedo: boolean): void {
    this.undoButton.disabled = !canUndo;
    this.redoButton.disabled = !canRedo;
  }

  setBusy(busy: boolean): void {
    for (const control of [...this.radios.values(), this.size, this.invertButton, this.clearButton]) control.disabled = busy;
    if (busy) this.setHistory(false, false);
  }

  /** A key anywhere in the editor; true when it was a shortcut of the toolbar. */
  shortcut(event: KeyboardEvent): boolean {
    const target = event.target as HTMLElement | null;
    if (target?.closest('textarea, select, input:not([type="radio"]):not([type="range"]):not([type="checkbox"])')) return false;
    const key = event.key.toLowerCase();
    if (event.ctrlKey || event.metaKey) {
      if (event.altKey) return false;
      if (key === 'z' && !event.shiftKey) return this.press(this.undoButton);
      if ((key === 'z' && event.shiftKey) || (key === 'y' && event.ctrlKey)) return this.press(this.redoButton);
      return false;
    }
    if (event.altKey) return false;
    const tool = TOOL_KEYS[key];
    if (tool && !this.radios.get(tool)!.disabled) {
      this.setTool(tool);
      return true;
    }
    if ((key === '[' || key === ']') && !this.size.disabled) {
      this.size.value = String(stepBrushSize(this.brushSize, key === '[' ? -1 : 1, { min: Number(this.size.min), max: Number(this.size.max) }));
      this.showSize();
      this.actions.changed();
      return true;
    }
    return false;
  }

  private press(target: HTMLButtonElement): boolean {
    if (!target.disabled) target.click();
    return true;
  }

  private showSize(): void {
    this.sizeValue.textContent = t('regionPixels', this.brushSize);
    this.size.setAttribute('aria-valuetext', t('regionPixels', this.brushSize));
  }
}

function button(key: string, className: string): HTMLButtonElement {
  return el('button', { type: 'button', class: `secondary ${className}` }, [t(key)]);
}
