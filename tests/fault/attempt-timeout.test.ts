/**
 * A mine batch whose first attempt stalls past its start-to-close limit (a stalled process: swap,
 * a long GC pause): Temporal gives up on that attempt and retries the batch. The given-up attempt
 * is still running in the worker; it sees its cancellation signal and stops before it embeds or
 * writes, so every batch is embedded by one attempt only and the mine ends with the drawers of a
 * clean run. The embedder is the real MiniLM behind a wrapper that stalls one call; Temporal and
 * Redis are the real servers.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRuntime } from '../../app/runtime.js';
import { loadConfig } from '../../core/config.js';
import { isPalaceError } from '../../core/errors.js';
import type { EmbedOptions, Embedder } from '../../embed/embedder.js';
import { MiniLmEmbedder } from '../../embed/minilm.js';
import { MINE_BATCH_FILES } from '../../workflows/mine.js';
import { drawerIds, generateSmallFiles, inProcessWorker, mineSpec, openClusterTestStores, openEngine, uniquePalaceName } from '../integration/temporal-harness.js';

const MARKER = 'stalled-attempt-marker';
const FILES = 3 * MINE_BATCH_FILES + 1;
const HEARTBEAT_TIMEOUT_MS = 4_000;
const ATTEMPT_TIMEOUT_MS = 10_000;
/** Longer than the attempt limit plus the heartbeat throttle, so the attempt is given up during the stall. */
const STALL_MS = 25_000;

interface EmbedCall {
  marked: boolean;
  stalled: boolean;
  abortedAfterStall?: boolean;
  outcome?: 'vectors' | string;
}

/** The real embedder; the first call that embeds the marked file waits STALL_MS first. */
class StallOnce implements Embedder {
  readonly calls: EmbedCall[] = [];
  private stalledOnce = false;

  constructor(private readonly inner: Embedder) {}

  get model(): string {
    return this.inner.model;
  }

  get dimension(): number {
    return this.inner.dimension;
  }

  get identity() {
    return this.inner.identity;
  }

  async embed(texts: string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    const marked = texts.some((t) => t.includes(MARKER));
    const call: EmbedCall = { marked, stalled: marked && !this.stalledOnce };
    this.calls.push(call);
    if (call.stalled) {
      this.stalledOnce = true;
      await new Promise((r) => setTimeout(r, STALL_MS));
      call.abortedAfterStall = options.signal?.aborted ?? false;
    }
    try {
      const vectors = await this.inner.embed(texts, options);
      call.outcome = 'vectors';
      return vectors;
    } catch (e) {
      call.outcome = isPalaceError(e) ? e.code : String(e);
      throw e;
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

let tmp: string;
let source: string;
let embedder: MiniLmEmbedder;
let expected: string[];

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-attempt-timeout-'));
  source = path.join(tmp, 'source');
  await generateSmallFiles(source, FILES - 1, 23);
  await fs.writeFile(path.join(source, 'stalled.md'), `The batch holding this file stalls on its first attempt (${MARKER}); Temporal retries it elsewhere.\n`);
  embedder = new MiniLmEmbedder(loadConfig());
  const clean = await openRuntime(loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(tmp, 'palace-clean') }), { embedder });
  try {
    const started = await clean.jobs.start(mineSpec(source, 'stall'));
    expect((await clean.jobs.wait(started.job_id, 600_000)).state).toBe('completed');
    expected = await drawerIds(clean.stores.drawers, 'stall');
  } finally {
    await clean.close();
  }
  expect(expected).toHaveLength(FILES);
});

afterAll(async () => {
  await embedder?.close();
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('an attempt Temporal gave up on', () => {
  it('stops at its cancellation signal instead of embedding and writing beside its retry', async () => {
    const name = uniquePalaceName('stall');
    const taskQueue = `tq-${name}`;
    const stores = await openClusterTestStores(path.join(tmp, 'palace-temporal'), name);
    const stalling = new StallOnce(embedder);
    const engine = await openEngine(stores, taskQueue, { leaseMs: 8_000, heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS, activityTimeoutMs: ATTEMPT_TIMEOUT_MS });
    const worker = await inProcessWorker(stores, stalling, taskQueue);
    const running = worker.run();
    try {
      const started = await engine.start(mineSpec(source, 'stall'));
      const done = await engine.wait(started.job_id, 300_000);
      expect(done).toMatchObject({ state: 'completed', files_seen: FILES, files_mined: FILES, drawers_written: FILES, errors: 0 });
      expect(await drawerIds(stores.drawers, 'stall')).toEqual(expected);
      // The retry embedded the marked batch while the first attempt stalled; once the stall ended,
      // that attempt found its signal aborted (Temporal timed it out) and embedded nothing.
      for (let i = 0; i < 100 && stalling.calls.find((c) => c.stalled)?.outcome === undefined; i++) await new Promise((r) => setTimeout(r, 200));
      const marked = stalling.calls.filter((c) => c.marked);
      expect(marked.find((c) => c.stalled)).toMatchObject({ abortedAfterStall: true, outcome: 'cancelled' });
      expect(marked.filter((c) => c.outcome === 'vectors')).toHaveLength(1);
      expect(stalling.calls.filter((c) => c.outcome === 'vectors')).toHaveLength(Math.ceil(FILES / MINE_BATCH_FILES));
    } finally {
      worker.shutdown();
      await running;
      await engine.close();
      await stores.dropRedis();
      await stores.close();
    }
  });
});
