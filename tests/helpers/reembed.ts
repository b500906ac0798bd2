/**
 * Shared setup of the re-embed crash tests (model change, encoder added): a palace of generated
 * drawers, the re-embed fixture child killed once it is midway, the stale job resumed in this
 * process after the dead runner's lease, `mempalace worker` processes, and cluster palaces dropped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { loadConfig } from '../../app/config.js';
import type { Config } from '../../core/config.js';
import type { DrawerWrite } from '../../core/drawer.js';
import type { Embedder } from '../../embed/embedder.js';
import type { JobEngine, JobProgress } from '../../jobs/job.js';
import { REEMBED_PAGE_DRAWERS } from '../../jobs/reembed/orchestration.js';
import type { Runtime } from '../../palace/runtime.js';
import { OpenSearchConnection } from '../../stores/opensearch/connection.js';
import { dropPalaceIndices } from '../../stores/opensearch/drawer-mapping.js';
import { exited } from './processes.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The lease of a re-embed runner: short, so a killed runner's job can be resumed within seconds. */
export const REEMBED_LEASE_MS = 8000;

/** The process environment of a re-embed test: one embedding thread, the short lease. */
function reembedEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, MEMPALACE_EMBED_THREADS: '1', MEMPALACE_JOB_LEASE_MS: String(REEMBED_LEASE_MS), ...extra };
}

export function reembedConfig(extra: Record<string, string>): Config {
  return loadConfig(reembedEnv(extra));
}

/** One drawer per text in wing `notes`, embedded by `embedder`, spread over `rooms` rooms and `files` source files. */
export async function noteRows(embedder: Embedder, texts: string[], label: string, rooms: number, files: number): Promise<DrawerWrite[]> {
  const vectors = await embedder.embed(texts);
  return texts.map((content, i) => ({
    id: `drawer_${label}_${String(i).padStart(4, '0')}`,
    content,
    embedding: vectors[i]!,
    meta: { wing: 'notes', room: `room_${i % rooms}`, source_file: `/notes/${i % files}.md`, chunk_index: 0, added_by: `${label}-test`,
      filed_at: '2026-01-01T00:00:00.000000Z' },
  }));
}

/** Resolves once the job has done at least one page but not all of them. */
export async function untilMidway(progress: () => Promise<JobProgress | undefined>): Promise<JobProgress> {
  for (;;) {
    const p = await progress();
    if (p && p.files_seen >= REEMBED_PAGE_DRAWERS && p.files_seen < p.files_total) return p;
    if (p && p.state !== 'running') throw new Error(`the job ended before it could be killed midway: ${JSON.stringify(p)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Re-embeds the embedded palace in `dir` to `model` in the fixture child, kills it with SIGKILL
 * once it is midway, and returns the progress it had reached.
 */
export async function reembedKilledMidway(dir: string, model: string): Promise<JobProgress> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'tests/fixtures/reembed-child.ts', dir, model], {
    cwd: ROOT,
    env: reembedEnv(),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let latest: JobProgress | undefined;
  child.stdout!.on('data', (chunk: Buffer) => {
    for (const m of chunk.toString().matchAll(/progress (\d+) (\d+)/g))
      latest = { files_seen: Number(m[1]), files_total: Number(m[2]), state: 'running' } as JobProgress;
    if (/done /.test(chunk.toString())) latest = { ...latest!, state: 'completed' };
  });
  const killedAt = await untilMidway(async () => latest);
  child.kill('SIGKILL');
  await exited(child);
  return killedAt;
}

/**
 * The re-embed a dead runner left running, resumed in `rt` once its lease has expired: the same
 * job id, waited for to its end.
 */
export async function resumeStaleReembed(rt: Runtime, model: string, timeoutMs: number): Promise<JobProgress> {
  const stale = (await rt.jobs.list(5)).find((j) => j.kind === 'reembed' && j.state === 'running');
  expect(stale).toBeDefined();
  await new Promise((r) => setTimeout(r, REEMBED_LEASE_MS + 500)); // the dead runner's lease expires
  const resumed = await rt.jobs.start({ kind: 'reembed', model });
  expect(resumed.job_id).toBe(stale!.job_id);
  return rt.jobs.wait(resumed.job_id, timeoutMs);
}

/** A `mempalace worker` process of the cluster palace `name` (one activity at a time). */
export function startReembedWorker(config: Config, name: string): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'worker', '--max-activities', '1'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: reembedEnv({ MEMPALACE_PROFILE: 'cluster', MEMPALACE_PALACE: config.palaceDir, MEMPALACE_PALACE_NAME: name }),
  });
}

/**
 * Kills the workers still running, closes the client engines, then closes each cluster runtime
 * and drops its palace's job artifacts and indices.
 */
export async function dropClusterReembeds(workers: ChildProcess[], engines: JobEngine[], opened: { name: string; rt: Runtime }[]): Promise<void> {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
  await Promise.all(workers.map(exited));
  await Promise.all(engines.map((e) => e.close()));
  for (const { name, rt } of opened) {
    await rt.stores.jobs.dropArtifacts('').catch(() => undefined);
    await rt.close();
    const admin = new OpenSearchConnection({ url: rt.config.opensearch.url, palaceName: name });
    await dropPalaceIndices(admin);
    await admin.close();
  }
}
