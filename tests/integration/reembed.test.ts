/**
 * A palace's model identity and `mempalace reembed` on both profiles, with the real embedders
 * (fp32 and int8 all-MiniLM-L6-v2; both must be in MEMPALACE_MODEL_DIR): a palace refuses to
 * open with another model; a re-embed killed with SIGKILL midway (the embedded runner's process,
 * a Temporal worker process) resumes and ends with exactly the vectors and record of a clean run.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '../../palace/runtime.js';
import { openRuntime } from '../../app/runtime.js';
import type { DrawerWrite } from '../../core/drawer.js';
import { MiniLmEmbedder } from '../../embed/minilm.js';
import type { JobEngine } from '../../jobs/job.js';
import type { DrawerStore } from '../../stores/ports/palace-stores.js';
import { TemporalJobEngine } from '../../jobs/engines/temporal/job-engine.js';
import { REEMBED_PAGE_DRAWERS } from '../../jobs/reembed/orchestration.js';
import { rejectionOf } from '../helpers/errors.js';
import { exited } from '../helpers/processes.js';
import { dropClusterReembeds, noteRows, REEMBED_LEASE_MS, reembedConfig, reembedKilledMidway, resumeStaleReembed, startReembedWorker,
  untilMidway } from '../helpers/reembed.js';

const FP32 = 'all-MiniLM-L6-v2';
const INT8 = 'all-MiniLM-L6-v2-q';
/** Enough logical drawers for several re-embed pages, so a kill can land between two of them. */
const DRAWERS = REEMBED_PAGE_DRAWERS * 4 + 37;
const WORDS =
  'lease fence cursor batch worker replica shard queue retry backoff manifest drawer wing room tunnel hallway vector lexical chunk embed scan commit branch stream event artifact deadline heartbeat'
    .split(' ');

let tmp: string;
let fp32: MiniLmEmbedder;
let int8: MiniLmEmbedder;
let rows: DrawerWrite[];

function sentence(i: number): string {
  return Array.from({ length: 8 + (i % 9) }, (_, j) => WORDS[(i * 7 + j * j * 3 + j) % WORDS.length]).join(' ') + ` (note ${i})`;
}

const env = reembedConfig;
const refusal = (p: Promise<unknown>) => rejectionOf(p);

async function allVectors(drawers: DrawerStore): Promise<Map<string, Float32Array>> {
  const { items } = await drawers.list({}, 0, 10_000);
  return drawers.embeddings(items.map((d) => d.id));
}

function maxDifference(a: Map<string, Float32Array>, b: Map<string, Float32Array>): number {
  expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
  let max = 0;
  for (const [id, v] of a)
    v.forEach((x, i) => {
      max = Math.max(max, Math.abs(x - b.get(id)![i]!));
    });
  return max;
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

/** The palace holds int8 vectors of its own contents now, and records the int8 model. */
async function expectInt8Palace(drawers: DrawerStore): Promise<void> {
  expect(await drawers.readModel()).toEqual({ model: int8.identity });
  const sample = (await drawers.list({}, 0, 20)).items;
  const fresh = await int8.embed(sample.map((d) => d.content));
  const stored = await drawers.embeddings(sample.map((d) => d.id));
  sample.forEach((d, i) => expect(dot(stored.get(d.id)!, fresh[i]!)).toBeGreaterThan(0.99999));
}

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-reembed-'));
  const config = env({});
  fp32 = new MiniLmEmbedder(config, { model: FP32 });
  int8 = new MiniLmEmbedder(config, { model: INT8 });
  rows = await noteRows(fp32, Array.from({ length: DRAWERS }, (_, i) => sentence(i)), 'reembed', 5, 40);
});

