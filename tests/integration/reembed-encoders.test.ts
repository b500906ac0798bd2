/**
 * `mempalace reembed` adding an encoder (issue 26), with the real models (fp32 all-MiniLM-L6-v2
 * and int8 bge-small-en-v1.5 must be in MEMPALACE_MODEL_DIR): a palace of MiniLM alone is
 * re-embedded to the pair, its vectors grow from 384 to 768 numbers and it records the set. On the
 * embedded profile the re-embed's process is killed with SIGKILL midway and the job resumes; on
 * the cluster profile it runs on a Temporal worker and leaves an OpenSearch index of 768-d vectors.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRuntime } from '../../app/runtime.js';
import type { DrawerWrite } from '../../core/drawer.js';
import { encoderSetText, parseEncoderSet } from '../../core/encoder-set.js';
import { dot } from '../../core/vector.js';
import type { Embedder } from '../../embed/embedder.js';
import { openEncoderSet } from '../../embed/encoder-set.js';
import type { JobEngine } from '../../jobs/job.js';
import { TemporalJobEngine } from '../../jobs/engines/temporal/job-engine.js';
import { REEMBED_PAGE_DRAWERS } from '../../jobs/reembed/orchestration.js';
import type { Runtime } from '../../palace/runtime.js';
import { OpenSearchConnection } from '../../stores/opensearch/connection.js';
import { rejectionOf } from '../helpers/errors.js';
import { dropClusterReembeds, noteRows, REEMBED_LEASE_MS, reembedConfig, reembedKilledMidway, resumeStaleReembed,
  startReembedWorker } from '../helpers/reembed.js';
import { storedDimension } from '../../stores/opensearch/drawer-mapping.js';
import type { DrawerStore } from '../../stores/ports/palace-stores.js';

const MINILM = 'all-MiniLM-L6-v2';
const PAIR = encoderSetText(parseEncoderSet(`${MINILM}:0.5,bge-small-en-v1.5-q:0.5`, 'test'));
/** Three pages, so a kill lands between two of them. */
const DRAWERS = REEMBED_PAGE_DRAWERS * 2 + 21;
const WORDS = 'lease fence cursor batch worker replica shard queue retry backoff manifest drawer wing room tunnel hallway vector lexical chunk embed'
  .split(' ');

let tmp: string;
let minilm: Embedder;
let pair: Embedder;
let rows: DrawerWrite[];

const env = reembedConfig;
const refusal = (p: Promise<unknown>) => rejectionOf(p);

/** Every drawer has a 768-d vector, equal to the pair's vector of its text on a sample, and the palace records the pair. */
async function expectPairPalace(drawers: DrawerStore): Promise<void> {
  expect(await drawers.readModel()).toEqual({ model: pair.identity });
  const { items } = await drawers.list({}, 0, 10_000);
  expect(items).toHaveLength(DRAWERS);
  const stored = await drawers.embeddings(items.map((d) => d.id));
  expect(stored.size).toBe(DRAWERS);
  for (const v of stored.values()) expect(v.length).toBe(768);
  const sample = items.filter((_, i) => i % 23 === 0);
  const fresh = await pair.embed(sample.map((d) => d.content));
  sample.forEach((d, i) => expect(dot(stored.get(d.id)!, fresh[i]!)).toBeGreaterThan(0.99999));
  const [nearest] = await drawers.knn(fresh[1]!, 1);
  expect(nearest!.drawer.id).toBe(sample[1]!.id);
}

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-reembed-encoders-'));
  const config = env({});
  minilm = openEncoderSet(config, parseEncoderSet(MINILM, 'test'));
  pair = openEncoderSet(config, parseEncoderSet(PAIR, 'test'));
  const texts = Array.from({ length: DRAWERS },
    (_, i) => Array.from({ length: 6 + (i % 7) }, (_, j) => WORDS[(i * 5 + j * j + j) % WORDS.length]).join(' ') + ` #${i}`);
  rows = await noteRows(minilm, texts, 'encoders', 4, 30);
});

