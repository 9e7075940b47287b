// The stage: the image with the mask's canvas over it at the same size, zoomed (fit, in, out) and
// scrolled inside its frame. Mouse and pen paint through pointer events; the focused canvas takes
// the keyboard rectangle (keyboardRectangle.ts) and says each step in the status line.
import { el } from '../dom';
import { t } from '../host';
import { KEYBOARD_START, keyboardRectangleKey, type KeyboardRectangleState, type PercentPoint } from './keyboardRectangle';
import { drawSegment, maskColour } from './maskCanvas';
import { shapeFromCorners, type MaskMode, type MaskOperation, type Point } from './maskOperations';
import { fitScale, screenToImage, scrollForZoom, zoomIn, zoomOut, zoomPercent } from './stageZoom';
import type { RegionTool } from './regionToolbar';

export interface StageHost {
  tool(): RegionTool;
  brushSize(): number;
  /** A finished operation (its stroke is already drawn on the canvas). */
  add(operation: MaskOperation, drawn: boolean): void;
  say(sentence: string): void;
}

export class RegionStage {
  readonly element: HTMLElement;
  readonly canvas = el('canvas', {
    class: 'region-mask',
    tabindex: '0',
    role: 'application',
    'aria-describedby': 'region-canvas-help region-mask-error',
  });
  readonly help = el('p', { id: 'region-canvas-help', class: 'description region-canvas-help' });
  private readonly image = el('img', { class: 'region-image', alt: '', draggable: 'false' });
  private readonly frame = el('div', { class: 'region-frame' });
  private readonly viewport = el('div', { class: 'region-viewport' });
  private readonly shape = el('div', { class: 'region-shape', hidden: true, 'aria-hidden': 'true' });
  private readonly cursor = el('div', { class: 'region-cursor', hidden: true, 'aria-hidden': 'true' });
  private readonly zoomLabel = el('output', { class: 'region-zoom-value', 'aria-live': 'polite' });
  private readonly zoomOutButton = el('button', { type: 'button', class: 'secondary region-zoom-out' }, [t('regionZoomOut')]);
  private readonly fitButton = el('button', { type: 'button', class: 'secondary region-zoom-fit' }, [t('regionZoomFit')]);
  private readonly zoomInButton = el('button', { type: 'button', class: 'secondary region-zoom-in' }, [t('regionZoomIn')]);
  private width = 1;
  private height = 1;
  private scale = 1;
  private colour = '#b180d7';
  private keyboard: KeyboardRectangleState = KEYBOARD_START;
  private drag: { pointerId: number; start: Point; last: Point; points: Point[]; mode: MaskMode; tool: RegionTool; size: number } | undefined;
  private disabled = false;

  constructor(private readonly host: StageHost) {
    this.help.textContent = t('regionCanvasHelp');
    this.canvas.setAttribute('aria-roledescription', t('regionCanvasRole'));
    this.frame.append(this.image, this.canvas, this.shape, this.cursor);
    this.viewport.appendChild(this.frame);
    this.zoomOutButton.addEventListener('click', () => this.zoomTo(zoomOut(this.scale)));
    this.zoomInButton.addEventListener('click', () => this.zoomTo(zoomIn(this.scale)));
    this.fitButton.addEventListener('click', () => this.fit());
    for (const [button, keys] of [
      [this.zoomOutButton, '-'],
      [this.fitButton, '0'],
      [this.zoomInButton, '+'],
    ] as const) {
      button.setAttribute('aria-keyshortcuts', keys);
      button.title = `${button.textContent ?? ''} (${keys})`;
    }
    // Ctrl (or Cmd) with the wheel zooms, as in image editors; the wheel alone scrolls.
    this.viewport.addEventListener(
      'wheel',
      (event) => {
        if (!event.ctrlKey && !event.metaKey) return;
        event.preventDefault();
        this.zoomTo(event.deltaY < 0 ? zoomIn(this.scale) : zoomOut(this.scale));
      },
      { passive: false },
    );
    this.element = el('div', { class: 'region-stage' }, [
      el('div', { class: 'region-zoom', role: 'group', 'aria-label': t('regionZoom') }, [
        this.zoomOutButton,
        this.fitButton,
        this.zoomInButton,
        this.zoomLabel,
      ]),
      this.viewport,
      this.help,
    ]);
    this.wirePointer();
    this.wireKeyboard();
  }

  /** A new image: the canvas takes its pixel size (which clears it) and the view fits it. */
  show(src: string, name: string, width: number, height: number): void {
    this.image.src = src;
    this.canvas.setAttribute('aria-label', t('regionCanvas', name));
    if (this.canvas.width !== width || this.canvas.height !== height) {
      this.canvas.width = width;
      this.canvas.height = height;
    }
    this.width = width;
    this.height = height;
    this.keyboard = KEYBOARD_START;
    this.colour = maskColour();
    this.showKeyboard();
    requestAnimationFrame(() => this.fit());
  }

  get maskColour(): string {
    return this.colour;
  }

  /** The theme changed: its colour (the caller draws the mask again). */
  refreshColour(): void {
    this.colour = maskColour();
  }

  /** A keyboard rectangle is being drawn: Escape cancels it and does not close the editor. */
  get drawingRectangle(): boolean {
    return !!this.keyboard.anchor || !!this.drag;
  }

  setDisabled(disabled: boolean): void {
    this.disabled = disabled;
    this.canvas.setAttribute('aria-disabled', String(disabled));
  }

