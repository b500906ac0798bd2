/**
 * The ops dashboard in headless Chromium (Debian's package, driven by playwright-core): a reader
 * connects with a read token using only the keyboard, a mine starts over REST, and the job's
 * progress bar advances live to completion while its row names its source, wing and trigger and
 * draws its rate chart; the palace statistics, the search and tool latency and error charts,
 * engine health and the logstream tail update too. A screenshot goes to tests/artifacts/.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.js';
import { generateProject } from '../fixtures/generate-project.js';
import type { ApiHarness } from './api-harness.js';
import { startApi, tempDir } from './api-harness.js';

const ARTIFACTS = path.resolve(import.meta.dirname, '..', 'artifacts');
// Progress moves per batch of 64 files: 150 files give three steps before completion.
const FILES = 150;

describe('ops dashboard in a browser', () => {
  let h: ApiHarness;
  let browser: BrowserContext;
  let project: string;

  beforeAll(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    h = await startApi();
    project = path.join(tempDir('src'), 'dashboard-project');
    await generateProject(project, FILES, 21);
    browser = await launchChromium(tempDir('chromium-profile'), { width: 1280, height: 1000 });
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('shows a running mine advancing to completion, live', async () => {
    const page = await browser.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    await page.goto(`${h.url}/dashboard/`);
    expect(await page.title()).toBe('MemPalace — operations');

    // A wrong token is refused and said so; then the read token, typed and submitted by keyboard.
    await page.getByLabel('Read token').fill('tok-wrong');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#connection').textContent()).toContain('Not connected');
    await page.getByLabel('Read token').fill('tok-reader');
    await page.getByLabel('Read token').press('Enter');
    await expect.poll(() => page.locator('#connection').textContent(), { timeout: 10_000 }).toContain('Connected');
    // Every engine is listed; the stores must be up (the embedder may be slow on a loaded machine).
    await expect.poll(() => page.locator('#health li').count(), { timeout: 30_000 }).toBe(7);
    for (const store of ['drawers', 'graph', 'logstream', 'locks', 'job_store', 'job_engine']) {
      await expect.poll(() => page.locator(`#health li[data-engine="${store}"]`).getAttribute('class'), { timeout: 30_000 }).toBe('up');
    }

    const writer = await h.mcpClient('tok-alice');
    await writer.callTool({ name: 'mempalace_event_append',
      arguments: { type: 'note', stream: 'project/dashboard', room: 'general', from_agent: 'alice', body: 'mining the dashboard project' } });
    await expect.poll(() => page.locator('#logstream li').last().textContent(), { timeout: 10_000 }).toContain('mining the dashboard project');

    const start = await h.call('/v1/jobs/mine', { token: 'tok-alice', body: { source: project, wing: 'dash' } });
    expect(start.status).toBe(202);
    const { job_id: jobId } = (await start.json()) as { job_id: string };
    const bar = page.locator(`progress[data-job-id="${jobId}"]`);
    await bar.waitFor({ timeout: 10_000 });

    const row = page.locator(`tr[data-job-id="${jobId}"]`);
    const sparkline = row.locator('svg.sparkline');
    const samples: { value: number; max: number; state: string }[] = [];
    const liveRatePoints: number[] = [];
    let midway = false;
    const deadline = Date.now() + 180_000;
    for (;;) {
      const s = await bar.evaluate((el) => ({ value: el.hasAttribute('value') ? Number((el as unknown as { value: number }).value) : -1,
        max: Number(el.getAttribute('max') ?? 1), state: el.getAttribute('data-state') ?? '' })
      );
      samples.push(s);
      if (s.state === 'running' && (await sparkline.count()) > 0) liveRatePoints.push(Number(await sparkline.getAttribute('data-points')));
      if (s.state !== 'running' || Date.now() > deadline) break;
      if (!midway && s.value >= FILES / 3) {
        midway = true;
        await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-running.png'), fullPage: true });
      }
      await page.waitForTimeout(150);
    }
    const final = samples.at(-1)!;
    expect(final.state).toBe('completed');
    expect(final.max).toBe(FILES);
    expect(final.value).toBe(FILES);
    const running = samples.filter((s) => s.state === 'running' && s.value >= 0);
    const distinct = [...new Set(running.map((s) => s.value))];
    // At least three positions over time (e.g. 0 → one batch → full), one of them partial: the
    // bar advanced live, not only at the end.
    expect(new Set([...distinct, final.value]).size, JSON.stringify(distinct)).toBeGreaterThanOrEqual(3);
    expect(distinct.some((v) => v > 0 && v < FILES), JSON.stringify(distinct)).toBe(true);
    for (let i = 1; i < running.length; i++) expect(running[i]!.value).toBeGreaterThanOrEqual(running[i - 1]!.value);

    const drawers = await h.runtime.stores.drawers.count();
    await expect.poll(() => page.locator('#stat-drawers').textContent(), { timeout: 10_000 }).toBe(String(drawers));
    await expect.poll(() => row.locator('td.state-completed').textContent()).toBe('completed');
    expect(await row.locator('td').nth(1).textContent()).toBe('mine (projects)');
    expect(await row.locator('td.source').textContent()).toBe(fs.realpathSync(project));
    expect(await row.locator('td.wing').textContent()).toBe('dash');
    expect(await row.locator('td.trigger').textContent()).toBe('user');
    expect(await row.locator('td').nth(7).textContent()).toBe(`${FILES} / ${FILES}`);
    // The rate chart was drawn while the job ran, and keeps one point per progress record (scan, three batches, the end).
    expect(liveRatePoints.length, 'a rate chart while running').toBeGreaterThan(0);
    expect(Number(await sparkline.getAttribute('data-points'))).toBeGreaterThanOrEqual(3);
    expect(await sparkline.locator('path.line').getAttribute('d')).toMatch(/^M[\d.]+ [\d.]+ (L[\d.]+ [\d.]+ ?){2,}$/);
    expect(await sparkline.getAttribute('aria-label')).toMatch(/^Rate of mine job \w{8}: [\d.]+ files\/s now, peak [\d.]+ files\/s/);
    // Without MEMPALACE_TEMPORAL_UI_URL (and on the local runner) there is no workflow link.
    expect(await row.locator('a.workflow').count()).toBe(0);

    // Searches over REST and MCP, and tool calls: the palace panel charts their latency and error rates.
    for (let i = 0; i < 3; i++) {
      expect((await h.call(`/v1/search?query=${encodeURIComponent(`dashboard module ${i}`)}`, { token: 'tok-reader' })).status).toBe(200);
      await writer.callTool({ name: 'mempalace_search', arguments: { query: `project file ${i}` } });
    }
    for (const [chart, series] of [['search', 'p50'], ['search', 'p95'], ['tools', 'p50'], ['tools', 'p95'], ['errors', 'tools'], ['errors', 'HTTP 5xx']]) {
      const line = page.locator(`#chart-${chart} path[data-series="${series}"]`);
      await expect.poll(async () => Number(await line.getAttribute('data-values')), { timeout: 15_000, message: `${chart} ${series}` }).toBeGreaterThan(0);
      expect(await line.getAttribute('d'), `${chart} ${series}`).toMatch(/^M[\d.]+ [\d.]+/);
    }
    expect(await page.locator('#chart-search svg').getAttribute('aria-label')).toMatch(
      /^Search latency, last 60 minutes; latest: p50 [\d.]+ ms, p95 [\d.]+ ms$/,
    );
    expect(await page.locator('#chart-errors svg').getAttribute('aria-label')).toContain('tools 0 %');
    expect(await page.locator('#job-announcer').textContent()).toContain('completed');
    expect(await bar.getAttribute('aria-label')).toMatch(/^Progress of mine job /);

    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard.png'), fullPage: true });
    expect(consoleErrors.filter((e) => !e.includes('401')), consoleErrors.join('\n')).toEqual([]);
  });
});
