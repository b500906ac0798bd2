/**
 * Neo4j killed with SIGKILL (deploy/local/kill9.sh) under a read workload (kg facts, tunnel
 * list), then restarted on the same home (deploy/local/up.sh). While it is down every call fails
 * with a retryable `store_unavailable` error naming neo4j, none hangs past the retry budget, and
 * after the restart the same adapter instance serves the same data again: no product restart.
 *
 * This stops the shared stack's Neo4j on 7687 for up to a minute; other tests using it at the
 * same time will see the outage too.
 */
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { PalaceError } from '../../core/errors.js';
import { openNeo4jGraphStore, type Neo4jGraphStore } from '../../stores/neo4j/neo4j-graph-store.js';
import type { KgTripleWrite } from '../../stores/ports/graph-store.js';
import { kgFact } from '../helpers/kg.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const RETRY_BUDGET_MS = 3_000;

/** Runs a deploy/local script without blocking the event loop, so the readers keep going. */
async function script(name: string, ...args: string[]): Promise<void> {
  await promisify(execFile)('bash', [path.join(root, 'deploy/local', name), ...args], { timeout: 240_000 });
}

const fact = (i: number): KgTripleWrite =>
  kgFact({ id: `t_${i}`, subject: { id: 'bot', name: 'Bot' }, predicate: 'uses', object: { id: `m${i}`, name: `M${i}` },
    recorded_at: `2030-01-01T00:00:00.${String(i).padStart(6, '0')}Z` });

describe('Neo4j graph store across a kill -9 of Neo4j', () => {
  let graph: Neo4jGraphStore | undefined;
  afterAll(async () => {
    // Whatever happened, leave the shared stack with a running Neo4j.
    await script('up.sh', 'neo4j');
    await graph?.dropPalace();
    await graph?.close();
  });

  it('fails reads with retryable neo4j errors while down and serves them again with the same instance', async () => {
    graph = await openNeo4jGraphStore({ neo4j: loadConfig().neo4j, palaceName: `fault-neo4j-${randomBytes(6).toString('hex')}` }, {
      retryBudgetMs: RETRY_BUDGET_MS,
    });
    const g = graph;
    for (let i = 1; i <= 20; i++) await g.kgAdd(fact(i));
    await g.tunnelUpsert([{ id: 'tn', source: { wing: 'a', room: 'r' }, target: { wing: 'b', room: 'r' }, label: 'x', kind: 'explicit', source_wing_key: 'a',
      target_wing_key: 'b', at: '2030-01-01T00:00:00.000000+00:00', by: null }]);
    const expectedFacts = (await g.kgFacts({ entity_id: 'bot', direction: 'both' })).map((f) => f.id);
    expect(expectedFacts).toHaveLength(20);

    let phase: 'before' | 'outage' | 'after' = 'before';
    const outageErrors: PalaceError[] = [];
    const slowestFailureMs: number[] = [];
    const wrongResults: string[] = [];
    let okBefore = 0;
    let okAfter = 0;
    let stop = false;
    const reader = async (which: 'kg' | 'tunnels') => {
      while (!stop) {
        const started = Date.now();
        try {
          const got = which === 'kg' ? (await g.kgFacts({ entity_id: 'bot', direction: 'both' })).map((f) => f.id) : (await g.tunnelList()).map((t) => t.id);
          const want = which === 'kg' ? expectedFacts : ['tn'];
          if (JSON.stringify(got) !== JSON.stringify(want)) wrongResults.push(`${phase} ${new Date().toISOString()} ${which}: ${JSON.stringify(got)}`);
          if (phase === 'before') okBefore++;
          if (phase === 'after') okAfter++;
        } catch (e) {
          if (!(e instanceof PalaceError) || phase === 'before') throw e;
          outageErrors.push(e);
          slowestFailureMs.push(Date.now() - started);
          await sleep(100);
        }
      }
    };
    const readers = [reader('kg'), reader('tunnels'), reader('kg')];

    while (okBefore < 50) await sleep(20);
    phase = 'outage';
    await script('kill9.sh', 'neo4j');
    // A failing call gives up after the retry budget plus its last backoff step (up to ~8 s).
    const downDeadline = Date.now() + 30_000;
    while (outageErrors.length < 3 && Date.now() < downDeadline) await sleep(100);
    const errorsWhileDown = outageErrors.length;
    expect(errorsWhileDown).toBeGreaterThanOrEqual(3);

    const restartStarted = Date.now();
    await script('up.sh', 'neo4j');
    const restartMs = Date.now() - restartStarted;
    phase = 'after';
    const deadline = Date.now() + 60_000;
    while (okAfter < 50 && Date.now() < deadline) await sleep(50);
    stop = true;
    await Promise.all(readers);

    expect(wrongResults).toEqual([]);
    expect(okAfter).toBeGreaterThanOrEqual(50);
    for (const e of outageErrors) {
      expect(e.code).toBe('store_unavailable');
      expect(e.store).toBe('neo4j');
      expect(e.retryable).toBe(true);
      expect(e.message).toMatch(/^neo4j is unavailable: /);
    }
    // A call gives up after the driver's retry budget plus one connect attempt, never hangs.
    expect(Math.max(...slowestFailureMs)).toBeLessThan(RETRY_BUDGET_MS + 10_000);
    // Writes work again too, on the same instance.
    expect(await g.kgAdd(fact(21))).toEqual({ triple_id: 't_21', inserted: true });
    console.log(
      `neo4j fault: ${errorsWhileDown} errors before the restart began, ${outageErrors.length} in all, restart took ${restartMs} ms, slowest failing call ${
        Math.max(...slowestFailureMs)
      } ms`,
    );
  });
});
