/**
 * Per-wing grants (issue 28) on both profiles, generated from the tool and route tables:
 * a token `{"team": "write", "*": "read"}` and a token `{"alice": "write"}` cannot see or
 * touch each other's private wings through any MCP tool, any REST route or the dashboard
 * stream. Every tool of mcp/registry.ts and every route of core/scopes.ts must have a case here,
 * so a new one cannot skip the check. (The local CLI runs as the local user: tokens do not apply.)
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../core/caller.js';
import { ROUTE_SCOPES } from '../../core/scopes.js';
import { TOOLS } from '../../mcp/registry.js';
import { Authenticator } from '../../api/auth.js';
import { generateProject } from '../fixtures/generate-project.js';
import { dropClusterPalace } from '../helpers/cluster-palace.js';
import type { ApiHarness } from './api-harness.js';
import { readSse, startApi, tempDir } from './api-harness.js';

const TEAM_MARK = 'zebra-team-secret-4411';
const ALICE_MARK = 'okapi-alice-secret-9022';

const TOKENS: [string, Caller][] = [
  ['tok-team', { identity: 'teamagent', scopes: ['write'], wings: { team: 'write', '*': 'read' } }],
  ['tok-alice', { identity: 'alice', scopes: ['write'], wings: { alice: 'write' } }],
  ['tok-admin', { identity: 'ops', scopes: ['admin'] }],
];

interface Ids {
  teamDrawer: string;
  aliceDrawer: string;
  tunnel: string;
  project: string;
  event: string;
  artifact: string;
}

type Who = 'alice' | 'team';
/** One attempt: `alice` reaches for the team's wing, `team` tries to change alice's. */
interface Attempt {
  who: Who;
  args: Record<string, unknown>;
  /** A write: it must be refused or change nothing. */
  write?: boolean;
}

