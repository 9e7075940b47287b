// Issue 25's figure for the studio with 5,000 results, in the real workbench: a journal of 5,000
// results (one generated from the studio, 4,999 appended beside it) is read on the first use after a
// window reload; the first gallery page comes on screen (how long after the page's HTML arrived is
// printed, against the 500 ms budget, but not judged: CI's lanes run side by side, and a clock bound
// fails on a busy machine; the bench's gallery rows judge the host's part as ratios), and scrolling
// to the end keeps a bounded number of cards in the DOM and a bounded heap. The figures are printed
// for the CI log; the README quotes them.
import * as assert from 'assert';
import type { Frame, Page } from 'playwright-core';
import { openStudio } from './studioPage';
import { extensionLogLines, prepareTest, reloadWindow, waitFor } from './workbench';
import { useWorkbench } from './useWorkbench';
import { MANY_RESULTS as RESULTS, manyResult, OLDEST_PROMPT } from './manyResultsWorkbench';

const FIRST_PAGE_BUDGET_MS = 500;
/** Pauses on the way down, each at a tenth more of the list: the thumbnails load, the heap is read. */
const PAUSES = 10;
/** The gallery draws the rows on screen and this many either side (OVERSCAN_ROWS in media/studio/gallery.ts). */
const OVERSCAN_ROWS = 2;
/** The heap after a collection may grow by the results the page has fetched (a few hundred bytes each), not by the cards passed. */
const HEAP_GROWTH_BOUND_MB = 8;
/** DOM nodes of the window after a collection: the cards removed on the way must not stay alive. */
const NODE_GROWTH_BOUND = 300;

/** What the evaluated functions use of the webview's window (the tests compile without the DOM library). */
interface WebviewWindow {
  scrollY: number;
  innerHeight: number;
  scrollBy(x: number, y: number): void;
  requestAnimationFrame(callback: () => void): void;
  performance: {
    timeOrigin: number;
    memory?: { usedJSHeapSize: number };
    getEntriesByType(type: string): { workerStart: number }[];
  };
  document: {
    body: { dataset: Record<string, string | undefined> };
    documentElement: { scrollHeight: number };
    getElementsByTagName(name: string): { length: number };
    querySelector(selector: string): { getBoundingClientRect(): { top: number; bottom: number } } | null;
    querySelectorAll(selector: string): ArrayLike<WebviewElement>;
  };
}
interface WebviewElement {
  textContent: string | null;
  getBoundingClientRect(): { top: number; bottom: number; left: number };
  querySelector(selector: string): (WebviewElement & { complete: boolean; naturalWidth: number }) | null;
}

/** The gallery as drawn now. */
interface GalleryScreen {
  scrollY: number;
  maxScrollY: number;
  innerHeight: number;
  gallery: { top: number; bottom: number };
  cards: { prompt: string; top: number; bottom: number; left: number; thumbnailLoaded: boolean }[];
  /** Elements in the webview's document. */
  elements: number;
  /** performance.memory of the webview's frame: the JS heap of its renderer, between collections. */
  heap: number;
}

function readScreen(frame: Frame): Promise<GalleryScreen> {
  return frame.evaluate(() => {
    const w = globalThis as unknown as WebviewWindow;
    const gallery = w.document.querySelector('#gallery')!.getBoundingClientRect();
    const cards = Array.from(w.document.querySelectorAll('#gallery li.card'), (card) => {
      const box = card.getBoundingClientRect();
      const image = card.querySelector('.thumb img');
      return {
        prompt: card.querySelector('.prompt')?.textContent ?? '',
        top: box.top,
        bottom: box.bottom,
        left: box.left,
        thumbnailLoaded: !!image && image.complete && image.naturalWidth > 0,
      };
    });
    return {
      scrollY: w.scrollY,
      maxScrollY: w.document.documentElement.scrollHeight - w.innerHeight,
      innerHeight: w.innerHeight,
      gallery: { top: gallery.top, bottom: gallery.bottom },
      cards,
      elements: w.document.getElementsByTagName('*').length,
      heap: w.performance.memory?.usedJSHeapSize ?? NaN,
    };
  });
}

