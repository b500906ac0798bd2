/**
 * The ops dashboard on the cluster profile, in headless Chromium: with `MEMPALACE_TEMPORAL_UI_URL`
 * set, a job's row links to its workflow in the Temporal UI (workflow id = the job's lock key,
 * run id = the job id). No worker polls the palace's task queue, so the mine stays running and is
 * terminated at the end. Real Temporal, Redis, OpenSearch and Neo4j.
 */
import path from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TemporalJobEngine } from '../../jobs/engines/temporal/job-engine.js';
import type { JobProgress } from '../../jobs/job.js';
import { dropPalace } from '../../stores/open.js';
import { generateProject } from '../fixtures/generate-project.js';
import { launchChromium } from '../helpers/chromium.js';
import type { ApiHarness } from './api-harness.js';
import { startApi, tempDir } from './api-harness.js';

const UI = 'http://temporal-ui.test:8233';
let h: ApiHarness;
let browser: BrowserContext;
let project: string;
let started: JobProgress | undefined;

beforeAll(async () => {
  h = await startApi({
    env: { MEMPALACE_PROFILE: 'cluster', MEMPALACE_PALACE_NAME: `dash-temporal-${Date.now().toString(36)}`, MEMPALACE_TEMPORAL_UI_URL: `${UI}/` },
  });
  project = path.join(tempDir('src'), 'temporal-project');
  await generateProject(project, 3, 5);
  browser = await launchChromium(tempDir('chromium-profile'), { width: 1280, height: 900 });
});

afterAll(async () => {
  await browser?.close();
  if (started && h.runtime.jobs instanceof TemporalJobEngine) {
    await h.runtime.jobs.temporalClient.workflow.getHandle(started.lock_key).terminate('test over').catch(() => undefined);
  }
  const config = h?.runtime.config;
  await h?.close();
  if (config) await dropPalace(config);
});

describe('ops dashboard on the cluster profile', () => {
  it('links a job to its Temporal workflow and names its source, wing and trigger', async () => {
    const res = await h.call('/v1/jobs/mine', { token: 'tok-alice', body: { source: project, wing: 'temporal_dash' } });
    expect(res.status).toBe(202);
    started = ((await res.json()) as { progress: JobProgress }).progress;
    expect(started).toMatchObject({ wing: 'temporal_dash', trigger: 'user', state: 'running' });

    const page = await browser.newPage();
    await page.goto(`${h.url}/dashboard/`);
    await page.getByLabel('Read token').fill('tok-reader');
    await page.getByLabel('Read token').press('Enter');
    const row = page.locator(`tr[data-job-id="${started.job_id}"]`);
    await row.waitFor({ timeout: 20_000 });
    const link = row.getByRole('link', { name: `Temporal workflow of mine job ${started.job_id.slice(0, 8)}` });
    const namespace = encodeURIComponent(h.runtime.config.temporal.namespace);
    expect(await link.getAttribute('href')).toBe(
      `${UI}/namespaces/${namespace}/workflows/${encodeURIComponent(started.lock_key)}/${started.job_id}/history`,
    );
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
    expect(await row.locator('td.wing').textContent()).toBe('temporal_dash');
    expect(await row.locator('td.trigger').textContent()).toBe('user');
  });
});