/** Every tool, by name: what each token tries. Tools of the logstream (not per wing) only must not leak. */
const TOOL_CASES: Record<string, (ids: Ids) => Attempt[]> = {
  mempalace_status: () => [{ who: 'alice', args: {} }],
  mempalace_list_wings: () => [{ who: 'alice', args: {} }],
  mempalace_list_rooms: () => [{ who: 'alice', args: { wing: 'team' } }, { who: 'alice', args: {} }],
  mempalace_get_taxonomy: () => [{ who: 'alice', args: {} }],
  mempalace_get_aaak_spec: () => [{ who: 'alice', args: {} }],
  mempalace_kg_query: () => [{ who: 'alice', args: { entity: 'Zorro' } }, { who: 'alice', args: { entity: 'TeamVault' } }],
  mempalace_kg_add: (
    ids,
  ) => [{ who: 'alice', args: { subject: 'Mallory', predicate: 'owns', object: 'Vault', source_drawer_id: ids.teamDrawer }, write: true }, { who: 'team',
    args: { subject: 'Mallory', predicate: 'owns', object: 'Den', source_drawer_id: ids.aliceDrawer }, write: true }],
  mempalace_kg_invalidate: () => [{ who: 'alice', args: { subject: 'Zorro', predicate: 'guards', object: 'TeamVault' }, write: true }],
  mempalace_kg_supersede:
    () => [{ who: 'alice', args: { subject: 'Zorro', predicate: 'guards', old_object: 'TeamVault', new_object: 'Nothing' }, write: true }],
  mempalace_kg_timeline: () => [{ who: 'alice', args: {} }, { who: 'alice', args: { entity: 'Zorro' } }],
  mempalace_kg_stats: () => [{ who: 'alice', args: {} }],
  mempalace_traverse: () => [{ who: 'alice', args: { start_room: 'general' } }, { who: 'alice', args: { start_room: 'vault' } }],
  mempalace_find_tunnels: () => [{ who: 'alice', args: {} }, { who: 'alice', args: { wing_a: 'team', wing_b: 'alice' } }],
  mempalace_graph_stats: () => [{ who: 'alice', args: {} }],
  mempalace_mesh_peers: () => [{ who: 'alice', args: {} }],
  mempalace_create_tunnel: () => [
    { who: 'alice', args: { source_wing: 'alice', source_room: 'general', target_wing: 'team', target_room: 'vault' }, write: true },
    { who: 'team', args: { source_wing: 'alice', source_room: 'general', target_wing: 'alice', target_room: 'den' }, write: true },
  ],
  mempalace_list_tunnels: () => [{ who: 'alice', args: {} }, { who: 'alice', args: { wing: 'team' } }],
  // Idempotent: a tunnel alice cannot see is absent to her, so she gets the same answer as for any id (and it stays).
  mempalace_delete_tunnel: (ids) => [{ who: 'alice', args: { tunnel_id: ids.tunnel } }],
  mempalace_list_hallways: () => [{ who: 'alice', args: {} }, { who: 'alice', args: { wing: 'team' } }],
  mempalace_delete_hallway: () => [{ who: 'alice', args: { hallway_id: 'hall_0000' }, write: true }],
  mempalace_follow_tunnels: () => [{ who: 'alice', args: { wing: 'alice', room: 'general' } }, { who: 'alice', args: { wing: 'team', room: 'vault' } }],
  mempalace_search: () => [{ who: 'alice', args: { query: 'the vault note' } }, { who: 'alice', args: { query: 'the vault note', wing: 'team' } }],
  mempalace_check_duplicate: () => [{ who: 'alice', args: { content: `the vault note ${TEAM_MARK}`, threshold: 0.1 } }],
  mempalace_add_drawer: () => [
    { who: 'alice', args: { wing: 'team', room: 'vault', content: 'planted by alice' }, write: true },
    { who: 'team', args: { wing: 'alice', room: 'den', content: 'planted by team' }, write: true },
  ],
  mempalace_checkpoint: () => [{ who: 'team', args: { items: [{ wing: 'alice', room: 'den', content: 'planted checkpoint' }] }, write: true }],
  mempalace_delete_drawer: (
    ids,
  ) => [{ who: 'alice', args: { drawer_id: ids.teamDrawer }, write: true }, { who: 'team', args: { drawer_id: ids.aliceDrawer }, write: true }],
  mempalace_mine: (
    ids,
  ) => [{ who: 'alice', args: { source: ids.project, wing: 'team' }, write: true }, { who: 'team', args: { source: ids.project, wing: 'alice' }, write: true },
    { who: 'team', args: { source: ids.project }, write: true }],
  mempalace_delete_by_source:
    () => [{ who: 'alice', args: { source_file: '/notes/team.md', dry_run: false }, write: true }, { who: 'team',
      args: { source_file: '/notes/alice.md', dry_run: false }, write: true }],
  mempalace_sync:
    () => [{ who: 'alice', args: { wing: 'team', apply: true }, write: true }, { who: 'team', args: { wing: 'alice', apply: true }, write: true }],
  mempalace_get_drawer: (ids) => [{ who: 'alice', args: { drawer_id: ids.teamDrawer } }],
  mempalace_list_drawers: () => [{ who: 'alice', args: {} }, { who: 'alice', args: { wing: 'team' } }],
  mempalace_update_drawer: (
    ids,
  ) => [{ who: 'alice', args: { drawer_id: ids.teamDrawer, content: 'overwritten by alice' }, write: true }, { who: 'team',
    args: { drawer_id: ids.aliceDrawer, content: 'overwritten by team' }, write: true }, { who: 'alice', args: { drawer_id: ids.aliceDrawer, wing: 'team' },
    write: true }],
  mempalace_diary_write: () => [{ who: 'team', args: { agent_name: 'teamagent', entry: 'into alice', wing: 'alice' }, write: true }],
  mempalace_diary_read: () => [{ who: 'alice', args: { agent_name: 'teamagent' } }, { who: 'alice', args: { agent_name: 'teamagent', wing: 'team' } }],
  mempalace_hook_settings: () => [{ who: 'alice', args: {} }],
  mempalace_memories_filed_away: () => [{ who: 'alice', args: {} }],
  mempalace_reconnect: () => [{ who: 'alice', args: {}, write: true }],
  mempalace_event_append: () => [{ who: 'alice', args: { type: 'note', stream: 'project/alice', room: 'general', from_agent: 'alice', body: 'hi' } }],
  mempalace_task_create:
    () => [{ who: 'alice',
      args: { project: 'alice', from_agent: 'alice', to_agent: 'teamagent', goal: 'g', branch: 'main', base_commit: 'a'.repeat(40), done: 'd' } }],
  mempalace_event_list: () => [{ who: 'alice', args: {} }],
  mempalace_event_wait: () => [{ who: 'alice', args: { timeout_ms: 10 } }],
  mempalace_event_ack: (ids) => [{ who: 'alice', args: { event_id: ids.event, from_agent: 'alice', status: 'claimed' } }],
  mempalace_artifact_put: () => [{ who: 'alice', args: { kind: 'note', content: 'text', created_by: 'alice' } }],
  mempalace_artifact_get: (ids) => [{ who: 'alice', args: { artifact_id: ids.artifact } }],
  mempalace_patch_submit: () => [{ who: 'alice', args: { content: 'diff --git a/x b/x\n', from_agent: 'alice', stream: 'project/alice' } }],
};

