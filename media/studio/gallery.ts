// The results of this workspace, virtualised: only the cards near the screen are in the DOM, each
// with a small cached thumbnail (asked for once the card is shown, never the full image). The list
// is filled page by page as it is scrolled to, and host changes arrive as splices. The actions are
// carried out by the host on files its journal knows.
import type { GalleryAction, GalleryChangedMessage, GalleryItem, GalleryPageView, ThumbnailMessage } from '../../src/studio/protocol/protocol';
import { LIMITS } from '../../src/studio/protocol/protocol';
import { GalleryList } from '../../src/studio/gallery/galleryList';
import { buildCardActions } from './cardActions';
import { el } from './dom';
import { post, request, t } from './host';

const MIN_CARD_WIDTH = 220;
const GAP = 16;
/** Rows drawn above and below the screen, so a scroll shows cards already drawn. */
const OVERSCAN_ROWS = 2;
/** Thumbnails are asked for once the list has been still this long: not for every card scrolled past. */
const THUMBNAIL_DELAY_MS = 120;
/** Thumbnails come as data URLs: only the latest this many are kept; a card drawn again asks anew. */
const THUMBNAILS_KEPT = LIMITS.thumbnails * 2;

type ThumbnailState = Omit<ThumbnailMessage, 'type' | 'file'>;

export interface Gallery {
  section: HTMLElement;
  /** Shows the filter the host kept (a reload keeps it). */
  setFilter(query: string): void;
  show(page: GalleryPageView): void;
  page(page: GalleryPageView): void;
  changed(message: GalleryChangedMessage): void;
  thumbnail(message: ThumbnailMessage): void;
}

const keyOf = (item: { entryId: string; file: string }) => `${item.entryId}\n${item.file}`;

