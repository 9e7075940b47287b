// The results of this workspace: thumbnail (the saved file through asWebviewUri), prompt, model,
// cost and date, and the actions, which the host carries out on files its history knows.
import type { GalleryAction, GalleryItem } from '../../src/studio/protocol';
import { el, replaceChildren } from './dom';
import { request, t } from './host';

const ACTIONS: { action: GalleryAction; label: string }[] = [
  { action: 'open', label: 'open' },
  { action: 'reveal', label: 'reveal' },
  { action: 'copyPath', label: 'copyPath' },
  { action: 'insertLink', label: 'insertLink' },
  { action: 'useAsReference', label: 'useAsReference' },
  { action: 'regenerate', label: 'regenerate' },
  { action: 'delete', label: 'delete' },
];

export function buildGallery(): { section: HTMLElement; render(items: GalleryItem[]): void } {
  const list = el('ul', { class: 'gallery', id: 'gallery' });
  const empty = el('p', { class: 'description' }, [t('galleryEmpty')]);
  const section = el('section', { class: 'results', 'aria-labelledby': 'gallery-heading' }, [el('h2', { id: 'gallery-heading' }, [t('gallery')]), empty, list]);
  return {
    section,
    render(items) {
      empty.hidden = items.length > 0;
      replaceChildren(list, items.map(card));
    },
  };
}

function card(item: GalleryItem): HTMLElement {
  const image = el('img', { src: item.src, loading: 'lazy' });
  image.alt = item.prompt; // a property, never markup
  const details = [item.model, item.isEdit && t('edited'), item.costText && t('cost', item.costText), item.dateText].filter(Boolean).join(' · ');
  const buttons = ACTIONS.map(({ action, label }) => {
    const button = el('button', { type: 'button', class: `secondary small action-${action}`, 'data-action': action }, [t(label)]);
    button.addEventListener('click', () => request({ type: 'galleryAction', action, entryId: item.entryId, file: item.file }));
    return button;
  });
  // Dragged into a Markdown or HTML editor (with Shift), the editor's drop providers insert an image link.
  const li = el('li', { class: 'card', draggable: 'true' }, [
    el('div', { class: 'thumb' }, [image]),
    el('p', { class: 'prompt', title: item.name }, [item.prompt]),
    el('p', { class: 'description' }, [details]),
    el('div', { class: 'card-actions', role: 'group', 'aria-label': t('actionsFor', item.name) }, buttons),
  ]);
  li.addEventListener('dragstart', (event) => {
    event.dataTransfer?.setData('text/uri-list', item.uri);
    event.dataTransfer?.setData('text/plain', item.file);
  });
  return li;
}
