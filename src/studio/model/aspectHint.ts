// The studio's "keeps the shape" hint: for an edit without a chosen aspect ratio, the ratio the
// edit will ask for and why ("matches photo.jpg, 4:3"). The first reference is checked like any other.
import { type ImageModel } from '../../core/gateway/types';
import { aspectDefaultFor, leavesAspectOpen } from '../../jobs/editShape';
import { checkReference } from './files';
import { type AspectDefaultView, type FormValues } from '../protocol/protocol';

export async function aspectHint(form: FormValues, models: readonly ImageModel[]): Promise<AspectDefaultView | undefined> {
  const first = form.references[0];
  const model = models.find((m) => m.id === form.model);
  if (!first || !model || !leavesAspectOpen({ aspect_ratio: form.aspect_ratio, size: form.size })) return undefined;
  const check = await checkReference(first);
  if (!check.ok) return undefined;
  const found = await aspectDefaultFor(model, check.path);
  return found && { ratio: found.ratio, why: found.why };
}