export function buildGallery(): Gallery {
  const list = new GalleryList<GalleryItem>();
  const thumbnails = new Map<string, ThumbnailState>();
  const asked = new Set<string>();
  const cards = new Map<string, HTMLElement>();
  /** The item each card shows: a changed item (its cost arrived, say) is a new object, and its card is updated in place. */
  const drawnItems = new WeakMap<HTMLElement, GalleryItem>();
  const pagesAsked = new Set<number>();
  const ul = el('ul', { class: 'gallery', id: 'gallery' });
  const empty = el('p', { class: 'description', 'aria-live': 'polite' }, [t('galleryEmpty')]);
  // The host filters the whole journal (words, model:, style:, who:, from:, to:, cost:) and keeps the filter across reloads.
  const filter = el('input', {
    type: 'search',
    id: 'gallery-filter',
    class: 'gallery-filter',
    'aria-label': t('galleryFilter'),
    placeholder: t('galleryFilterPlaceholder'),
  });
  filter.addEventListener('input', () => post({ type: 'galleryFilter', query: filter.value }));
  const section = el('section', { class: 'results', 'aria-labelledby': 'gallery-heading' }, [
    el('h2', { id: 'gallery-heading' }, [t('gallery')]),
    filter,
    empty,
    ul,
  ]);
  let rowHeight = 0;
  let firstShown = false;
  let scheduled = false;
  let thumbnailTimer: ReturnType<typeof setTimeout> | undefined;

  /**
   * Asks for the thumbnails of the cards drawn now that have none yet. A request replaces the
   * host's earlier one (what it has not made yet is dropped, so that cards scrolled past are not
   * made first): each request carries every drawn card still without its thumbnail, and goes when
   * one of them was not asked for yet. A card asked for once and still drawn was otherwise left
   * blank for good when a newer request dropped it (seen at 5,000 results under load).
   */
  const askThumbnails = () => {
    const drawn = [...cards.values()];
    const drawnFiles = new Set(drawn.map((element) => element.dataset.file));
    for (const file of asked) if (!drawnFiles.has(file)) asked.delete(file);
    const needed = drawn.filter((element) => element.dataset.thumbnail !== 'shown' && !thumbnails.has(element.dataset.file ?? ''));
    if (!needed.some((element) => !asked.has(element.dataset.file ?? ''))) return;
    const items = needed.slice(0, LIMITS.thumbnails).map(({ dataset: { entryId = '', file = '' } }) => ({ entryId, file }));
    for (const { file } of items) asked.add(file);
    request({ type: 'thumbnails', items });
  };
  const layout = () => {
    const width = ul.clientWidth || MIN_CARD_WIDTH;
    const columns = Math.max(1, Math.floor((width + GAP) / (MIN_CARD_WIDTH + GAP)));
    return { columns, cardWidth: (width - GAP * (columns - 1)) / columns };
  };

  /** Cards have one height at one width (prompt and details are clamped): one card measures the row. */
  const measure = (cardWidth: number, sample: GalleryItem) => {
    const probe = card(sample, thumbnails.get(sample.file));
    probe.style.width = `${cardWidth}px`;
    probe.style.visibility = 'hidden';
    ul.appendChild(probe);
    rowHeight = probe.offsetHeight + GAP;
    probe.remove();
  };

  const render = () => {
    scheduled = false;
    empty.hidden = list.total > 0;
    empty.textContent = filter.value.trim() ? t('galleryNoMatch') : t('galleryEmpty');
    const { columns, cardWidth } = layout();
    const sample = list.at(0);
    if (sample && !rowHeight) measure(cardWidth, sample);
    const rows = Math.ceil(list.total / columns);
    ul.style.height = `${Math.max(0, rows * (rowHeight || 1) - GAP)}px`;
    const top = -ul.getBoundingClientRect().top;
    const firstRow = Math.max(0, Math.floor(top / (rowHeight || 1)) - OVERSCAN_ROWS);
    const lastRow = Math.min(rows, Math.ceil((top + window.innerHeight) / (rowHeight || 1)) + OVERSCAN_ROWS);
    const from = firstRow * columns;
    const to = Math.min(list.total, lastRow * columns);
    const shown: GalleryItem[] = [];
    for (let i = from; i < to; i++) {
      const item = list.at(i);
      if (item) shown.push(item);
    }
    const wanted = new Set(shown.map(keyOf));
    for (const [key, element] of cards) {
      if (wanted.has(key)) continue;
      element.remove();
      cards.delete(key);
    }
    // The cards stay in the DOM in the gallery's order: keyboard and screen readers follow it.
    let previous: HTMLElement | undefined;
    for (let i = from; i < to; i++) {
      const item = list.at(i);
      if (!item) continue;
      const key = keyOf(item);
      let element = cards.get(key);
      if (!element) {
        element = card(item, thumbnails.get(item.file));
        cards.set(key, element);
      } else if (drawnItems.get(element) !== item) {
        updateCard(element, item);
      }
      drawnItems.set(element, item);
      const expected = previous ? previous.nextSibling : ul.firstChild;
      if (element !== expected) ul.insertBefore(element, expected);
      previous = element;
      // Only the cards near the screen are drawn: each says where it stands among all the results.
      element.setAttribute('aria-posinset', String(i + 1));
      element.setAttribute('aria-setsize', String(list.total));
      element.style.width = `${cardWidth}px`;
      element.style.transform = `translate(${(i % columns) * (cardWidth + GAP)}px, ${Math.floor(i / columns) * rowHeight}px)`;
    }
    ul.dataset.renderedCards = String(cards.size);
    ul.dataset.total = String(list.total);
    clearTimeout(thumbnailTimer);
    thumbnailTimer = setTimeout(askThumbnails, firstShown ? THUMBNAIL_DELAY_MS : 0);
    const gap = list.missing(from, to, LIMITS.galleryPage);
    if (gap && !pagesAsked.has(gap.start)) {
      pagesAsked.add(gap.start);
      request({ type: 'galleryPage', start: gap.start, count: Math.max(gap.count, Math.min(LIMITS.galleryPage, to - gap.start)) });
    }
    if (!firstShown && (cards.size > 0 || list.total === 0)) {
      firstShown = true;
      // For the e2e measurement: milliseconds from the page's start, and from its HTML's arrival
      // (what the webview itself takes to boot comes before that), to its first gallery page.
      const now = performance.now();
      const html = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
      document.body.dataset.galleryFirstPageMs = String(Math.round(now));
      document.body.dataset.galleryFirstPageAfterHtmlMs = String(Math.round(now - (html?.responseStart ?? 0)));
      post({ type: 'galleryShown', at: Date.now(), cards: cards.size, total: list.total });
    }
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(render);
  };
  // The cards drawn stay until the next frame draws the new list: those still in it are kept (and
  // brought up to date), so the gallery never blinks empty and a focused card keeps the focus.
  const startOver = (page: GalleryPageView) => {
    list.reset(page.total, page.start, page.items);
    pagesAsked.clear();
    schedule();
  };
  window.addEventListener('scroll', schedule, { passive: true });
  new ResizeObserver(() => {
    rowHeight = 0;
    schedule();
  }).observe(ul);

  return {
    section,
    setFilter(query) {
      filter.value = query;
    },
    show: startOver,
    page(page) {
      pagesAsked.delete(page.start);
      // A list out of step with the host's (a change was missed) starts over from this page.
      if (!list.page(page.total, page.start, page.items)) startOver(page);
      else schedule();
    },
    changed(message) {
      if (!list.apply(message.splices, message.total)) {
        startOver({ total: message.total, start: 0, items: [] });
        return;
      }
      schedule();
    },
    thumbnail({ file, ...state }) {
      thumbnails.delete(file);
      thumbnails.set(file, state);
      for (const oldest of thumbnails.keys()) {
        if (thumbnails.size <= THUMBNAILS_KEPT) break;
        thumbnails.delete(oldest);
      }
      for (const [key, element] of cards) if (key.endsWith(`\n${file}`)) setThumbnail(element, state);
    },
  };
}