/** The scrolling has paused: the screen is covered by drawn cards and every drawn card shows its thumbnail. */
function settled(screen: GalleryScreen): boolean {
  if (!screen.cards.length || !screen.cards.every((c) => c.thumbnailLoaded)) return false;
  const top = Math.min(...screen.cards.map((c) => c.top));
  const bottom = Math.max(...screen.cards.map((c) => c.bottom));
  return top <= Math.max(0, screen.gallery.top) + 1 && bottom >= Math.min(screen.innerHeight, screen.gallery.bottom) - 1;
}

/**
 * Scrolls down to `target` by `step` pixels a frame, as a fast scroll does; returns the most cards
 * in the DOM at any frame and the prompts of the cards drawn on the way.
 */
function scrollInFrames(frame: Frame, target: number, step: number): Promise<{ most: number; drawn: string[] }> {
  return frame.evaluate(
    async ({ target, step }) => {
      const w = globalThis as unknown as WebviewWindow;
      let most = 0;
      const drawn = new Set<string>();
      while (w.scrollY < target - 1) {
        const before = w.scrollY;
        w.scrollBy(0, Math.min(step, target - w.scrollY));
        await new Promise<void>((resolve) => w.requestAnimationFrame(resolve));
        const cards = w.document.querySelectorAll('#gallery li.card .prompt');
        most = Math.max(most, cards.length);
        for (const card of Array.from(cards)) drawn.add(card.textContent ?? '');
        if (w.scrollY === before) break; // the end of the page
      }
      return { most, drawn: [...drawn] };
    },
    { target, step },
  );
}

