/**
 * OpenSearch killed with SIGKILL under a search load (vector search, lexical search, a union
 * search's candidate pool, get) and a writer filing one drawer at a time, then restarted on the
 * same data directory with the local stack's scripts (deploy/local kill9.sh and up.sh). While it
 * is down every call fails quickly with a structured, retryable `store_unavailable` error naming
 * opensearch; after the restart the same adapter instance (no product restart) answers again, with
 * the data written before the crash and every write it acknowledged meanwhile.
 *
 * This stops the shared local node on OPENSEARCH_URL for up to a minute: other suites that use
 * OpenSearch must not run at the same time (the fault project runs files one after another).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { PalaceError } from '../../core/errors.js';
import { OpenSearchConnection } from '../../stores/opensearch/connection.js';
import { dropPalaceIndices } from '../../stores/opensearch/drawer-mapping.js';
import { OpenSearchDrawerIndex } from '../../stores/opensearch/opensearch-drawer-index.js';
import type { DrawerWrite } from '../../core/drawer.js';
import type { CandidatePool } from '../../stores/ports/drawers/drawer-index.js';
import { drawer, nearVector, randomUnitVector, seededRandom } from '../contract/drawer-index.fixtures.js';

const DEPLOY = path.resolve(import.meta.dirname, '../../deploy/local');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs a deploy/local script without blocking the event loop, so the readers keep running. */
async function script(name: string, ...args: string[]): Promise<void> {
  await promisify(execFile)('bash', [path.join(DEPLOY, name), ...args], { timeout: 300_000 });
}

type Outcome = { ok: true } | { ok: false; error: unknown; ms: number };

const POOL_TOKENS = ['faultword3'];