  /** +, - and 0 (outside text fields): zoom in, out, fit. True when the key was one of them. */
  zoomShortcut(event: KeyboardEvent): boolean {
    if (event.ctrlKey || event.metaKey || event.altKey) return false;
    if (event.key === '+' || event.key === '=') this.zoomTo(zoomIn(this.scale));
    else if (event.key === '-' || event.key === '_') this.zoomTo(zoomOut(this.scale));
    else if (event.key === '0') this.fit();
    else return false;
    return true;
  }

  fit(): void {
    const width = this.viewport.clientWidth || 600;
    const height = Math.max(200, Math.min(window.innerHeight * 0.65, 900));
    this.zoomTo(fitScale(this.width, this.height, width - 2, height - 2), true);
  }

  zoomTo(scale: number, fitting = false): void {
    const anchor = { x: this.viewport.clientWidth / 2, y: this.viewport.clientHeight / 2 };
    const scroll = scrollForZoom({ x: this.viewport.scrollLeft, y: this.viewport.scrollTop }, anchor, this.scale, scale);
    this.scale = scale;
    this.frame.style.width = `${this.width * scale}px`;
    this.frame.style.height = `${this.height * scale}px`;
    if (!fitting) this.viewport.scrollTo(scroll.x, scroll.y);
    this.zoomLabel.textContent = t('regionZoomValue', zoomPercent(scale));
    this.frame.dataset.scale = String(scale);
    this.showKeyboard();
  }

  private point(event: PointerEvent): Point {
    return screenToImage({ x: event.clientX, y: event.clientY }, this.canvas.getBoundingClientRect(), this.width, this.height);
  }

  private wirePointer(): void {
    this.canvas.addEventListener('pointerdown', (event) => {
      if (this.disabled || this.drag || event.button !== 0) return;
      event.preventDefault();
      this.canvas.focus({ preventScroll: true });
      this.canvas.setPointerCapture(event.pointerId);
      const tool = this.host.tool();
      const start = this.point(event);
      const mode: MaskMode = tool === 'eraser' || event.altKey ? 'subtract' : 'add';
      const size = this.host.brushSize();
      this.drag = { pointerId: event.pointerId, start, last: start, points: [start], mode, tool, size };
      if (tool === 'brush' || tool === 'eraser') drawSegment(this.canvas, mode, size, undefined, start, this.colour);
    });
    this.canvas.addEventListener('pointermove', (event) => {
      const drag = this.drag;
      if (!drag || event.pointerId !== drag.pointerId) return;
      const point = this.point(event);
      if (drag.tool === 'brush' || drag.tool === 'eraser') {
        // Points closer than a quarter pixel add nothing but length to the history.
        if (Math.hypot(point.x - drag.last.x, point.y - drag.last.y) < 0.25) return;
        drawSegment(this.canvas, drag.mode, drag.size, drag.last, point, this.colour);
        drag.points.push(point);
      } else {
        this.showShape(drag.tool, drag.start, point);
      }
      drag.last = point;
    });
    const finish = (event: PointerEvent, cancelled: boolean) => {
      const drag = this.drag;
      if (!drag || event.pointerId !== drag.pointerId) return;
      this.drag = undefined;
      this.shape.hidden = true;
      if (drag.tool === 'brush' || drag.tool === 'eraser') {
        // A cancelled stroke is already drawn: it is kept like any other.
        this.host.add({ kind: 'stroke', mode: drag.mode, size: drag.size, points: drag.points }, true);
        return;
      }
      if (cancelled) return;
      const operation = shapeFromCorners(drag.tool, drag.mode, drag.start, this.point(event), this.width, this.height);
      if (operation) this.host.add(operation, false);
    };
    this.canvas.addEventListener('pointerup', (event) => finish(event, false));
    this.canvas.addEventListener('pointercancel', (event) => finish(event, true));
  }

  private wireKeyboard(): void {
    this.canvas.addEventListener('keydown', (event) => {
      if (this.disabled || event.ctrlKey || event.metaKey || event.altKey) return;
      const mode: MaskMode = this.host.tool() === 'eraser' ? 'subtract' : 'add';
      const step = keyboardRectangleKey(this.keyboard, event, { width: this.width, height: this.height }, mode, t);
      if (!step.handled) return;
      event.preventDefault();
      event.stopPropagation();
      this.keyboard = step.state;
      if (step.operation) this.host.add(step.operation, false);
      if (step.sentence) this.host.say(step.sentence);
      this.showKeyboard();
    });
    this.canvas.addEventListener('focus', () => this.showKeyboard());
    this.canvas.addEventListener('blur', () => this.showKeyboard());
  }

  /** The keyboard's cursor (and its rectangle) while the canvas has the focus. */
  private showKeyboard(): void {
    const focused = document.activeElement === this.canvas;
    this.cursor.hidden = !focused;
    const at = (p: PercentPoint) => ({ x: (p.x / 100) * this.width, y: (p.y / 100) * this.height });
    const cursor = at(this.keyboard.cursor);
    this.cursor.style.left = `${cursor.x * this.scale}px`;
    this.cursor.style.top = `${cursor.y * this.scale}px`;
    if (this.drag) return;
    if (focused && this.keyboard.anchor) this.showShape('rectangle', at(this.keyboard.anchor), cursor);
    else this.shape.hidden = true;
  }

  private showShape(tool: RegionTool, a: Point, b: Point): void {
    const left = Math.min(a.x, b.x) * this.scale;
    const top = Math.min(a.y, b.y) * this.scale;
    this.shape.hidden = false;
    this.shape.classList.toggle('ellipse', tool === 'ellipse');
    this.shape.style.left = `${left}px`;
    this.shape.style.top = `${top}px`;
    this.shape.style.width = `${Math.abs(a.x - b.x) * this.scale}px`;
    this.shape.style.height = `${Math.abs(a.y - b.y) * this.scale}px`;
  }
}
