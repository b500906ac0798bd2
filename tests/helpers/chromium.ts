/**
 * Debian's headless Chromium driven through playwright-core, as the dashboard tests use it: a fresh
 * profile, nothing fetched in the background, the given viewport.
 */
import { chromium } from 'playwright-core';
import type { BrowserContext } from 'playwright-core';

export function launchChromium(profileDir: string, viewport: { width: number; height: number }): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update',
      '--disable-sync'],
    viewport,
  });
}