afterAll(async () => {
  await Promise.all([fp32?.close(), int8?.close()]);
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('model identity and reembed: embedded profile', () => {
  const palaceWith = async (name: string): Promise<string> => {
    const dir = path.join(tmp, name);
    const rt = await openRuntime(env({ MEMPALACE_PALACE: dir }), { embedder: fp32 });
    await rt.stores.drawers.upsert(rows);
    await rt.close();
    return dir;
  };

  it('records the model on first open and refuses another model, naming MEMPALACE_EMBED_MODEL', async () => {
    const dir = await palaceWith('refuse');
    const rt = await openRuntime(env({ MEMPALACE_PALACE: dir }), { embedder: fp32 });
    expect(await rt.stores.drawers.readModel()).toEqual({ model: fp32.identity });
    await rt.close();
    const e = await refusal(openRuntime(env({ MEMPALACE_PALACE: dir }), { embedder: int8 }));
    expect(e.toJSON()).toMatchObject({ code: 'invalid_argument', field: 'MEMPALACE_EMBED_MODEL', rule: 'matches_palace_model' });
    expect(e.message).toContain(`MEMPALACE_EMBED_MODEL=${FP32}`);
    expect(e.message).toContain(`mempalace reembed --model ${INT8}`);
  });

  it('a reembed whose process is killed with SIGKILL midway resumes and equals a clean run', async () => {
    const cleanDir = await palaceWith('clean');
    const clean = await openRuntime(env({ MEMPALACE_PALACE: cleanDir }), { embedder: fp32, palaceModel: 'reembed' });
    const cleanJob = await clean.jobs.wait((await clean.jobs.start({ kind: 'reembed', model: INT8 })).job_id, 300_000);
    expect(cleanJob).toMatchObject({ state: 'completed', files_total: DRAWERS, files_seen: DRAWERS, drawers_written: DRAWERS });
    await expectInt8Palace(clean.stores.drawers);
    const expected = await allVectors(clean.stores.drawers);
    await clean.close();
    // Now the palace is int8's: the fp32 model is refused, the int8 one serves.
    await refusal(openRuntime(env({ MEMPALACE_PALACE: cleanDir }), { embedder: fp32 }));
    await (await openRuntime(env({ MEMPALACE_PALACE: cleanDir }), { embedder: int8 })).close();

    const dir = await palaceWith('crash');
    const killedAt = await reembedKilledMidway(dir, INT8);
    expect(killedAt.files_seen).toBeLessThan(DRAWERS);

    // Mid-job the palace takes no drawers and opens for no model; only the reembed resumes it.
    const midway = await refusal(openRuntime(env({ MEMPALACE_PALACE: dir }), { embedder: int8 }));
    expect(midway.toJSON()).toMatchObject({ code: 'already_running', field: 'MEMPALACE_EMBED_MODEL', rule: 'no_reembed_under_way' });
    const rt = await openRuntime(env({ MEMPALACE_PALACE: dir }), { embedder: fp32, palaceModel: 'reembed' });
    try {
      await expect(rt.stores.drawers.upsert(rows.slice(0, 1))).rejects.toMatchObject({ code: 'already_running' });
      const done = await resumeStaleReembed(rt, INT8, 300_000);
      expect(done).toMatchObject({ state: 'completed', files_total: DRAWERS, files_seen: DRAWERS });
      await expectInt8Palace(rt.stores.drawers);
      expect(maxDifference(await allVectors(rt.stores.drawers), expected)).toBe(0);
    } finally {
      await rt.close();
    }
  });
});

describe('model identity and reembed: cluster profile (OpenSearch, Temporal)', () => {
  const opened: { name: string; rt: Runtime }[] = [];
  const engines: JobEngine[] = [];
  const workers: ChildProcess[] = [];

  const clusterConfig = (name: string) => env({ MEMPALACE_PROFILE: 'cluster', MEMPALACE_PALACE: path.join(tmp, name), MEMPALACE_PALACE_NAME: name });

  async function clusterPalace(label: string): Promise<{ name: string; rt: Runtime }> {
    const name = `t-reembed-${label}-${randomUUID().slice(0, 8)}`;
    const rt = await openRuntime(clusterConfig(name), { embedder: fp32 });
    await rt.stores.drawers.upsert(rows);
    opened.push({ name, rt });
    return { name, rt };
  }

  /** A `mempalace worker` process of the palace, killed with SIGKILL at the end if still running. */
  function startWorker(name: string): ChildProcess {
    const child = startReembedWorker(clusterConfig(name), name);
    workers.push(child);
    return child;
  }

  /** A client engine with short heartbeat timeouts, so a killed worker's page moves on in seconds. */
  async function engineOf(name: string, rt: Runtime): Promise<JobEngine> {
    const config = clusterConfig(name);
    const engine = await TemporalJobEngine.connect({
      palace: rt.stores.palace,
      jobs: rt.stores.jobs,
      temporal: config.temporal,
      pollMs: 200,
      timeouts: { leaseMs: REEMBED_LEASE_MS, heartbeatTimeoutMs: 10_000, activityTimeoutMs: 10 * 60_000 },
    });
    engines.push(engine);
    return engine;
  }

  afterAll(() => dropClusterReembeds(workers, engines, opened));

  it('records the model in OpenSearch and refuses another model, naming MEMPALACE_EMBED_MODEL', async () => {
    const { name, rt } = await clusterPalace('refuse');
    expect(await rt.stores.drawers.readModel()).toEqual({ model: fp32.identity });
    const e = await refusal(openRuntime(clusterConfig(name), { embedder: int8 }));
    expect(e.toJSON()).toMatchObject({ code: 'invalid_argument', field: 'MEMPALACE_EMBED_MODEL', rule: 'matches_palace_model' });
  });

  it('a reembed whose Temporal worker is killed with SIGKILL midway resumes on another worker and equals a clean run', async () => {
    const clean = await clusterPalace('clean');
    const cleanWorker = startWorker(clean.name);
    const cleanEngine = await engineOf(clean.name, clean.rt);
    const cleanJob = await cleanEngine.wait((await cleanEngine.start({ kind: 'reembed', model: INT8 })).job_id, 300_000);
    expect(cleanJob).toMatchObject({ state: 'completed', files_total: DRAWERS, files_seen: DRAWERS, drawers_written: DRAWERS });
    cleanWorker.kill('SIGTERM');
    await expectInt8Palace(clean.rt.stores.drawers);
    const expected = await allVectors(clean.rt.stores.drawers);
    await refusal(openRuntime(clusterConfig(clean.name), { embedder: fp32 }));

    const crash = await clusterPalace('crash');
    const first = startWorker(crash.name);
    const engine = await engineOf(crash.name, crash.rt);
    const started = await engine.start({ kind: 'reembed', model: INT8 });
    const killedAt = await untilMidway(() => engine.progress(started.job_id));
    first.kill('SIGKILL');
    await exited(first);
    expect(killedAt.files_seen).toBeLessThan(DRAWERS);
    expect((await crash.rt.stores.drawers.readModel())?.reembed?.target).toEqual(int8.identity);
    startWorker(crash.name);
    const done = await engine.wait(started.job_id, 300_000);
    expect(done).toMatchObject({ state: 'completed', files_total: DRAWERS, files_seen: DRAWERS });
    await expectInt8Palace(crash.rt.stores.drawers);
    expect(maxDifference(await allVectors(crash.rt.stores.drawers), expected)).toBe(0);
  });
});
