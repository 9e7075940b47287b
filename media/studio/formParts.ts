// Pieces of the form that only render what they are given: the model's summary line, its
// provider parameters, the estimate, the account line and the reference thumbnails. The form
// (form.ts) keeps the state and decides when they are redrawn.
import type { AccountView, EstimateView, ModelInfo, ReferenceView } from '../../src/studio/protocol/protocol';
import { el, replaceChildren } from './dom';
import { t, tn } from './host';

/** "Provider: … · ₽… per image · up to 4 per request · edits up to 1 image". */
export function modelSummary(model: ModelInfo): string {
  const edits = model.maxReferences > 0 ? tn('editsUpTo', model.maxReferences, model.maxReferences) : t('noEditing');
  return [
    model.provider && t('provider', model.provider),
    t('pricePerImage', model.priceText),
    t('maxN', model.maxN),
    edits,
    !model.supportsGeneration && t('generationOnlyWithReferences'),
  ]
    .filter(Boolean)
    .join(' · ');
}

/** One text input per passthrough parameter of the model; `onInput` gets the name and the new value. */
export function renderProviderParams(
  container: HTMLElement,
  names: readonly string[],
  values: Record<string, string>,
  onInput: (name: string, value: string) => void,
): void {
  const inputs = names.map((name, i) => {
    const id = `param-${i}`;
    const input = el('input', { id, type: 'text', maxlength: '2000' });
    input.value = values[name] ?? '';
    input.addEventListener('input', () => onInput(name, input.value));
    return el('div', { class: 'field' }, [el('label', { for: id }, [name]), input]);
  });
  replaceChildren(container, inputs.length ? [el('h3', {}, [t('providerParameters')]), el('div', { class: 'grid' }, inputs)] : []);
}

/** The reservation, the expected cost and what is left after, as a definition list. */
export function renderEstimate(list: HTMLDListElement, estimate: EstimateView | undefined): void {
  const row = (label: string, value: string | undefined) => [el('dt', {}, [label]), el('dd', {}, [value ?? t('unknown')])];
  replaceChildren(
    list,
    estimate
      ? [
          ...row(t('reservation'), estimate.reservationText),
          ...row(t('expected'), estimate.expectedText),
          ...row(t('balanceAfter'), estimate.balanceAfterText),
          ...(estimate.budgetAfterText ? row(t('budgetAfter'), estimate.budgetAfterText) : []),
        ]
      : [],
  );
}

/** "Balance: … · Budget: …", or what the account is doing (switching keys, loading, offline). */
export function accountLine(account: AccountView): string {
  const parts = [account.balanceText && `${t('balance')}: ${account.balanceText}`, account.budgetText && `${t('budget')}: ${account.budgetText}`].filter(
    Boolean,
  );
  return account.switchingText ?? (parts.length ? parts.join(' · ') : t('accountStatus', account.status));
}

/** The chosen references as thumbnails, each with a remove button. */
export function renderReferenceList(list: HTMLUListElement, references: readonly ReferenceView[], onRemove: (reference: ReferenceView) => void): void {
  replaceChildren(
    list,
    references.map((ref) => {
      const remove = el(
        'button',
        { type: 'button', class: 'icon remove', 'aria-label': t('removeReference', ref.name), title: t('removeReference', ref.name) },
        ['×'],
      );
      remove.addEventListener('click', () => onRemove(ref));
      const image = el('img', { src: ref.src, alt: '' });
      image.alt = ref.name;
      return el('li', {}, [image, el('span', { class: 'name' }, [ref.name]), remove]);
    }),
  );
}
