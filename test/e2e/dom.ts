// The DOM as page functions see it: the project compiles without the DOM lib.

export /** Minimal DOM shape used inside page functions (the project compiles without the DOM lib). */
interface El {
  id: string;
  innerText: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): El | null;
  getBoundingClientRect(): { width: number; height: number };
}