function card(item: GalleryItem, thumbnail: ThumbnailState | undefined): HTMLElement {
  const run = (action: GalleryAction) => request({ type: 'galleryAction', action, entryId: item.entryId, file: item.file });
  const thumb = el('div', { class: 'thumb', title: t('openHint') });
  // The image opens on a double click, or on Enter while the card itself has the focus.
  thumb.addEventListener('dblclick', () => run('open'));
  // Dragged into a Markdown or HTML editor (with Shift), the editor's drop providers insert an image link.
  const li = el('li', { class: 'card', draggable: 'true', tabindex: '0', 'aria-keyshortcuts': 'Enter' }, [
    thumb,
    el('p', { class: 'prompt' }),
    el('div', { class: 'card-footer' }, [el('p', { class: 'description details' }), buildCardActions(run, item.file)]),
  ]);
  li.dataset.file = item.file;
  li.dataset.entryId = item.entryId;
  updateCard(li, item);
  if (thumbnail) setThumbnail(li, thumbnail);
  li.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter' || event.target !== li) return;
    event.preventDefault();
    run('open');
  });
  li.addEventListener('dragstart', (event) => {
    event.dataTransfer?.setData('text/uri-list', li.dataset.uri ?? '');
    event.dataTransfer?.setData('text/plain', item.file);
  });
  return li;
}

/** Writes what an item says into its card: text as properties, never markup. */
function updateCard(li: HTMLElement, item: GalleryItem): void {
  const details = [item.model, item.isEdit && t('edited'), item.costText && t('cost', item.costText), item.dateText].filter(Boolean).join(' · ');
  const prompt = li.querySelector<HTMLElement>('.prompt');
  if (prompt) {
    prompt.textContent = item.prompt;
    prompt.title = item.name;
  }
  const detailsLine = li.querySelector<HTMLElement>('.details');
  if (detailsLine) {
    detailsLine.textContent = details;
    detailsLine.title = details;
  }
  li.querySelector('.card-actions')?.setAttribute('aria-label', t('actionsFor', item.name));
  li.dataset.uri = item.uri;
  li.title = item.prompt;
  const image = li.querySelector('img');
  if (image) image.alt = item.prompt;
}

function setThumbnail(li: HTMLElement, state: ThumbnailState): void {
  const box = li.querySelector('.thumb');
  if (!box) return;
  // Shown on this card: not asked for again while it is drawn, even once the page's cache let it go.
  li.dataset.thumbnail = 'shown';
  if (state.src) {
    const image = el('img', { src: state.src, decoding: 'async' });
    image.alt = li.title;
    box.replaceChildren(image);
  } else {
    box.replaceChildren(el('span', { class: 'stand-in' }, [state.missing ? t('imageMissing') : (state.standIn ?? '')]));
  }
}
