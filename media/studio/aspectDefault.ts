// Shows, on the aspect ratio's "default" option, the ratio an edit will ask for and why
// ("default (matches photo.jpg, 4:3)"). Choosing another ratio overrides it.
import type { AspectDefaultView } from '../../src/studio/protocol/protocol';
import { t } from './host';

export function showAspectDefault(select: HTMLSelectElement, view: AspectDefaultView | undefined): void {
  const first = select.options[0];
  if (!first || first.value !== '') return;
  first.textContent = view ? t('aspectDefaultOption', view.why) : t('defaultOption');
  select.title = view ? view.why : '';
}
