// A gallery card's actions: the four used most as icon buttons (each named and with a tooltip),
// the rest in a More actions menu (the WAI-ARIA menu button pattern: arrows move, Enter or Space
// carries out, Escape closes and gives the focus back to the button). The menu is built when it
// opens and removed when it closes: a card drawn and scrolled past carries no menu.
import type { GalleryAction } from '../../src/studio/protocol/protocol';
import { el } from './dom';
import { t } from './host';
import { menuKey, openingIndex } from './menuKeys';

export const ICON_ACTIONS: readonly GalleryAction[] = ['open', 'editRegion', 'useAsReference', 'insertLink'];
export const MENU_ACTIONS: readonly GalleryAction[] = ['reveal', 'copyPath', 'regenerate', 'delete'];

type Icon = 'open' | 'editRegion' | 'useAsReference' | 'insertLink' | 'more';

/** The images the region editor takes (the host checks again: animated ones are refused there). */
const REGION_EDITABLE = /\.(png|jpe?g|webp)$/i;

/** 16×16 shapes drawn in currentColor (the theme's icon colour): the page's CSP loads no icon font. */
const ICON_PATHS: Record<Icon, string> = {
  // A box with an arrow leaving it.
  open: 'M3 3h5v1H4v8h8V8h1v5H3zM9 2h5v5h-1V3.7L8.4 8.3l-.7-.7L12.3 3H9z',
  // A pencil, outlined, with the line of its ferrule: Edit a Region….
  editRegion: 'M11 1l4 4-9.5 9.5L1 15l.5-4.5zm0 1.4l-8.5 8.5-.3 2.9 2.9-.3L13.6 5zM9.3 4.1l2.6 2.6-.5.5-2.6-2.6z',
  // A picture (frame, hills) with a plus: added to the form's references.
  useAsReference: 'M1 3h10v1H2v8h11V8h1v5H1zM3 11l2.5-3.5 2 2.3 1.2-1.3L11 11zM12 1h1v2h2v1h-2v2h-1V4h-2V3h2z',
  // The Markdown mark: M and a down arrow in a frame.
  insertLink: 'M1 4h14v8H1zm1 1v6h12V5zm1 5V6h1.2L5 7.3 5.8 6H7v4H6V7.9l-1 1.4-1-1.4V10zm7-4h1.5v2H13l-2.25 2.5L8.5 8H10z',
  // Three dots.
  more: 'M4.2 8a1.2 1.2 0 1 1-2.4 0 1.2 1.2 0 0 1 2.4 0zm5 0a1.2 1.2 0 1 1-2.4 0 1.2 1.2 0 0 1 2.4 0zm5 0a1.2 1.2 0 1 1-2.4 0 1.2 1.2 0 0 1 2.4 0z',
};

const SVG = 'http://www.w3.org/2000/svg';

function icon(name: Icon): SVGSVGElement {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  const path = document.createElementNS(SVG, 'path');
  path.setAttribute('d', ICON_PATHS[name]);
  path.setAttribute('fill', 'currentColor');
  path.setAttribute('fill-rule', 'evenodd');
  svg.appendChild(path);
  return svg;
}

/** A button that shows only an icon: its name (for screen readers) and its tooltip are the action's label. */
function iconButton(name: Icon, label: string, className: string): HTMLButtonElement {
  const button = el('button', { type: 'button', class: `icon-button ${className}`, 'aria-label': label, title: label });
  button.appendChild(icon(name));
  return button;
}

/** The card's action bar; `run` carries out an action on the card's image, `file`. */
export function buildCardActions(run: (action: GalleryAction) => void, file: string): HTMLElement {
  const actions = ICON_ACTIONS.filter((action) => action !== 'editRegion' || REGION_EDITABLE.test(file));
  const buttons = actions.map((action) => {
    const button = iconButton(action as Icon, t(action), `action-${action}`);
    button.dataset.action = action;
    button.addEventListener('click', () => run(action));
    return button;
  });
  return el('div', { class: 'card-actions', role: 'group' }, [...buttons, moreButton(run)]);
}

function moreButton(run: (action: GalleryAction) => void): HTMLElement {
  const button = iconButton('more', t('moreActions'), 'action-more');
  button.setAttribute('aria-haspopup', 'menu');
  button.setAttribute('aria-expanded', 'false');
  let menu: HTMLElement | undefined;
  const items = () => (menu ? [...menu.querySelectorAll<HTMLElement>('[role="menuitem"]')] : []);

  const close = (returnFocus: boolean) => {
    if (!menu) return;
    const closing = menu;
    menu = undefined;
    button.setAttribute('aria-expanded', 'false');
    button.closest('li')?.classList.remove('menu-open');
    if (returnFocus) button.focus();
    closing.remove();
  };
  const activate = (item: Element | null) => {
    const action = item?.closest<HTMLElement>('[role="menuitem"]')?.dataset.action as GalleryAction | undefined;
    if (!action) return;
    close(true);
    run(action);
  };
  const open = (index: number) => {
    if (!menu) {
      menu = el(
        'div',
        { class: 'card-menu', role: 'menu', 'aria-label': t('moreActions') },
        MENU_ACTIONS.map((action) =>
          el('button', { type: 'button', role: 'menuitem', tabindex: '-1', class: `action-${action}`, 'data-action': action }, [t(action)]),
        ),
      );
      menu.addEventListener('click', (event) => activate(event.target as Element));
      menu.addEventListener('keydown', (event) => {
        const list = items();
        const outcome = menuKey(event.key, list.indexOf(document.activeElement as HTMLElement), list.length);
        if (!outcome) return;
        if (outcome.kind !== 'close' || outcome.returnFocus) event.preventDefault();
        event.stopPropagation();
        if (outcome.kind === 'focus') list[outcome.index]?.focus();
        else if (outcome.kind === 'activate') activate(document.activeElement);
        else close(outcome.returnFocus);
      });
      // Focus gone elsewhere (a click outside, Tab, the window left): the menu closes.
      menu.addEventListener('focusout', (event) => {
        const next = event.relatedTarget as Node | null;
        if (next && (menu?.contains(next) || next === button)) return;
        close(false);
      });
      button.after(menu);
      button.setAttribute('aria-expanded', 'true');
      button.closest('li')?.classList.add('menu-open');
    }
    items()[index]?.focus();
  };

  button.addEventListener('click', () => (menu ? close(true) : open(0)));
  button.addEventListener('keydown', (event) => {
    if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
    event.preventDefault();
    open(openingIndex(event.key, MENU_ACTIONS.length));
  });
  return button;
}
