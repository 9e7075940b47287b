// The keyboard of a small menu (WAI-ARIA menu button pattern), as a pure function of the key and
// where the focus is: the card's More actions menu (cardActions.ts) applies what it returns.

export type MenuKeyOutcome =
  /** Focus the item at `index`. */
  | { kind: 'focus'; index: number }
  /** Carry out the focused item, then close. */
  | { kind: 'activate' }
  /** Close; `returnFocus`: back to the button that opened the menu (Escape), or let the key move on (Tab). */
  | { kind: 'close'; returnFocus: boolean };

/** What `key` does in a menu of `count` items whose item `index` has the focus; undefined: nothing (the key is left alone). */
export function menuKey(key: string, index: number, count: number): MenuKeyOutcome | undefined {
  if (count <= 0) return key === 'Escape' || key === 'Tab' ? { kind: 'close', returnFocus: key === 'Escape' } : undefined;
  // No item focused (-1): ArrowDown goes to the first, ArrowUp to the last.
  const at = index < 0 ? -1 : Math.min(index, count - 1);
  switch (key) {
    case 'ArrowDown':
      return { kind: 'focus', index: (at + 1) % count };
    case 'ArrowUp':
      return { kind: 'focus', index: at < 0 ? count - 1 : (at - 1 + count) % count };
    case 'Home':
    case 'PageUp':
      return { kind: 'focus', index: 0 };
    case 'End':
    case 'PageDown':
      return { kind: 'focus', index: count - 1 };
    case 'Enter':
    case ' ':
      return { kind: 'activate' };
    case 'Escape':
      return { kind: 'close', returnFocus: true };
    case 'Tab':
      return { kind: 'close', returnFocus: false };
    default:
      return undefined;
  }
}

/** The item the menu opens on: the last for ArrowUp, else the first. */
export function openingIndex(key: string, count: number): number {
  return key === 'ArrowUp' ? Math.max(0, count - 1) : 0;
}
