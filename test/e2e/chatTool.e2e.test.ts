// The chat tool's confirmation as a person sees it: a fixture extension (test/fixtures/tool-invoker)
// invokes gatewayImages_generateImage outside a chat request, as an agent would, and VS Code shows
// the tool's confirmation in its dialog. It must name the model, the prompt and the reservation;
// nothing is charged before the person confirms.
import * as assert from 'assert';
import { prepareTest, runCommand, screenshot, waitForNotification } from './workbench';
import { useWorkbench } from './useWorkbench';

describe('Chat tool confirmation (e2e)', () => {
  const opened = useWorkbench('shared'); // with the tool-invoker fixture

  it('shows model, prompt and reservation before anything is charged; confirming generates', async () => {
    await prepareTest(opened(), { key: 'unlimited' });
    const { page, emulator } = opened();
    const paidBefore = emulator.state.requests.filter((r) => r.paid).length;

    await runCommand(page, 'Test: Invoke the Generate Image Tool');
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 30_000 });
    const text = (await dialog.innerText()).replace(/\s+/g, ' ');
    await screenshot(page, 'chat-tool-confirmation');
    assert.match(text, /Cancel/, 'the dialog offers no way out');
    assert.match(text, /Generate 2 images with aurora-1\?/, text);
    assert.match(text, /Model: ?aurora-1/, text);
    assert.match(text, /Prompt: ?A red kite over the sea/, text);
    // aurora-1 costs 2.50–4.00 per image: 2 images reserve 8.00, expected 5.00–8.00.
    assert.match(text, /reserves ₽ ?8[.,]00 before generating.*expected ₽ ?5[.,]00 – ₽ ?8[.,]00/, text);
    assert.strictEqual(emulator.state.requests.filter((r) => r.paid).length, paidBefore, 'charged before the confirmation');

    await dialog.locator('.monaco-button', { hasText: 'Yes' }).click();
    await waitForNotification(opened(), /Tool result: Generated 2 images with aurora-1/, 30_000);
    assert.strictEqual(emulator.state.requests.filter((r) => r.paid).length, paidBefore + 1, 'one paid request after the confirmation');
  });
});
