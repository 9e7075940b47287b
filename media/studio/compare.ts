// The comparison grid: one card per model with its images, actual cost, time and its own error;
// Cancel stops all; "Use this model" makes the winner the default. The "Compare models…" button
// sends the form's prompt, options and references; the host asks which models.
import type { ComparisonView, CompareEntryView } from '../../src/studio/protocol/compareProtocol';
import type { FormValues } from '../../src/studio/protocol/protocol';
import { el, replaceChildren } from './dom';
import { post, request, t } from './host';

export interface ComparisonGrid {
  section: HTMLElement;
  render(view: ComparisonView | undefined): void;
}

export function buildComparison(formValues: () => FormValues, useModel: (model: string) => void): ComparisonGrid {
  const start = el('button', { type: 'button', class: 'secondary', id: 'compare-models' }, [t('compareButton')]);
  start.addEventListener('click', () => request({ type: 'compare', form: formValues() }));
  const cancel = el('button', { type: 'button', class: 'secondary', id: 'compare-cancel', hidden: true }, [t('compareCancel')]);
  cancel.addEventListener('click', () => post({ type: 'cancelCompare' }));
  const summary = el('p', { class: 'description', id: 'compare-summary' });
  const list = el('ul', { class: 'compare-grid', id: 'compare-grid' });
  const section = el('section', { class: 'comparison', 'aria-labelledby': 'compare-heading' }, [
    el('h2', { id: 'compare-heading' }, [t('compareHeading')]),
    el('p', { class: 'description' }, [t('compareHint')]),
    el('div', { class: 'inline' }, [start, cancel]),
    summary,
    list,
  ]);
  return {
    section,
    render(view) {
      start.disabled = !!view?.running;
      cancel.hidden = !view?.running;
      summary.textContent = view ? `${view.prompt} — ${view.estimateText}` : '';
      replaceChildren(
        list,
        (view?.entries ?? []).map((entry) => card(entry, useModel)),
      );
    },
  };
}

function card(entry: CompareEntryView, useModel: (model: string) => void): HTMLElement {
  const images = entry.images.map((image) => {
    const img = el('img', { src: image.src, loading: 'lazy' });
    img.alt = `${entry.model}: ${image.name}`;
    return el('div', { class: 'thumb' }, [img]);
  });
  const facts = [entry.costText && t('cost', entry.costText), entry.timeText].filter(Boolean).join(' · ');
  const use = el('button', { type: 'button', class: 'small use-model' }, [t('compareUseModel')]);
  use.hidden = entry.status !== 'done';
  use.addEventListener('click', () => {
    useModel(entry.model);
    post({ type: 'useModel', model: entry.model });
  });
  return el('li', { class: `card compare-card status-${entry.status}`, 'data-model': entry.model }, [
    el('h3', {}, [entry.model]),
    el('p', { class: 'description compare-status' }, [t(`compareStatus_${entry.status}`)]),
    ...(images.length ? images : [el('div', { class: 'thumb empty' }, [entry.status === 'running' || entry.status === 'waiting' ? '…' : '—'])]),
    el('p', { class: 'description' }, [facts]),
    entry.error ? el('p', { class: 'error', role: 'alert' }, [entry.error]) : undefined,
    use,
  ]);
}
