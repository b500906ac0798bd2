/**
 * The per-test setup of the contract suites: every test gets a freshly opened adapter and cleans
 * it up after, so no test sees what another wrote.
 */
import { afterEach, beforeEach } from 'vitest';

/**
 * Opens with `open` before each test (handing the result to `onOpen`, which keeps the parts the
 * tests use) and calls its `cleanup()` after; returns what the current test opened.
 */
export function openForEachTest<O extends { cleanup(): Promise<void> }>(open: () => Promise<O>, onOpen: (opened: O) => void = () => undefined): () => O {
  let opened: O | undefined;
  beforeEach(async () => {
    opened = await open();
    onOpen(opened);
  });
  afterEach(async () => {
    await opened?.cleanup();
    opened = undefined;
  });
  return () => {
    if (!opened) throw new Error('openForEachTest: nothing is open outside a test');
    return opened;
  };
}
