/**
 * The ops dashboard in headless Chromium following a webhook-triggered refresh (embedded
 * profile: the in-process debounce and delivery): a registered git source appears with no
 * refresh, a signed push refreshes it, and the page shows the refresh completing with its commit,
 * the palace statistics at the new drawer count, the job-end notification delivered and the
 * `job.finished` event in the logstream tail. A screenshot goes to tests/artifacts/.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.js';
import type { RegisteredSource } from '../../stores/ports/registered-sources.js';
import type { Listener, LocalRepo } from '../helpers/hooks.js';
import { githubPush, listener, localRepo, proseFiles, validSignature } from '../helpers/hooks.js';
import type { ApiHarness } from './api-harness.js';
import { startApi, tempDir } from './api-harness.js';

const ARTIFACTS = path.resolve(import.meta.dirname, '..', 'artifacts');
const SECRET = 'dashboard-webhook-secret';
const FILES = 120;

describe('ops dashboard following a webhook-triggered refresh', () => {
  let h: ApiHarness;
  let browser: BrowserContext;
  let repo: LocalRepo;
  let sink: Listener;
  let root: string;

  beforeAll(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    root = tempDir('dash-hooks');
    repo = await localRepo(path.join(root, 'repo'));
    sink = await listener();
    h = await startApi({
      env: { MEMPALACE_ALLOWED_ROOTS: root, MEMPALACE_WEBHOOK_SECRET: SECRET, MEMPALACE_REFRESH_DEBOUNCE_MS: '1000', MEMPALACE_NOTIFY_URLS: sink.url },
    });
    browser = await launchChromium(tempDir('chromium-profile'), { width: 1280, height: 1400 });
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await sink?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('shows the source, its refresh to completion, the updated drawer count and the delivered notification', async () => {
    const first = await repo.commit(proseFiles('notes', 3, 'seed'), 'seed');
    const added = await h.call('/v1/sources', { token: 'tok-alice', body: { location: repo.url, ref: 'main', wing: 'followed' } });
    expect(added.status).toBe(201);
    const source = (await added.json()) as RegisteredSource;

    const page = await browser.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    await page.goto(`${h.url}/dashboard/`);
    await page.getByLabel('Read token').fill('tok-reader');
    await page.getByLabel('Read token').press('Enter');
    await expect.poll(() => page.locator('#connection').textContent(), { timeout: 10_000 }).toContain('Connected');
    const row = page.locator(`#sources tr[data-source-id="${source.source_id}"]`);
    await expect.poll(() => row.locator('td').nth(3).getAttribute('data-refresh-state'), { timeout: 15_000 }).toBe('never');
    await expect.poll(() => page.locator('#stat-drawers').textContent(), { timeout: 15_000 }).toBe('0');

    const head = await repo.commit(proseFiles('notes', FILES, 'bulk'), 'bulk');
    for (const sha of [first, head]) {
      const d = githubPush(repo.url, sha, SECRET);
      const res = await h.call('/v1/hooks/git', { token: null, rawBody: d.rawBody, headers: d.headers });
      expect(res.status).toBe(202);
    }
    await expect.poll(() => row.locator('td').nth(3).getAttribute('data-refresh-state'), { timeout: 240_000, interval: 250 }).toBe('completed');
    expect(await row.locator('td').nth(4).textContent()).toBe(head.slice(0, 10));

    const mines = (await h.runtime.jobs.list(20)).filter((j) => j.kind === 'mine');
    expect(mines).toHaveLength(1);
    expect(mines[0]!.files_mined).toBe(FILES + 3);
    const drawers = await h.runtime.stores.drawers.count({ wing: 'followed' });
    expect(drawers).toBe(mines[0]!.drawers_written);
    expect(drawers).toBeGreaterThan(0);
    await expect.poll(() => page.locator('#stat-drawers').textContent(), { timeout: 10_000 }).toBe(String(drawers));
    expect(await row.locator('td').nth(5).textContent()).toBe(String(drawers));
    // The job table's columns: job, kind, source, wing, trigger, state, …
    const jobRow = page.locator(`tr[data-job-id="${mines[0]!.job_id}"] td`);
    await expect.poll(() => jobRow.nth(5).textContent(), { timeout: 10_000 }).toBe('completed');
    expect(await jobRow.nth(3).textContent()).toBe('followed');
    expect(await jobRow.nth(4).textContent()).toBe('webhook');

    // The job-end notification: delivered (signed with the webhook secret, the default key) and shown.
    const delivery = page.locator(`#deliveries tr[data-delivery-id="job-${mines[0]!.job_id}-completed"]`);
    await expect.poll(() => delivery.locator('td').nth(2).textContent(), { timeout: 30_000 }).toBe('delivered');
    const received = sink.received.filter((n) => JSON.parse(n.body).job_id === mines[0]!.job_id);
    expect(received).toHaveLength(1);
    expect(validSignature(received[0]!, SECRET)).toBe(true);
    expect(await page.locator('#dead-letters').textContent()).toBe('No dead letters.');
    await expect.poll(() => page.locator('#logstream li').last().textContent(), { timeout: 10_000 }).toContain('job.finished mempalace [ops/jobs]');

    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-sources.png'), fullPage: true });
    expect(consoleErrors, consoleErrors.join('\n')).toEqual([]);
  });
});