afterAll(async () => {
  await Promise.all([minilm?.close(), pair?.close()]);
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('reembed adding an encoder: embedded profile', () => {
  it('a reembed to the pair killed with SIGKILL midway resumes; the palace then holds 768-d pair vectors and refuses MiniLM alone', async () => {
    const dir = path.join(tmp, 'crash');
    const filled = await openRuntime(env({ MEMPALACE_PALACE: dir }), { embedder: minilm });
    await filled.stores.drawers.upsert(rows);
    await filled.close();

    const killedAt = await reembedKilledMidway(dir, PAIR);
    expect(killedAt.files_seen).toBeLessThan(DRAWERS);

    // Midway the palace opens for neither side and takes no drawers; only the re-embed resumes it.
    const midway = await refusal(openRuntime(env({ MEMPALACE_PALACE: dir }), { embedder: pair }));
    expect(midway.toJSON()).toMatchObject({ code: 'already_running', rule: 'no_reembed_under_way' });
    expect(midway.message).toContain(`mempalace reembed --encoders ${PAIR}`);
    const rt = await openRuntime(env({ MEMPALACE_PALACE: dir }), { embedder: minilm, palaceModel: 'reembed' });
    try {
      expect(rt.stores.drawers.dimension).toBe(768);
      await expect(rt.stores.drawers.upsert(rows.slice(0, 1))).rejects.toMatchObject({ code: 'already_running' });
      const done = await resumeStaleReembed(rt, PAIR, 600_000);
      expect(done).toMatchObject({ state: 'completed', files_total: DRAWERS, files_seen: DRAWERS });
      // The process that ran the re-embed still embeds queries with MiniLM: its searches are refused, not mixed.
      const [query] = await minilm.embed(['lease fence cursor']);
      const stale = await refusal(rt.stores.drawers.knn(query!, 1));
      expect(stale.toJSON()).toMatchObject({ code: 'invalid_argument', field: 'MEMPALACE_ENCODERS', rule: 'matches_palace_model' });
    } finally {
      await rt.close();
    }

    const refused = await refusal(openRuntime(env({ MEMPALACE_PALACE: dir }), { embedder: minilm }));
    expect(refused.toJSON()).toMatchObject({ code: 'invalid_argument', field: 'MEMPALACE_ENCODERS', rule: 'matches_palace_model' });
    expect(refused.message).toContain(`MEMPALACE_ENCODERS=${PAIR}`);
    // The configured pair (MEMPALACE_ENCODERS, weights written in another scale) serves it, and reopens at 768-d.
    const served = await openRuntime(env({ MEMPALACE_PALACE: dir, MEMPALACE_ENCODERS: `${MINILM}:1,bge-small-en-v1.5-q:1` }));
    try {
      expect(served.embedder.identity).toEqual(pair.identity);
      expect(served.stores.drawers.dimension).toBe(768);
      await expectPairPalace(served.stores.drawers);
    } finally {
      await served.close();
    }
  }, 900_000);
});

describe('reembed adding an encoder: cluster profile (OpenSearch, Temporal)', () => {
  const name = `t-encoders-${randomUUID().slice(0, 8)}`;
  const clusterConfig = () => env({ MEMPALACE_PROFILE: 'cluster', MEMPALACE_PALACE: path.join(tmp, name), MEMPALACE_PALACE_NAME: name });
  const opened: { name: string; rt: Runtime }[] = [];
  const engines: JobEngine[] = [];
  const workers: ChildProcess[] = [];

  afterAll(() => dropClusterReembeds(workers, engines, opened));

  it('a reembed to the pair on a Temporal worker completes with a 768-d OpenSearch index and the set recorded', async () => {
    const config = clusterConfig();
    const rt = await openRuntime(config, { embedder: minilm });
    opened.push({ name, rt });
    await rt.stores.drawers.upsert(rows);
    workers.push(startReembedWorker(config, name));
    const engine = await TemporalJobEngine.connect({ palace: rt.stores.palace, jobs: rt.stores.jobs, temporal: config.temporal, pollMs: 200,
      timeouts: { leaseMs: REEMBED_LEASE_MS, heartbeatTimeoutMs: 30_000, activityTimeoutMs: 10 * 60_000 } });
    engines.push(engine);
    const done = await engine.wait((await engine.start({ kind: 'reembed', model: PAIR })).job_id, 600_000);
    expect(done).toMatchObject({ state: 'completed', files_total: DRAWERS, files_seen: DRAWERS, drawers_written: DRAWERS });
    const admin = new OpenSearchConnection({ url: config.opensearch.url, palaceName: name });
    try {
      expect(await storedDimension(admin)).toBe(768);
    } finally {
      await admin.close();
    }
    const served = await openRuntime(config, { embedder: pair });
    try {
      expect(served.stores.drawers.dimension).toBe(768);
      await expectPairPalace(served.stores.drawers);
    } finally {
      await served.close();
    }
    const refused = await refusal(openRuntime(config, { embedder: minilm }));
    expect(refused.toJSON()).toMatchObject({ code: 'invalid_argument', field: 'MEMPALACE_ENCODERS', rule: 'matches_palace_model' });
  }, 900_000);
});
