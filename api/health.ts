/**
 * Health of every store and engine behind this process: each is asked one cheap question with a
 * deadline (embedded profile: a query on each SQLite file, so a closed or broken file shows as
 * down; the embedder embeds one word; the job engine lists one job).
 */
import type { Runtime } from '../palace/runtime.js';

export interface EngineHealth {
  status: 'up' | 'down';
  /** What serves it, e.g. `sqlite`, `all-MiniLM-L6-v2`, `local`. */
  engine: string;
  latency_ms: number;
  error?: string;
}

export interface HealthReport {
  status: 'ok' | 'down';
  profile: string;
  engines: Record<string, EngineHealth>;
  checked_at: string;
}

const CHECK_TIMEOUT_MS = 10_000;

async function check(engine: string, probe: () => Promise<unknown>): Promise<EngineHealth> {
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
      }),
    ]);
    return { status: 'up', engine, latency_ms: Math.round(performance.now() - start) };
  } catch (e) {
    return { status: 'down', engine, latency_ms: Math.round(performance.now() - start), error: e instanceof Error ? e.message : String(e) };
  } finally {
    clearTimeout(timer);
  }
}

export async function healthReport(rt: Runtime): Promise<HealthReport> {
  const { stores } = rt;
  const checks: Record<string, Promise<EngineHealth>> = {
    drawers: check(stores.drawers.storeName, () => stores.drawers.count()),
    graph: check(stores.profile === 'embedded' ? 'sqlite' : 'neo4j', () => stores.graph.kgStats()),
    logstream: check(stores.logstream.storeName, () => stores.logstream.versionVector()),
    locks: check(stores.locks.storeName, () => stores.locks.holder('mempalace:healthz')),
    job_store: check(stores.profile === 'embedded' ? 'sqlite' : 'redis', () => stores.jobs.list(1)),
    job_engine: check(stores.profile === 'embedded' ? 'local' : 'temporal', () => rt.jobs.list(1)),
    embedder: check(rt.embedder.model, () => rt.embedder.embed(['healthz'])),
  };
  const engines: Record<string, EngineHealth> = {};
  for (const [name, result] of Object.entries(checks)) engines[name] = await result;
  return {
    status: Object.values(engines).every((e) => e.status === 'up') ? 'ok' : 'down',
    profile: stores.profile,
    engines,
    checked_at: new Date().toISOString(),
  };
}