/** What alice must never find in an answer: the team wing's text, ids and facts (unless she asked with it: echoes are no leak). */
function leaks(text: string, ids: Ids, asked = ''): string[] {
  return [TEAM_MARK, ids.teamDrawer, ids.tunnel, 'teamvault'].filter((s) =>
    text.toLowerCase().includes(s.toLowerCase()) && !asked.toLowerCase().includes(s.toLowerCase())
  );
}

function refused(payload: unknown): boolean {
  const p = payload as { error?: unknown; success?: unknown; deleted?: unknown; added?: unknown[]; errors?: unknown[] } | undefined;
  // A checkpoint answers per item: nothing added, every item an error.
  const itemsRefused = Array.isArray(p?.added) && p.added.length === 0 && Array.isArray(p.errors) && p.errors.length > 0;
  return p !== undefined && (typeof p.error === 'string' || p.success === false || p.deleted === false || itemsRefused);
}

/** The cluster run serves the same tools from OpenSearch, Neo4j, Redis and Temporal under a palace of its own. */
const PROFILE_ENV = {
  embedded: {},
  cluster: { MEMPALACE_PROFILE: 'cluster', MEMPALACE_PALACE_NAME: `grants-${randomBytes(5).toString('hex')}` },
};

describe.each(['embedded', 'cluster'] as const)('per-wing grants (%s): team and alice cannot see or touch each other', (profile) => {
  let h: ApiHarness;
  let ids: Ids;
  const clients = {} as Record<Who | 'admin', Client>;

  const snapshot = async () => {
    const s = h.runtime.stores;
    const wing = async (w: string) => (await s.drawers.list({ wing: w }, 0, 100)).items.map((d) => `${d.id}:${d.content}:${d.meta.wing}`).sort();
    return {
      team: await wing('team'),
      alice: await wing('alice'),
      kg: await s.graph.kgTimeline({ limit: 100 }),
      tunnels: await s.graph.tunnelList(),
      hallways: await s.graph.hallwayList(),
      jobs: (await h.runtime.jobs.list(100)).map((j) => j.job_id),
    };
  };

  beforeAll(async () => {
    h = await startApi({ auth: Authenticator.fromTokens(TOKENS), env: PROFILE_ENV[profile] });
    clients.admin = await h.mcpClient('tok-admin');
    clients.alice = await h.mcpClient('tok-alice');
    clients.team = await h.mcpClient('tok-team');
    const add = async (wing: string, room: string, content: string, sourceFile: string) =>
      ((await clients.admin.callTool({ name: 'mempalace_add_drawer', arguments: { wing, room, content, source_file: sourceFile, added_by: 'ops' } }))
        .structuredContent as { drawer_id: string }).drawer_id;
    const teamDrawer = await add('team', 'vault', `the vault note ${TEAM_MARK}`, '/notes/team.md');
    const aliceDrawer = await add('alice', 'den', `the den note ${ALICE_MARK}`, '/notes/alice.md');
    await clients.admin.callTool({ name: 'mempalace_kg_add',
      arguments: { subject: 'Zorro', predicate: 'guards', object: 'TeamVault', source_drawer_id: teamDrawer } });
    const tunnel =
      (await clients.admin.callTool({ name: 'mempalace_create_tunnel',
        arguments: { source_wing: 'team', source_room: 'vault', target_wing: 'alice', target_room: 'den' } })).structuredContent as { tunnel_id?: string;
          id?: string; tunnel?: { id: string } };
    const event =
      (await clients.admin.callTool({ name: 'mempalace_event_append',
        arguments: { type: 'note', stream: 'project/x', room: 'general', from_agent: 'ops', body: 'hello' } })).structuredContent as { event: { id: string } };
    const artifact = (await clients.admin.callTool({ name: 'mempalace_artifact_put', arguments: { kind: 'note', content: 'a note', created_by: 'ops' } }))
      .structuredContent as { artifact: { id: string } };
    const project = path.join(tempDir('src'), 'grants-project');
    await generateProject(project, 2, 2);
    ids = { teamDrawer, aliceDrawer, tunnel: tunnel.tunnel_id ?? tunnel.id ?? tunnel.tunnel?.id ?? '', project, event: event.event.id,
      artifact: artifact.artifact.id };
    expect(ids.tunnel).not.toBe('');
  });
  afterAll(async () => {
    const config = h?.runtime.config;
    await h?.close();
    if (config?.profile === 'cluster') await dropClusterPalace(config);
  });

  it('has a case for every tool and every route', () => {
    expect(Object.keys(TOOL_CASES).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    expect(Object.keys(ROUTE_CASES).sort()).toEqual(Object.keys(ROUTE_SCOPES).sort());
  });

  it("every tool: alice sees nothing of the team wing, neither changes the other's wing", async () => {
    const before = await snapshot();
    for (const t of TOOLS) {
      for (const a of TOOL_CASES[t.name]!(ids)) {
        const result = await clients[a.who].callTool({ name: t.name, arguments: a.args });
        const text = JSON.stringify(result);
        if (a.who === 'alice') expect(leaks(text, ids, JSON.stringify(a.args)), `${t.name} ${JSON.stringify(a.args)}`).toEqual([]);
        if (a.write) expect(refused(result.structuredContent) || result.isError === true, `${t.name} ${JSON.stringify(a.args)}: ${text}`).toBe(true);
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  it('counts do not leak hidden wings', async () => {
    const status = (await clients.alice.callTool({ name: 'mempalace_status', arguments: {} })).structuredContent as { total_drawers: number;
      wings: Record<string, number> };
    expect(status.total_drawers).toBe(1);
    expect(Object.keys(status.wings)).toEqual(['alice']);
    const kg = (await clients.alice.callTool({ name: 'mempalace_kg_stats', arguments: {} })).structuredContent as { triples: number };
    expect(kg.triples).toBe(0);
    const facts = (await clients.alice.callTool({ name: 'mempalace_kg_query', arguments: { entity: 'Zorro' } })).structuredContent as { facts: unknown[] };
    expect(facts.facts).toEqual([]);
    const teamFacts = (await clients.team.callTool({ name: 'mempalace_kg_query', arguments: { entity: 'Zorro' } })).structuredContent as { facts: unknown[] };
    expect(teamFacts.facts).toHaveLength(1);
    const teamView = (await clients.team.callTool({ name: 'mempalace_status', arguments: {} })).structuredContent as { total_drawers: number };
    expect(teamView.total_drawers).toBe(2);
  });

  it('a refused write names the field and the rule, and writes within the grant still work', async () => {
    const refusal = (await clients.team.callTool({ name: 'mempalace_add_drawer', arguments: { wing: 'alice', room: 'den', content: 'x' } }))
      .structuredContent as Record<string, unknown>;
    expect(refusal).toMatchObject({ field: 'wing', rule: 'wing_grant' });
    const ok = (await clients.team.callTool({ name: 'mempalace_add_drawer', arguments: { wing: 'team', room: 'vault', content: 'a team note' } }))
      .structuredContent as { success: boolean; drawer_id: string };
    expect(ok.success).toBe(true);
    await clients.admin.callTool({ name: 'mempalace_delete_drawer', arguments: { drawer_id: ok.drawer_id } });
  });

  it('a diary entry is changed by its agent or an admin only, even in a wing the caller may write', async () => {
    const written = (await clients.admin.callTool({ name: 'mempalace_diary_write', arguments: { agent_name: 'ops', entry: 'ops notes', wing: 'team' } }))
      .structuredContent as { entry_id: string };
    for (const [name, args] of [['mempalace_update_drawer', { drawer_id: written.entry_id, content: 'rewritten' }], ['mempalace_delete_drawer', {
      drawer_id: written.entry_id,
    }]] as const) {
      const refusal = (await clients.team.callTool({ name, arguments: args })).structuredContent as Record<string, unknown>;
      expect(refusal, name).toMatchObject({ rule: 'diary_owner', field: 'agent_name' });
    }
    expect((await h.runtime.stores.drawers.get([written.entry_id]))[0]?.content).toBe('ops notes');
    await clients.admin.callTool({ name: 'mempalace_delete_drawer', arguments: { drawer_id: written.entry_id } });
  });

  it('a drawer changed by another agent records who changed it beside who filed it', async () => {
    const filed =
      (await clients.admin.callTool({ name: 'mempalace_add_drawer',
        arguments: { wing: 'team', room: 'vault', content: 'the shared runbook', added_by: 'ops' } })).structuredContent as { drawer_id: string };
    const before = (await clients.team.callTool({ name: 'mempalace_get_drawer', arguments: { drawer_id: filed.drawer_id } })).structuredContent as {
      metadata: Record<string, unknown>;
    };
    expect(before.metadata).toMatchObject({ added_by: 'ops' });
    expect(before.metadata).not.toHaveProperty('updated_by');
    await clients.team.callTool({ name: 'mempalace_update_drawer', arguments: { drawer_id: filed.drawer_id, content: 'the shared runbook, revised' } });
    const after = (await clients.team.callTool({ name: 'mempalace_get_drawer', arguments: { drawer_id: filed.drawer_id } })).structuredContent as {
      content: string;
      metadata: Record<string, unknown>;
    };
    expect(after.content).toBe('the shared runbook, revised');
    expect(after.metadata).toMatchObject({ added_by: 'ops', filed_at: before.metadata.filed_at, updated_by: 'teamagent' });
    expect(String(after.metadata.updated_at) > String(before.metadata.filed_at)).toBe(true);
    await clients.admin.callTool({ name: 'mempalace_delete_drawer', arguments: { drawer_id: filed.drawer_id } });
  });

  it('every REST route: alice sees nothing of the team wing, and the dashboard stream neither', async () => {
    const before = await snapshot();
    for (const [key, attempt] of Object.entries(ROUTE_CASES)) {
      const a = attempt(ids);
      if (a === undefined) continue;
      const [method, route] = key.split(' ') as [string, string];
      const res = await h.call(a.path ?? route, { token: 'tok-alice', method, ...(a.body === undefined ? {} : { body: a.body }) });
      const text = a.sse ? (await readSse(res, (f) => f.length >= a.sse!, 5_000)).map((f) => `${f.event}:${f.data}`).join('\n') : await res.text();
      expect(leaks(text, ids), key).toEqual([]);
      if (a.write) expect(res.status, `${key}: ${text}`).toBeGreaterThanOrEqual(400);
    }
    expect(await snapshot()).toEqual(before);
  });
});

interface RouteAttempt {
  path?: string;
  body?: unknown;
  write?: boolean;
  /** An event stream: read this many frames. */
  sse?: number;
}

/** Every route, by its scope-table key; undefined: a route without palace data (its reason beside it). */
const ROUTE_CASES: Record<string, (ids: Ids) => RouteAttempt | undefined> = {
  'POST /mcp': () => undefined, // every tool above
  'GET /v1/status': () => ({}),
  'GET /v1/taxonomy': () => ({}),
  'GET /v1/search': () => ({ path: '/v1/search?query=the%20vault%20note' }),
  'POST /v1/search': () => ({ body: { query: 'the vault note' } }),
  'POST /v1/jobs/mine': (ids) => ({ body: { source: ids.project, wing: 'team' }, write: true }),
  'POST /v1/jobs/sync': () => ({ body: { wing: 'team', apply: true }, write: true }),
  'POST /v1/jobs/delete_by_source': () => ({ body: { source_file: '/notes/team.md', dry_run: false }, write: true }),
  'GET /v1/jobs': () => ({}),
  'GET /v1/jobs/:id': () => ({ path: '/v1/jobs/job_missing' }),
  'POST /v1/jobs/:id/cancel': () => ({ path: '/v1/jobs/job_missing/cancel', write: true }),
  'GET /v1/jobs/:id/events': () => ({ path: '/v1/jobs/job_missing/events' }),
  'GET /logstream/stream': () => undefined, // the logstream is not per wing
  'GET /sync/peers': () => ({}),
  'GET /sync/version_vector': () => undefined, // replication of the logstream
  'GET /sync/ops': () => undefined,
  'GET /sync/artifact': () => undefined,
  'GET /v1/dashboard/stream': () => ({ sse: 4 }),
  'GET /v1/sources': () => ({}),
  'POST /v1/sources': (ids) => ({ body: { location: ids.project, wing: 'team' }, write: true }),
  'GET /v1/sources/:id': () => ({ path: '/v1/sources/src_missing' }),
  'DELETE /v1/sources/:id': () => ({ path: '/v1/sources/src_missing', write: true }),
  'POST /v1/sources/:id/refresh': () => ({ path: '/v1/sources/src_missing/refresh', write: true }),
  'GET /v1/notifications': () => ({}),
  'POST /v1/dead-letters/:queue/:id/retry': () => undefined, // operator queue, no wing data
  'POST /v1/hooks/git': () => undefined, // signed by the provider, no token
  'GET /metrics': () => undefined, // job counters and latencies, no wing names
  'GET /v1/audit': () => ({}), // admin only: a write token is refused and sees no record
  'POST /v1/revert': () => ({ body: { agent: 'teamagent', dry_run: false }, write: true }),
  'GET /healthz': () => undefined,
  'GET /v1/openapi.json': () => undefined,
};