/** The window's JS heap and DOM nodes after a full collection (the workbench and the webview share one renderer here). */
async function afterCollection(page: Page): Promise<{ heap: number; nodes: number }> {
  const cdp = await page.context().newCDPSession(page);
  try {
    await cdp.send('HeapProfiler.collectGarbage');
    const { usedSize } = await cdp.send('Runtime.getHeapUsage');
    const { nodes } = await cdp.send('Memory.getDOMCounters');
    return { heap: usedSize, nodes };
  } finally {
    await cdp.detach();
  }
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

describe('Image Studio at 5,000 results (e2e)', () => {
  const opened = useWorkbench('many-results', { timeoutMs: 240_000 });

  it('shows the first page (its time printed) and scrolls to the end with bounded cards and heap', async function () {
    // Its waits (the first screen, then each tenth of the scroll with its thumbnails, up to 90 s each)
    // add up past mocha's default 120 s beside a loaded CI run; the test waits, it does not time.
    this.timeout(900_000);
    await prepareTest(opened(), { key: 'unlimited' });
    const { page } = opened();
    // The window may have shown the results already (Find's suite): reloaded, it reads the journal on
    // its first use, when the studio asks for its first page.
    await reloadWindow(opened());
    const frame = await openStudio(page);
    await frame.locator('#gallery li.card').first().waitFor({ state: 'attached', timeout: 30_000 });

    // How long the first page took: from the page's HTML (the gate), and from the panel's creation
    // (the extension's log), with what VS Code's webview does before the HTML: its frame starts, its
    // service worker gets ready, the page's document starts, the worker answers the document's request.
    const times = await frame.evaluate(() => {
      const w = globalThis as unknown as WebviewWindow;
      const navigation = w.performance.getEntriesByType('navigation')[0];
      const { galleryFirstPageMs, galleryFirstPageAfterHtmlMs } = w.document.body.dataset;
      return {
        documentStart: w.performance.timeOrigin,
        fromDocument: Number(galleryFirstPageMs),
        fromHtml: Number(galleryFirstPageAfterHtmlMs),
        serviceWorker: Math.round(navigation?.workerStart ?? NaN),
      };
    });
    const webviewStart = await frame.parentFrame()!.evaluate(() => (globalThis as unknown as WebviewWindow).performance.timeOrigin);
    const shown = await waitFor(
      () => extensionLogLines(opened(), new RegExp(`the first gallery page \\(\\d+ of ${RESULTS} results\\) was shown (\\d+) ms after the panel opened`)).pop(),
      10_000,
      "the extension's log of the first gallery page",
    );
    const fromPanel = Number(/was shown (\d+) ms/.exec(shown)![1]);
    const panelAt = times.documentStart + times.fromDocument - fromPanel;
    const opening = extensionLogLines(opened(), new RegExp(`Results journal .*: ${RESULTS} results, .* (\\d+) ms$`)).pop() ?? '';
    console.log(
      `      ${RESULTS} results: first page ${times.fromHtml} ms after the page's HTML arrived (budget ${FIRST_PAGE_BUDGET_MS} ms), ` +
        `${fromPanel} ms after the panel opened (log: webview frame at ${Math.round(webviewStart - panelAt)} ms, page document at ` +
        `${Math.round(times.documentStart - panelAt)} ms, answered by the service worker ${times.serviceWorker} ms later); journal read in ${/(\d+) ms$/.exec(opening)?.[1] ?? '?'} ms`,
    );
    assert.ok(times.fromHtml > 0, `the page did not time its first gallery page: ${times.fromHtml}`);

    const top = await waitFor(
      async () => {
        const screen = await readScreen(frame);
        return settled(screen) && screen;
      },
      90_000,
      'the first screen of cards with their thumbnails',
    );
    assert.strictEqual(top.cards[0]?.prompt, manyResult(RESULTS - 1).prompt, 'the first card is the newest result');
    // The most cards the gallery should draw, from its geometry: the rows on screen and the overscan either side.
    const columns = new Set(top.cards.map((c) => Math.round(c.left))).size;
    const rowPitch = Math.min(...top.cards.map((c) => c.top).filter((t) => t > top.cards[0]!.top + 1)) - top.cards[0].top;
    const cardBound = columns * (Math.ceil(top.innerHeight / rowPitch) + 1 + 2 * OVERSCAN_ROWS);
    const atTop = await afterCollection(page);

    // Down to the end: a fast scroll, by steps small enough that every row is drawn whose items have
    // arrived (a page that arrives after the scroll has moved on is not drawn), pausing at each tenth.
    const step = top.innerHeight + 2 * rowPitch;
    const samples: GalleryScreen[] = [top];
    let mostCards = top.cards.length;
    const drawn = new Set(top.cards.map((c) => c.prompt));
    for (let pause = 1; pause <= PAUSES; pause++) {
      const target = Math.round((top.maxScrollY * pause) / PAUSES);
      const moved = await scrollInFrames(frame, target, step);
      assert.ok(moved.most <= cardBound, `${moved.most} cards in the DOM on the way to ${target} px, more than the ${cardBound} the screen needs`);
      mostCards = Math.max(mostCards, moved.most);
      for (const prompt of moved.drawn) drawn.add(prompt);
      const screen = await waitFor(
        async () => {
          const s = await readScreen(frame);
          return settled(s) && s;
        },
        // Generous: the thumbnails are made by a worker, slower beside CI's other lanes (30 s was not enough once).
        90_000,
        `the cards at ${target} px to show their thumbnails`,
      );
      mostCards = Math.max(mostCards, screen.cards.length);
      samples.push(screen);
    }
    const end = samples[samples.length - 1]!;
    const atEnd = await afterCollection(page);
    const heaps = samples.map((s) => s.heap);
    console.log(
      `      scrolling to the end (${top.maxScrollY} px, ${PAUSES} pauses): ${drawn.size} cards drawn on the way, at most ${mostCards} in the DOM (bound ${cardBound}: ${columns} columns), ` +
        `${Math.max(...samples.map((s) => s.elements))} elements in the webview; JS heap after a collection ${mb(atTop.heap)} MB at the top, ${mb(atEnd.heap)} MB at the end ` +
        `(between collections ${mb(Math.min(...heaps))}–${mb(Math.max(...heaps))} MB); DOM nodes of the window ${atTop.nodes} → ${atEnd.nodes}`,
    );
    assert.ok(mostCards <= cardBound, `${mostCards} cards in the DOM, more than the ${cardBound} the screen needs`);
    assert.ok(end.scrollY >= end.maxScrollY - 1, `stopped at ${end.scrollY} of ${end.maxScrollY} px`);
    assert.strictEqual(end.cards[end.cards.length - 1]?.prompt, OLDEST_PROMPT, 'the last card is the oldest result');
    assert.ok(atEnd.heap - atTop.heap <= HEAP_GROWTH_BOUND_MB * 1024 * 1024, `the heap grew from ${mb(atTop.heap)} to ${mb(atEnd.heap)} MB`);
    assert.ok(atEnd.nodes - atTop.nodes <= NODE_GROWTH_BOUND, `DOM nodes grew from ${atTop.nodes} to ${atEnd.nodes}`);
  });
});