describe('OpenSearch DrawerIndex across a kill -9 and restart of OpenSearch', () => {
  const url = loadConfig().opensearch.url;
  const palaceName = `fault-os-${randomBytes(5).toString('hex')}`;
  let index: OpenSearchDrawerIndex;
  let rows: DrawerWrite[];
  let expected: { knn: string[]; lexical: string[]; pool: { vector: string[]; lexical: string[]; in_scope: number }; got: string[] };
  const rnd = seededRandom(31);
  let query: Float32Array;
  let killed = false;

  /** One round of the read workload; returns what the caller would see. */
  async function readRound(): Promise<Outcome> {
    const started = Date.now();
    try {
      const knn = (await index.knn(query, 10)).map((h) => h.drawer.id);
      const lexical = (await index.lexical(['faultword3'], 50)).map((d) => d.id).sort();
      const pool = poolIds(await index.candidatePool({ vector: query, k: 10, filter: { wing: 'wing_a' }, lexicalTokens: () => POOL_TOKENS }));
      const got = (await index.get(['fo1', 'fo2', 'fo77'])).map((d) => d.id);
      expect({ knn, lexical, pool, got }).toEqual(expected);
      return { ok: true };
    } catch (error) {
      return { ok: false, error, ms: Date.now() - started };
    }
  }

  const poolIds = (p: CandidatePool) => ({ vector: p.vector.map((h) => h.drawer.id), lexical: p.lexical.map((h) => h.drawer.id), in_scope: p.inScope });

  function expectStoreUnavailable(o: Outcome): void {
    expect(o.ok).toBe(false);
    if (o.ok) return;
    expect(o.error).toBeInstanceOf(PalaceError);
    expect(o.error).toMatchObject({ code: 'store_unavailable', store: 'opensearch', retryable: true });
    expect((o.error as PalaceError).toJSON()).toMatchObject({ code: 'store_unavailable', store: 'opensearch', retryable: true });
  }

  beforeAll(async () => {
    await script('up.sh', 'opensearch');
    index = await OpenSearchDrawerIndex.open({ url, palaceName });
    rows = Array.from({ length: 300 }, (_, i) => drawer(`fo${i}`, `fault row ${i} faultword${i % 10}`, randomUnitVector(rnd, index.dimension)));
    await index.upsert(rows);
    query = nearVector(rnd, rows[42]!.embedding);
    expected = {
      knn: (await index.knn(query, 10)).map((h) => h.drawer.id),
      lexical: rows.filter((_, i) => i % 10 === 3).map((r) => r.id).sort(),
      pool: poolIds(await index.candidatePool({ vector: query, k: 10, filter: { wing: 'wing_a' }, lexicalTokens: () => POOL_TOKENS })),
      got: ['fo1', 'fo2', 'fo77'],
    };
    expect(expected.knn[0]).toBe('fo42');
    expect(expected.pool.lexical).toHaveLength(10);
  }, 300_000);

  afterAll(async () => {
    // Leave the shared node running whatever happened above.
    if (killed) await script('up.sh', 'opensearch');
    await index?.close();
    const admin = new OpenSearchConnection({ url, palaceName });
    await dropPalaceIndices(admin);
    await admin.close();
  }, 300_000);

  it('fails fast with retryable errors naming opensearch while it is down, recovers without a restart, and keeps every acknowledged write', async () => {
    const before = await readRound();
    expect(before).toEqual({ ok: true });

    // Readers and a writer keep going while the node dies; the writer's drawers hold no search word and lie far from the query, so the reads stay the same.
    let stop = false;
    const background: Outcome[] = [];
    const reader = (async () => {
      while (!stop) {
        background.push(await readRound());
        await sleep(50);
      }
    })();
    // Far from the query (its opposite), so no written row enters the readers' top k.
    const away = query.map((v) => -v);
    const acknowledged: string[] = [];
    const refusedWrites: Outcome[] = [];
    const writer = (async () => {
      for (let n = 0; !stop; n++) {
        const started = Date.now();
        try {
          await index.upsert([drawer(`fw${n}`, `written under the restart ${n}`, nearVector(rnd, away), { wing: 'writes' })]);
          acknowledged.push(`fw${n}`);
        } catch (error) {
          refusedWrites.push({ ok: false, error, ms: Date.now() - started });
        }
        await sleep(50);
      }
    })();
    await sleep(300);
    await script('kill9.sh', 'opensearch');
    killed = true;

    const down: Outcome[] = [];
    for (let i = 0; i < 5; i++) down.push(await readRound());
    for (const o of down) {
      expectStoreUnavailable(o);
      // Bounded: a few quick retries with backoff, never a hang until some client timeout.
      if (!o.ok) expect(o.ms).toBeLessThan(5_000);
    }

    await script('up.sh', 'opensearch');
    killed = false;
    // up.sh waits for yellow health; shards of this index may still be recovering for a moment.
    const deadline = Date.now() + 120_000;
    let recovered: Outcome = { ok: false, error: new Error('never tried'), ms: 0 };
    while (Date.now() < deadline) {
      recovered = await readRound();
      if (recovered.ok) break;
      expectStoreUnavailable(recovered);
      await sleep(500);
    }
    expect(recovered).toEqual({ ok: true });
    // Let the writer be acknowledged again on the restarted node before stopping it.
    const ackedBeforeRestart = acknowledged.length;
    while (acknowledged.length < ackedBeforeRestart + 5) await sleep(50);
    stop = true;
    await Promise.all([reader, writer]);

    // Every failure the background reader and the writer saw was the structured, retryable kind.
    const failures = background.filter((o) => !o.ok);
    expect(failures.length).toBeGreaterThan(0);
    for (const f of failures) expectStoreUnavailable(f);
    expect(refusedWrites.length).toBeGreaterThan(0);
    for (const f of refusedWrites) expectStoreUnavailable(f);
    for (let i = 0; i < 5; i++) expect(await readRound()).toEqual({ ok: true });
    // No acknowledged write is lost: each is read back, and the wing holds exactly those (a refused write may have landed too, and is then there once).
    expect((await index.get(acknowledged)).map((d) => d.id).sort()).toEqual([...acknowledged].sort());
    const written = await index.count({ wing: 'writes' });
    expect(written).toBeGreaterThanOrEqual(acknowledged.length);
    expect(written).toBeLessThanOrEqual(acknowledged.length + refusedWrites.length);
    // Writes work again on the same instance too, and are read back.
    await index.upsert([drawer('fo_after', 'written after the restart faultword3', randomUnitVector(rnd, index.dimension))]);
    expect((await index.lexical(['faultword3'], 50)).map((d) => d.id)).toContain('fo_after');
    expect(await index.count()).toBe(301 + written);
  });
});
