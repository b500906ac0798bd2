/**
 * Who made and who last changed a fact, a tunnel and a registered source (issue 28), through the
 * faces in process on both profiles: bob changing what alice made records bob as `updated_by`
 * while `created_by`/`added_by` stay alice's, and reverting bob's writes puts back alice's
 * records as they were, ownership included.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import type { Caller } from '../../core/caller.js';
import type { Config } from '../../core/config.js';
import type { RevertSpec } from '../../jobs/job.js';
import type { Runtime } from '../../palace/runtime.js';
import { addSource, getSource, sourcesContext } from '../../palace/sources/registered-sources.js';
import { sourcePolicy } from '../../palace/sources/sources.js';
import { clusterConfig } from '../helpers/cluster-palace.js';
import { openProfilePalace } from '../helpers/profile-palace.js';
import type { ProfilePalace } from '../helpers/profile-palace.js';

const caller = (identity: string): Caller => ({ identity, scopes: ['read', 'write'] });

const PROFILES: [string, (dir: string) => Config][] = [
  ['embedded',
    (dir) => loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(dir, 'palace'), MEMPALACE_ALLOWED_ROOTS: dir })],
  ['cluster', (dir) => clusterConfig('ownership', { MEMPALACE_ALLOWED_ROOTS: dir })],
];

describe.each(PROFILES)('ownership of every change (%s)', (profile, configOf) => {
  let palace: ProfilePalace;
  let dir: string;
  let rt: Runtime;
  const call = (identity: string, name: string, args: Record<string, unknown>) => palace.call(identity, name, args);

  /** A list tool's result is `{ items }` in structuredContent (docs/decisions.md A7). */
  const tunnels = async () => ((await call('alice', 'list_tunnels', { wing: 'team' })) as { items: Record<string, unknown>[] }).items;

  /** Reverts bob's writes since `since` as a job, to its end. */
  async function revertBob(since: string, revertId: string): Promise<void> {
    const spec: RevertSpec = { kind: 'revert', revertId, agent: 'bob', since, by: { identity: 'admin', transport: 'cli', action: 'cli revert' } };
    expect(await rt.jobs.wait((await rt.jobs.start(spec)).job_id, 300_000)).toMatchObject({ state: 'completed' });
  }

  /** The runtime a REST request of `identity` sees, as api/app.ts builds it. */
  const restView = (identity: string) => rt.forCall({ caller: caller(identity), transport: 'rest', action: 'POST /v1/sources', requestId: randomUUID() });

  beforeAll(async () => {
    palace = await openProfilePalace(configOf, 'mp-ownership-');
    ({ dir, rt } = palace);
    await call('alice', 'add_drawer', { wing: 'team', room: 'plans', content: 'alice: the plan' });
    await call('alice', 'add_drawer', { wing: 'team', room: 'notes', content: 'alice: the notes' });
  });
  afterAll(() => palace?.close());

  it("bob ending alice's fact records him as its changer; reverting him puts back her fact as it was", async () => {
    await call('alice', 'kg_add', { subject: 'Service', predicate: 'uses', object: 'Postgres', valid_from: '2025-01-01' });
    const added = (await call('alice', 'kg_query', { entity: 'Service' })) as { facts: Record<string, unknown>[] };
    expect(added.facts).toEqual([expect.objectContaining({ object: 'Postgres', created_by: 'alice', updated_by: null, updated_at: null, current: true })]);

    const since = new Date().toISOString();
    await call('bob', 'kg_invalidate', { subject: 'Service', predicate: 'uses', object: 'Postgres', ended: '2026-01-01' });
    const ended = (await call('alice', 'kg_query', { entity: 'Service' })) as { facts: Record<string, unknown>[] };
    expect(ended.facts).toEqual([expect.objectContaining({ created_by: 'alice', updated_by: 'bob', valid_to: '2026-01-01', current: false })]);
    expect(String(ended.facts[0]!.updated_at) >= since.slice(0, 19)).toBe(true);
    const timeline = (await call('alice', 'kg_timeline', { entity: 'Service' })) as { timeline: Record<string, unknown>[] };
    expect(timeline.timeline).toEqual([expect.objectContaining({ created_by: 'alice', updated_by: 'bob', updated_at: ended.facts[0]!.updated_at })]);

    await call('bob', 'kg_add', { subject: 'Service', predicate: 'uses', object: 'MySQL' });

    await revertBob(since, `rv-fact-${profile}`);
    const reverted = (await call('alice', 'kg_query', { entity: 'Service' })) as { facts: Record<string, unknown>[] };
    // Alice's fact as it was before bob; the fact bob added is ended by the one who reverted him.
    expect(reverted.facts).toEqual([
      expect.objectContaining({ object: 'Postgres', created_by: 'alice', updated_by: null, updated_at: null, valid_to: null, current: true }),
      expect.objectContaining({ object: 'MySQL', created_by: 'bob', updated_by: 'admin', current: false }),
    ]);
  });

  it("bob relabelling alice's tunnel records him as its changer; reverting him gives it back to her unchanged", async () => {
    const ends = { source_wing: 'team', source_room: 'plans', target_wing: 'team', target_room: 'notes' };
    const created = (await call('alice', 'create_tunnel', { ...ends, label: 'plans need notes' })) as Record<string, unknown>;
    expect(created).toMatchObject({ created_by: 'alice', label: 'plans need notes' });
    expect(created).not.toHaveProperty('updated_by');

    const since = new Date().toISOString();
    await call('bob', 'create_tunnel', { ...ends, label: 'notes explain plans' });
    const [changed] = await tunnels();
    expect(changed).toMatchObject({ id: created.id, created_by: 'alice', created_at: created.created_at, updated_by: 'bob', label: 'notes explain plans' });

    await revertBob(since, `rv-tunnel-${profile}`);
    expect(await tunnels()).toEqual([created]);
  });

  it("bob registering alice's source again records him as its changer, and she stays who added it", async () => {
    const project = path.join(dir, 'project');
    fs.mkdirSync(project, { recursive: true });
    const asAlice = restView('alice');
    const first = await addSource(sourcesContext(asAlice, sourcePolicy(asAlice.config)), { location: project, wing: 'team' }, 'alice');
    expect(first).toMatchObject({ added_by: 'alice' });
    expect(first).not.toHaveProperty('updated_by');
    expect(first).not.toHaveProperty('updated_at');

    const asBob = restView('bob');
    const again = await addSource(sourcesContext(asBob, sourcePolicy(asBob.config)), { location: project, wing: 'team', mode: 'convos' }, 'bob');
    expect(again).toMatchObject({ source_id: first.source_id, mode: 'convos', added_by: 'alice', added_at: first.added_at, updated_by: 'bob' });
    expect(again.updated_at! >= first.added_at).toBe(true);
    expect(await getSource(sourcesContext(asAlice, sourcePolicy(asAlice.config)), first.source_id)).toEqual(again);
  });
});
