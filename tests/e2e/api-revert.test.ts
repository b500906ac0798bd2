/**
 * `POST /v1/revert` starts a revert job (issue 28): bad input is refused with the field and the
 * rule and starts nothing; a dry run answers at once with the plan and starts nothing; a revert
 * answers 202 with the job's handle and the revert id, the job shows in `GET /v1/jobs` with the
 * agent and session it works on, and the same request again goes on with the same revert.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobProgress } from '../../jobs/job.js';
import { startApi } from './api-harness.js';
import type { ApiHarness } from './api-harness.js';

describe('POST /v1/revert', () => {
  let h: ApiHarness;
  const drawers: string[] = [];

  beforeAll(async () => {
    h = await startApi();
    const alice = await h.mcpClient('tok-alice');
    for (const content of ['alice: the first note', 'alice: the second note']) {
      const out = await alice.callTool({ name: 'mempalace_add_drawer', arguments: { wing: 'team', room: 'notes', content } });
      drawers.push(String((out.structuredContent as { drawer_id: string }).drawer_id));
    }
  });
  afterAll(async () => {
    await h?.close();
  });

  it('refuses bad input naming the field and the rule, and writes no job record', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ agent: 'alice', colour: 'red' }, 'colour', 'unknown_property'],
      [{ agent: 'alice', since: 'last tuesday' }, 'since', 'iso_date_or_utc_instant'],
      [{ agent: 'alice', wing: 'a/b' }, 'wing', 'path_characters'],
      [{ agent: ' ' }, 'agent', 'non_empty_string'],
      [{}, 'agent', 'required'],
    ];
    for (const [body, field, rule] of cases) {
      const res = await h.call('/v1/revert', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await res.json(), JSON.stringify(body)).toMatchObject({ code: 'invalid_argument', field, rule });
    }
    expect(await h.runtime.jobs.list(10)).toEqual([]);
  });

  it('answers a dry run with the plan, starting no job and changing nothing', async () => {
    const res = await h.call('/v1/revert', { body: { agent: 'alice', dry_run: true } });
    expect(res.status).toBe(200);
    const plan = (await res.json()) as { dry_run: boolean; steps: { item: string; action: string }[]; revert_id: string };
    expect(plan.dry_run).toBe(true);
    expect(plan.steps.map((s) => [s.item, s.action]).sort()).toEqual(drawers.map((id) => [`drawer:${id}`, 'remove_drawer']).sort());
    expect(await h.runtime.jobs.list(10)).toEqual([]);
    expect(await h.runtime.stores.drawers.get(drawers)).toHaveLength(2);
  });

  it('starts a job answering 202; the job lists with its agent, and the same request goes on with the same revert', async () => {
    const headers = { 'x-mempalace-session': 'ops-console' };
    const res = await h.call('/v1/revert', { body: { agent: 'alice' }, headers });
    expect(res.status).toBe(202);
    const started = (await res.json()) as { job_id: string; revert_id: string; events_url: string; progress: JobProgress };
    expect(res.headers.get('location')).toBe(`/v1/jobs/${started.job_id}`);
    expect(started).toMatchObject({ events_url: `/v1/jobs/${started.job_id}/events`, progress: { kind: 'revert', agent: 'alice' } });
    const done = await h.runtime.jobs.wait(started.job_id, 120_000);
    expect(done).toMatchObject({ state: 'completed', files_total: 2, files_seen: 2, result: { success: true, revert_id: started.revert_id, reverted: 2 } });
    expect(await h.runtime.stores.drawers.get(drawers)).toEqual([]);

    const listed = ((await (await h.call('/v1/jobs')).json()) as { jobs: JobProgress[] }).jobs;
    expect(listed.find((j) => j.job_id === started.job_id)).toMatchObject({ kind: 'revert', agent: 'alice', trigger: 'user' });
    const trail = await h.runtime.stores.audit.scan(0, 10_000);
    expect(trail.filter((r) => r.op === 'jobs.start' && r.ids.includes(`job:${started.job_id}`))).toEqual([
      expect.objectContaining({ identity: 'ops', action: 'POST /v1/revert', session: 'ops-console',
        detail: expect.objectContaining({ kind: 'revert', agent: 'alice', revert_id: started.revert_id }) }),
    ]);
    expect(trail.filter((r) => r.op === 'revert.record').map((r) => [r.identity, r.transport, r.request_id, r.session])).toEqual([
      ['ops', 'rest', started.job_id, 'ops-console'],
      ['ops', 'rest', started.job_id, 'ops-console'],
    ]);

    expect(trail.filter((r) => r.op === 'revert.finish')).toEqual([
      expect.objectContaining({ identity: 'ops', request_id: started.job_id, detail: expect.objectContaining({ revert_id: started.revert_id, reverted: 2 }) }),
    ]);

    // The same request again: the same revert id, which has ended, so nothing is applied again.
    const again = (await (await h.call('/v1/revert', { body: { agent: 'alice' }, headers })).json()) as { job_id: string; revert_id: string };
    expect(again.revert_id).toBe(started.revert_id);
    expect(await h.runtime.jobs.wait(again.job_id, 120_000)).toMatchObject({ state: 'completed', files_total: 2, files_skipped: 2, files_seen: 2,
      drawers_written: 0 });
    const after = await h.runtime.stores.audit.scan(0, 10_000);
    expect(after.filter((r) => r.op === 'revert.record')).toHaveLength(2);
    expect(after.filter((r) => r.op === 'revert.finish')).toHaveLength(2);
  });
});
