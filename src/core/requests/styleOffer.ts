// Which styles a command offers, and how: the project's when it has a styles file, else the
// built-in starter styles (never beside a project's, never in place of one); a Style step of its
// own only where the project has styles, else a Style row of the review set to "No style"; the
// last style used in the workspace picked first. Pure: no vscode import.
import { isStarterSource } from './starterStyles';
import { styleNames, type StylesSource } from './styleFile';

/**
 * The styles on offer: the project's whenever it has a styles file (even one with no style, or one
 * that needs fixing: starters would hide it), else the starters (`starters()`, made only then) when
 * the catalog can make any.
 */
export function stylesOnOffer(project: StylesSource | undefined, starters: () => StylesSource): StylesSource | undefined {
  if (project) return project;
  const builtIn = starters();
  return builtIn.styles.size ? builtIn : undefined;
}

/**
 * Whether a command asks for the style in a step of its own, before the model: only when the
 * project's file has styles (or a problem to show). Without, the style is a row of the review.
 */
export function asksStyleFirst(project: StylesSource | undefined): boolean {
  if (!project || isStarterSource(project)) return false;
  return styleNames(project).length > 0 || project.fileError !== undefined;
}

/**
 * The style a style picker starts on: the last one used in this workspace while it is still on
 * offer (a style since removed, or a starter once the project has its own file, is not); else none.
 */
export function preselectedStyle(last: string | undefined, offered: StylesSource | undefined): string | undefined {
  if (!last || !offered) return undefined;
  return styleNames(offered).includes(last) ? last : undefined;
}

/**
 * The styles a review's Style row lists for a chosen model: every project style (a style made for
 * another model still applies its words and options), but only the starters this model makes (a
 * starter is resolved with the chosen model when it can: starterSource's `preferred`). Without a
 * model (a comparison: each model gets the style), every style on offer.
 */
export function stylesForModel(offered: StylesSource | undefined, model?: string): string[] {
  if (!offered) return [];
  if (!isStarterSource(offered) || model === undefined) return styleNames(offered);
  return [...offered.styles].filter(([, style]) => style.model === model).map(([name]) => name);
}

/**
 * The person's options once the style of a review changes: what they chose in this review is
 * kept; a style decides the rest, and without one the choices remembered for the model come back.
 */
export function optionsAfterStyleChange<T extends object>(current: T, chosenHere: ReadonlySet<keyof T>, styled: boolean, remembered: T): T {
  const own = Object.fromEntries(Object.entries(current).filter(([key]) => chosenHere.has(key as keyof T))) as T;
  return styled ? own : { ...remembered, ...own };
}
