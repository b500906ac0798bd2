/**
 * Temporal retries an activity exactly when its PalaceError is `retryable`, whatever the code:
 * a configuration fault of a store (`store_unavailable`, retryable false, as Neo4j reports a
 * failed login) fails the job at the first attempt, a transient one is retried until it passes,
 * and a retryable error of a code that used to be on a non-retryable list is retried too. Real
 * Temporal server and Redis; the faults come from a wrapper around the real drawer index's
 * batch write.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PalaceError } from '../../core/errors.js';
import type { DrawerStore } from '../../stores/ports/palace-stores.js';
import type { TemporalJobEngine } from '../../jobs/engines/temporal/job-engine.js';
import type { ClusterTestStores } from './temporal-harness.js';
import { generateSmallFiles, mineSpec } from './temporal-harness.js';
import type { OpenTemporalRig } from '../helpers/temporal-rig.js';
import { openTemporalRig } from '../helpers/temporal-rig.js';
import { useEmbedderInTempDir } from '../helpers/real-embedder.js';

const fx = useEmbedderInTempDir('mempalace-temporal-retry-');
let stores: ClusterTestStores;
let rig: OpenTemporalRig;
let engine: TemporalJobEngine;

/** Errors the next batch writes throw, in order; `always` is thrown once they are used up. */
const faults: { next: PalaceError[]; always: PalaceError | undefined; writes: number } = { next: [], always: undefined, writes: 0 };

function faultyWrites(drawers: DrawerStore): DrawerStore {
  return new Proxy(drawers, {
    get(target, prop, receiver) {
      if (prop !== 'replaceFiles') {
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return async (...args: Parameters<DrawerStore['replaceFiles']>) => {
        faults.writes += 1;
        const fault = faults.next.shift() ?? faults.always;
        if (fault) throw fault;
        return target.replaceFiles(...args);
      };
    },
  });
}

beforeAll(async () => {
  rig = await openTemporalRig({ dir: fx.tmp, label: 'retry', mineWindow: 1 });
  stores = rig.stores;
  engine = rig.engine;
  await rig.runWorker(fx.embedder, { stores: { ...stores, drawers: faultyWrites(stores.drawers) } });
});

afterAll(async () => {
  await rig?.close();
});

/** Mine three small files (one batch) into `wing` with the given faults armed. */
async function mineWith(wing: string, next: PalaceError[], always?: PalaceError) {
  const dir = path.join(fx.tmp, wing);
  await generateSmallFiles(dir, 3, wing.length);
  Object.assign(faults, { next, always, writes: 0 });
  try {
    const started = await engine.start(mineSpec(dir, wing));
    return { final: await engine.wait(started.job_id, 240_000), writes: faults.writes };
  } finally {
    Object.assign(faults, { next: [], always: undefined });
  }
}

const authFailure = () =>
  new PalaceError('store_unavailable', 'neo4j is unavailable: The client is unauthorized due to authentication failure.', { store: 'neo4j', retryable: false,
    rule: 'neo4j_auth' });
const outage = () => new PalaceError('store_unavailable', 'opensearch is unavailable: connect ECONNREFUSED', { store: 'opensearch', retryable: true });

describe('Temporal retries exactly the retryable errors', () => {
  it('a store configuration fault (retryable false) fails the job at the first attempt', async () => {
    const { final, writes } = await mineWith('auth', [], authFailure());
    expect(final.state).toBe('failed');
    expect(final.result).toMatchObject({ success: false, error_class: 'store_unavailable' });
    expect(final.error).toContain('authentication failure');
    expect(writes).toBe(1);
    expect(await stores.drawers.count({ wing: 'auth' })).toBe(0);
  });

  it('a transient store outage (retryable) is retried until the write passes', async () => {
    const { final, writes } = await mineWith('outage', [outage(), outage()]);
    expect(final.state).toBe('completed');
    expect(writes).toBe(3);
    expect(await stores.drawers.count({ wing: 'outage' })).toBe(3);
  });

  it('a retryable error is retried whatever its code', async () => {
    const { final, writes } = await mineWith('notfound', [new PalaceError('not_found', 'index alias not found yet', { retryable: true })]);
    expect(final.state).toBe('completed');
    expect(writes).toBe(2);
    expect(await stores.drawers.count({ wing: 'notfound' })).toBe(3);
  });
});
