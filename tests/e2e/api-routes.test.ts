/**
 * Every REST route of `mempalace serve` against the embedded profile with the real MiniLM
 * embedder: jobs (start, 409, list, get, cancel, progress SSE with resume), status, taxonomy,
 * search, the logstream SSE (filters, resume, 400s, capacity), /sync/peers, /healthz,
 * /metrics, and the 401 / 403 / 413 / 429 cases, the Host pin and CORS.
 */
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateProject } from '../fixtures/generate-project.js';
import type { ApiHarness } from './api-harness.js';
import { readSse, startApi, tempDir } from './api-harness.js';

interface Job {
  job_id: string;
  state: string;
  files_total: number;
  files_seen: number;
  drawers_written: number;
  result?: Record<string, unknown>;
}

async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

async function waitJob(h: ApiHarness, id: string, timeoutMs = 120_000): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await json<Job>(await h.call(`/v1/jobs/${id}`));
    if (job.state !== 'running' || Date.now() > deadline) return job;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('HTTP API routes (embedded, real embedder)', () => {
  let h: ApiHarness;
  let small: string;
  let big: string;
  let minedJob: Job;

  beforeAll(async () => {
    h = await startApi({ sseMaxClients: 3 });
    small = path.join(tempDir('src'), 'small-project');
    await generateProject(small, 12, 7);
    big = path.join(tempDir('src'), 'big-project');
    await generateProject(big, 300, 11);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('refuses requests without a token or with an unknown one (401), and routes without the scope (403)', async () => {
    for (const p of ['/v1/status', '/v1/taxonomy', '/v1/jobs', '/v1/search?query=x', '/logstream/stream', '/sync/peers', '/metrics', '/v1/dashboard/stream']) {
      const none = await h.call(p, { token: null });
      expect(none.status, p).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('Bearer');
      expect(await json(none)).toMatchObject({ code: 'unauthenticated' });
      expect((await h.call(p, { token: 'tok-nobody' })).status, p).toBe(401);
    }
    const mine = await h.call('/v1/jobs/mine', { token: 'tok-reader', body: { source: small } });
    expect(mine.status).toBe(403);
    expect(await json(mine)).toMatchObject({ code: 'permission_denied', rule: 'scope', required_scope: 'write' });
    // MCP uses the same tokens.
    const mcp = await h.call('/mcp', { token: 'tok-nobody', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { accept: 'application/json, text/event-stream' } });
    expect(mcp.status).toBe(401);
  });

  it('starts a mine (202), streams its progress to the end, and the palace reflects it', async () => {
    const start = await h.call('/v1/jobs/mine', { token: 'tok-alice', body: { source: small, wing: 'smallwing' } });
    expect(start.status).toBe(202);
    const started = await json<{ job_id: string; progress: Job; events_url: string }>(start);
    expect(start.headers.get('location')).toBe(`/v1/jobs/${started.job_id}`);
    expect(started.progress.state).toBe('running');

    const stream = await h.call(started.events_url, { token: 'tok-reader' });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const frames = await readSse(stream, (f) => f.some((x) => x.event === 'end'), 120_000);
    const progress = frames.filter((f) => f.event === 'progress');
    expect(progress.length).toBeGreaterThan(1);
    const seqs = progress.map((f) => Number(f.id));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    const end = JSON.parse(frames.at(-1)!.data) as Job;
    expect(frames.at(-1)!.event).toBe('end');
    expect(end.state).toBe('completed');
    expect(end.files_total).toBe(12);

    // Resume after the first snapshot: exactly the later ones are replayed.
    const resumed = await readSse(await h.call(started.events_url, { token: 'tok-reader', headers: { 'last-event-id': String(seqs[0]) } }),
      (f) => f.some((x) => x.event === 'end'));
    expect(resumed.filter((f) => f.event === 'progress').map((f) => Number(f.id))).toEqual(seqs.slice(1));

    minedJob = await json<Job>(await h.call(`/v1/jobs/${started.job_id}`, { token: 'tok-reader' }));
    expect(minedJob.state).toBe('completed');
    expect(minedJob.result).toBeDefined();
    expect(minedJob.drawers_written).toBeGreaterThan(0);

    const status = await json<{ total_drawers: number; wings: Record<string, number>; jobs_running: number }>(
      await h.call('/v1/status', { token: 'tok-reader' }),
    );
    expect(status.total_drawers).toBe(await h.runtime.stores.drawers.count());
    expect(status.wings.smallwing).toBe(status.total_drawers);
    const tax = await json<{ taxonomy: Record<string, Record<string, number>> }>(await h.call('/v1/taxonomy', { token: 'tok-reader' }));
    expect(Object.values(tax.taxonomy.smallwing!).reduce((a, b) => a + b, 0)).toBe(status.total_drawers);

    const list = await json<{ jobs: Job[] }>(await h.call('/v1/jobs?limit=5', { token: 'tok-reader' }));
    expect(list.jobs[0]!.job_id).toBe(started.job_id);
    expect(list.jobs[0]!.result).toBeUndefined();
  });

  it('searches by GET and POST with the same answer, and names bad fields', async () => {
    const get = await json<{ results: { wing: string; text: string }[] }>(
      await h.call('/v1/search?query=lease%20fence%20token&limit=3', { token: 'tok-reader' }),
    );
    const post = await json<{ results: { wing: string; text: string }[] }>(
      await h.call('/v1/search', { token: 'tok-reader', body: { query: 'lease fence token', limit: 3 } }),
    );
    expect(get.results.length).toBe(3);
    expect(post.results).toEqual(get.results);
    expect(get.results.every((r) => r.wing === 'smallwing')).toBe(true);
    const bad = await h.call('/v1/search', { token: 'tok-reader', body: { query: 'x', candidate_strategy: 'magic' } });
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ code: 'invalid_argument', field: 'candidate_strategy', rule: 'enum' });
    const unknown = await h.call('/v1/search', { token: 'tok-reader', body: { query: 'x', nope: 1 } });
    expect(await json(unknown)).toMatchObject({ field: 'nope', rule: 'unknown_property' });
    const twice = await h.call('/v1/search?query=a&query=b', { token: 'tok-reader' });
    expect(twice.status).toBe(400);
    expect(await json(twice)).toMatchObject({ field: 'query', rule: 'single_value' });
    // Found by the fuzzer: coercion made 1e309 an Infinity that passed the bounds and failed with a 500.
    for (const route of ['/v1/jobs?limit=1e309', '/v1/search?query=a&limit=-1e309']) {
      const huge = await h.call(route, { token: 'tok-reader' });
      expect(huge.status).toBe(400);
      expect(await json(huge)).toMatchObject({ code: 'invalid_argument', field: 'limit', rule: 'type' });
    }
  });

  it('refuses a write naming another agent (403, field named, nothing started) unless admin', async () => {
    const before = (await h.runtime.jobs.list(100)).length;
    const res = await h.call('/v1/jobs/mine', { token: 'tok-alice', body: { source: small, agent: 'bob' } });
    expect(res.status).toBe(403);
    expect(await json(res)).toMatchObject({ code: 'permission_denied', field: 'agent', rule: 'token_identity' });
    expect((await h.runtime.jobs.list(100)).length).toBe(before);
    const admin = await h.call('/v1/jobs/mine', { token: 'tok-admin', body: { source: small, agent: 'bob', dry_run: true } });
    expect(admin.status).toBe(202);
    await waitJob(h, (await json<{ job_id: string }>(admin)).job_id);
  });

  it('answers 409 with the running job id for a second job on the same source, and cancels', async () => {
    const first = await h.call('/v1/jobs/mine', { token: 'tok-alice', body: { source: big } });
    expect(first.status).toBe(202);
    const { job_id } = await json<{ job_id: string }>(first);
    const second = await h.call('/v1/jobs/mine', { token: 'tok-alice', body: { source: big } });
    expect(second.status).toBe(409);
    expect(await json(second)).toMatchObject({ code: 'already_running', job_id });
    const cancel = await h.call(`/v1/jobs/${job_id}/cancel`, { token: 'tok-alice', method: 'POST' });
    expect(cancel.status).toBe(200);
    const after = await json<Job>(cancel);
    expect(after.state).toBe('cancelled');
    expect(after.files_seen).toBeLessThan(300);
    expect((await h.call('/v1/jobs/no-such-job', { token: 'tok-reader' })).status).toBe(404);
    expect((await h.call('/v1/jobs/no-such-job/cancel', { token: 'tok-alice', method: 'POST' })).status).toBe(404);
  });

  it('runs sync and delete_by_source as jobs (dry runs report without deleting)', async () => {
    const count = await h.runtime.stores.drawers.count();
    const sync = await h.call('/v1/jobs/sync', { token: 'tok-alice', body: { wing: 'smallwing' } });
    expect(sync.status).toBe(202);
    const syncJob = await waitJob(h, (await json<{ job_id: string }>(sync)).job_id);
    expect(syncJob.state).toBe('completed');
    expect(syncJob.result).toMatchObject({ success: true, dry_run: true });
    const applyAll = await h.call('/v1/jobs/sync', { token: 'tok-alice', body: { apply: true } });
    expect(applyAll.status).toBe(400);
    expect(await json(applyAll)).toMatchObject({ field: 'apply', rule: 'scope_required' });

    const sourceFile = (await h.runtime.stores.drawers.list({ wing: 'smallwing' }, 0, 1)).items[0]!.meta.source_file;
    const del = await h.call('/v1/jobs/delete_by_source', { token: 'tok-alice', body: { source_file: sourceFile } });
    expect(del.status, await del.clone().text()).toBe(202);
    const delJob = await waitJob(h, (await json<{ job_id: string }>(del)).job_id);
    expect(delJob.result).toMatchObject({ success: true, dry_run: true, source_file: sourceFile });
    expect((delJob.result as { match_count: number }).match_count).toBeGreaterThan(0);
    expect(await h.runtime.stores.drawers.count()).toBe(count);
    const missing = await h.call('/v1/jobs/delete_by_source', { token: 'tok-alice', body: {} });
    expect(await json(missing)).toMatchObject({ code: 'invalid_argument', field: 'source_file', rule: 'required' });
  });

  it('tails the logstream: live events with filters, resume from Last-Event-ID, 400 before the stream, 503 over capacity', async () => {
    const writer = await h.mcpClient('tok-alice');
    const append = async (type: string, body: string) => {
      const r = await writer.callTool({ name: 'mempalace_event_append',
        arguments: { type, stream: 'project/api', room: 'general', from_agent: 'alice', body } });
      return (r.structuredContent as { event: { id: string } }).event.id;
    };
    const beforeId = await append('note.before', 'already there');

    const live = await h.call('/logstream/stream?type=note.live', { token: 'tok-reader' });
    expect(live.status).toBe(200);
    expect(live.headers.get('cache-control')).toBe('no-cache');
    expect(live.headers.get('x-accel-buffering')).toBe('no');
    const livePromise = readSse(live, (f) => f.length >= 2, 20_000);
    await new Promise((r) => setTimeout(r, 200));
    const ids = [await append('note.live', 'one'), await append('note.other', 'skip me'), await append('note.live', 'two')];
    const frames = await livePromise;
    expect(frames.map((f) => f.id)).toEqual([ids[0], ids[2]]);
    expect(frames.every((f) => f.event === 'logstream')).toBe(true);
    expect(JSON.parse(frames[1]!.data)).toMatchObject({ id: ids[2], body: 'two', type: 'note.live', from_agent: 'alice' });
    expect(frames.some((f) => f.id === beforeId)).toBe(false);

    // Resume: everything after the cursor is replayed (the query parameter wins over the header).
    const replay = await readSse(await h.call('/logstream/stream', { token: 'tok-reader', headers: { 'last-event-id': beforeId } }), (f) => f.length >= 3,
      10_000);
    expect(replay.map((f) => f.id)).toEqual(ids);
    const replayQuery = await readSse(
      await h.call(`/logstream/stream?since_event_id=${ids[0]}`, { token: 'tok-reader', headers: { 'last-event-id': beforeId } }),
      (f) => f.length >= 2,
      10_000,
    );
    expect(replayQuery.map((f) => f.id)).toEqual(ids.slice(1));

    const badType = await h.call('/logstream/stream?type=Not%20A%20Type', { token: 'tok-reader' });
    expect(badType.status).toBe(400);
    expect(await json(badType)).toMatchObject({ field: 'type' });
    const badCursor = await h.call('/logstream/stream?since_event_id=evt_20200101T000000_000000000000', { token: 'tok-reader' });
    expect(badCursor.status).toBe(400);
    expect(String((await json(badCursor)).error)).toContain('not found');

    // Capacity 3: three open streams, the fourth is refused with the spec's headers.
    const open = await Promise.all([0, 1, 2].map(() => h.call('/logstream/stream', { token: 'tok-reader' })));
    expect(open.map((r) => r.status)).toEqual([200, 200, 200]);
    const refused = await h.call('/logstream/stream', { token: 'tok-reader' });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await refused.text()).toBe('');
    await Promise.all(open.map((r) => r.body!.cancel()));
    // Closed streams give their slots back.
    await expect.poll(async () => {
      const r = await h.call('/logstream/stream', { token: 'tok-reader' });
      await r.body?.cancel();
      return r.status;
    }, { timeout: 5000 }).toBe(200);
  });

  it('serves the mesh estate at /sync/peers, the same payload as mempalace_mesh_peers', async () => {
    const res = await json<Record<string, unknown> & { self: { replica_id: string; profile: Record<string, unknown> } }>(
      await h.call('/sync/peers', { token: 'tok-reader' }),
    );
    const reader = await h.mcpClient('tok-reader');
    const tool = (await reader.callTool({ name: 'mempalace_mesh_peers', arguments: {} })).structuredContent as typeof res;
    const strip = (e: typeof res) => ({ ...e, self: { ...e.self, profile: { ...e.self.profile, advertised_at: '' } },
      origin_profiles: Object.keys(e.origin_profiles as object) });
    expect(strip(res)).toEqual(strip(tool));
    expect(res.self.replica_id).toBe(await h.runtime.stores.logstream.replicaId());
    expect((await h.call('/sync/nothing-here', { token: 'tok-reader' })).status).toBe(404);
  });

  it('reports health per engine and exposes Prometheus metrics', async () => {
    const health = await h.call('/healthz', { token: null });
    expect(health.status).toBe(200);
    const report = await json<{ status: string; engines: Record<string, { status: string; engine: string }> }>(health);
    expect(report.status).toBe('ok');
    expect(Object.keys(report.engines).sort()).toEqual(['drawers', 'embedder', 'graph', 'job_engine', 'job_store', 'locks', 'logstream']);
    expect(report.engines.drawers!.engine).toBe('sqlite');

    const metrics = await h.call('/metrics', { token: 'tok-reader' });
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toMatch(/mempalace_mcp_tool_calls_total\{tool="mempalace_event_append",outcome="ok"\} [1-9]/);
    expect(text).toMatch(/mempalace_mcp_tool_call_duration_seconds_count\{tool="mempalace_event_append"\} [1-9]/);
    expect(text).toMatch(/mempalace_http_requests_total\{method="POST",route="\/v1\/jobs\/mine",status="202"\} [1-9]/);
    expect(text).toMatch(/mempalace_jobs\{kind="mine",state="completed"\} [1-9]/);
    expect(text).toContain('mempalace_store_errors_total');
    expect(text).not.toContain('queue');
  });

  it('refuses oversized bodies with 413 (REST over 256 KiB, /mcp over 16 MiB) and accepts a 4 MiB artifact on /mcp', async () => {
    const big = await h.call('/v1/search', { token: 'tok-reader', body: { query: 'x'.repeat(300 * 1024) } });
    expect(big.status).toBe(413);
    expect(await json(big)).toMatchObject({ code: 'too_large', field: 'body' });
    const huge = await h.call('/mcp', { token: 'tok-alice',
      rawBody: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call',
        params: { name: 'mempalace_status', arguments: { pad: 'y'.repeat(17 * 1024 * 1024) } } }),
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } });
    expect(huge.status).toBe(413);
    expect(await json(huge)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
    const writer = await h.mcpClient('tok-alice');
    const put = await writer.callTool({ name: 'mempalace_artifact_put',
      arguments: { kind: 'file', content: '"\\\n'.repeat(1024 * 1024 + 100).slice(0, 4 * 1024 * 1024), created_by: 'alice' } });
    expect(put.structuredContent).toMatchObject({ success: true });
  });

  it('pins the Host header, sends no CORS headers by default, and sets security headers', async () => {
    // fetch() may not set Host, so this one request goes through node:http.
    const evilStatus = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${h.url}/healthz`, { headers: { host: 'evil.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(evilStatus).toBe(403);
    const foreign = await h.call('/v1/status', { token: 'tok-reader', headers: { origin: 'https://elsewhere.example' } });
    expect(foreign.status).toBe(403);
    const ok = await h.call('/v1/status', { token: 'tok-reader', headers: { origin: h.url } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBeNull();
    expect(ok.headers.get('x-content-type-options')).toBe('nosniff');
    expect(ok.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(ok.headers.get('x-powered-by')).toBeNull();
  });
});

describe('HTTP API limits', () => {
  it('rate-limits per token with 429 and Retry-After; other tokens are unaffected', async () => {
    const h = await startApi({ rateLimit: { ratePerSecond: 1, burst: 3 } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await h.call('/v1/taxonomy', { token: 'tok-reader' })).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const limited = await h.call('/v1/taxonomy', { token: 'tok-reader' });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await json(limited)).toMatchObject({ code: 'rate_limited', retryable: true });
      expect((await h.call('/v1/taxonomy', { token: 'tok-alice' })).status).toBe(200);
    } finally {
      await h.close();
    }
  });

  it('answers CORS only for configured origins', async () => {
    const h = await startApi({ env: { MEMPALACE_CORS_ORIGINS: 'https://ops.example' } });
    try {
      const pre = await h.call('/v1/status', { token: null, method: 'OPTIONS',
        headers: { origin: 'https://ops.example', 'access-control-request-method': 'GET' } });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe('https://ops.example');
      expect(pre.headers.get('access-control-allow-headers')).toContain('Authorization');
      // A browser client may send its own request id and must be able to read the one echoed.
      expect(pre.headers.get('access-control-allow-headers')).toContain('X-Request-Id');
      const get = await h.call('/v1/status', { token: 'tok-reader', headers: { origin: 'https://ops.example' } });
      expect(get.headers.get('access-control-allow-origin')).toBe('https://ops.example');
      expect(get.headers.get('access-control-expose-headers')).toContain('X-Request-Id');
      expect((await h.call('/v1/status', { token: 'tok-reader', headers: { origin: 'https://other.example' } })).status).toBe(403);
    } finally {
      await h.close();
    }
  });

  it('reports a closed store as down (503) on /healthz', async () => {
    const h = await startApi();
    try {
      await h.runtime.stores.graph.close();
      const res = await h.call('/healthz', { token: 'tok-reader' });
      expect(res.status).toBe(503);
      const report = await json<{ status: string; engines: Record<string, { status: string; error?: string }> }>(res);
      expect(report.status).toBe('down');
      expect(report.engines.graph!.status).toBe('down');
      expect(report.engines.graph!.error).toBeTruthy();
      expect(report.engines.drawers!.status).toBe('up');
      const anonymous = await json<{ engines: Record<string, { error?: string }> }>(await h.call('/healthz', { token: null }));
      expect(anonymous.engines.graph!.error).toBeUndefined();
    } finally {
      await h.close();
    }
  });
});
