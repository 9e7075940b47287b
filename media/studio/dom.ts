// Building DOM without HTML strings: text is always a Text node or a property, never markup.

type Child = Node | string | false | null | undefined;

/** An element with attributes (never event handlers) and children; strings become Text nodes. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | boolean | undefined> = {},
  children: Child[] = [],
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false || /^on/i.test(name)) continue;
    element.setAttribute(name, value === true ? '' : value);
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === false || child === null || child === undefined) continue;
    parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/** Replaces all children of `parent`. */
export function replaceChildren(parent: Element, children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A <select> whose first option is "default" (value ''), then `values`. */
export function fillSelect(select: HTMLSelectElement, values: readonly string[], current: string | undefined, defaultLabel?: string): void {
  select.replaceChildren();
  if (defaultLabel !== undefined) select.appendChild(option('', defaultLabel));
  for (const value of values) select.appendChild(option(value, value));
  select.value = current !== undefined && values.includes(current) ? current : defaultLabel !== undefined ? '' : (values[0] ?? '');
}

function option(value: string, label: string): HTMLOptionElement {
  const element = document.createElement('option');
  element.value = value;
  element.textContent = label;
  return element;
}
