/**
 * A read-scoped token changes nothing: every REST route registered in the router is called
 * (mutating ones answer 403), every tool of the mutating set is called through /mcp with the SDK
 * client and otherwise-valid arguments (each refused for lack of write scope), and every count
 * the palace keeps is the same afterwards.
 */
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTE_SCOPES } from '../../core/scopes.js';
import { TOOLS } from '../../mcp/registry.js';
import { generateProject } from '../fixtures/generate-project.js';
import type { ApiHarness } from './api-harness.js';
import { readSse, startApi, tempDir } from './api-harness.js';

/** Arguments that a write token could use successfully; identity fields name the reader itself. */
function argsFor(tool: string, ids: { drawer: string; event: string; source: string; project: string }): Record<string, unknown> {
  const me = 'reader';
  const table: Record<string, Record<string, unknown>> = {
    mempalace_kg_add: { subject: 'Alice', predicate: 'works_on', object: 'Palace' },
    mempalace_kg_invalidate: { subject: 'Alice', predicate: 'works_on', object: 'Palace' },
    mempalace_kg_supersede: { subject: 'Alice', predicate: 'works_on', old_object: 'Palace', new_object: 'Garden' },
    mempalace_create_tunnel: { source_wing: 'ro', source_room: 'general', target_wing: 'ro2', target_room: 'general' },
    mempalace_delete_tunnel: { tunnel_id: 'tun_0000' },
    mempalace_delete_hallway: { hallway_id: 'hall_0000' },
    mempalace_add_drawer: { wing: 'ro', room: 'general', content: 'a note the reader may not file', added_by: me },
    mempalace_checkpoint: { items: [{ wing: 'ro', room: 'general', content: 'checkpoint item' }], added_by: me },
    mempalace_delete_drawer: { drawer_id: ids.drawer },
    mempalace_mine: { source: ids.project, agent: me },
    mempalace_delete_by_source: { source_file: ids.source, dry_run: false },
    mempalace_sync: { wing: 'ro', apply: true },
    mempalace_update_drawer: { drawer_id: ids.drawer, content: 'changed' },
    mempalace_diary_write: { agent_name: me, entry: 'dear diary' },
    mempalace_hook_settings: { silent_save: true },
    mempalace_memories_filed_away: {},
    mempalace_event_append: { type: 'note', stream: 'project/ro', room: 'general', from_agent: me, body: 'hello' },
    mempalace_task_create: { project: 'ro', from_agent: me, to_agent: 'alice', goal: 'do it', branch: 'main', base_commit: 'a'.repeat(40), done: 'tests pass' },
    mempalace_event_ack: { event_id: ids.event, from_agent: me, status: 'claimed' },
    mempalace_artifact_put: { kind: 'note', content: 'text', created_by: me },
    mempalace_patch_submit: { content: 'diff --git a/x b/x\n', from_agent: me, stream: 'project/ro' },
  };
  const args = table[tool];
  if (!args) throw new Error(`no arguments written for mutating tool ${tool}`);
  return args;
}

interface RouteLayer {
  route?: { path: string; methods: Record<string, boolean> };
}

describe('a read-scoped token cannot change anything', () => {
  let h: ApiHarness;
  let admin: Client;
  let reader: Client;
  let ids: { drawer: string; event: string; source: string; project: string; job: string; registeredSource: string; artifact: string };

  const snapshot = async () => {
    const s = h.runtime.stores;
    return {
      drawers: await s.drawers.count(),
      taxonomy: await s.drawers.taxonomy(),
      kg: await s.graph.kgStats(),
      tunnels: await s.graph.tunnelCount(),
      hallways: (await s.graph.hallwayList()).length,
      events: await s.logstream.versionVector(),
      jobs: (await h.runtime.jobs.list(100)).map((j) => `${j.job_id}:${j.state}:${j.updated_at}`),
      drawer: (await s.drawers.get([ids.drawer])).map((d) => d.content),
    };
  };

  beforeAll(async () => {
    h = await startApi();
    const project = path.join(tempDir('src'), 'ro-project');
    await generateProject(project, 5, 5);
    const start = await h.call('/v1/jobs/mine', { token: 'tok-admin', body: { source: project, wing: 'ro' } });
    const { job_id: job } = (await start.json()) as { job_id: string };
    await readSse(await h.call(`/v1/jobs/${job}/events`), (f) => f.some((x) => x.event === 'end'), 120_000);
    admin = await h.mcpClient('tok-admin');
    reader = await h.mcpClient('tok-reader');
    const drawer = (await h.runtime.stores.drawers.list({ wing: 'ro' }, 0, 1)).items[0]!;
    const event =
      (await admin.callTool({ name: 'mempalace_event_append',
        arguments: { type: 'task.request', stream: 'project/ro', room: 'delegation', from_agent: 'ops', to_agent: 'reader', body: 'please' } }))
        .structuredContent as { event: { id: string } };
    await admin.callTool({ name: 'mempalace_kg_add', arguments: { subject: 'Alice', predicate: 'works_on', object: 'Palace' } });
    const registered = await h.call('/v1/sources', { token: 'tok-admin', body: { location: project, wing: 'ro' } });
    const { source_id: registeredSource } = (await registered.json()) as { source_id: string };
    const artifact = (await admin.callTool({ name: 'mempalace_artifact_put', arguments: { kind: 'note', content: 'a note', created_by: 'ops' } }))
      .structuredContent as { artifact: { id: string } };
    ids = { drawer: drawer.id, event: event.event.id, source: drawer.meta.source_file, project, job, registeredSource, artifact: artifact.artifact.id };
  });
  afterAll(async () => {
    await h?.close();
  });

  it('every REST route: mutating ones answer 403, nothing changes', async () => {
    const before = await snapshot();
    const bodies: Record<string, unknown> = {
      'POST /v1/jobs/mine': { source: ids.project, wing: 'ro' },
      'POST /v1/jobs/sync': { wing: 'ro', apply: true },
      'POST /v1/jobs/delete_by_source': { source_file: ids.source, dry_run: false },
      'POST /v1/search': { query: 'lease' },
    };
    const readOnlyPosts = new Set(['POST /v1/search']);
    // Reads whose query parameters are required.
    const readQuery: Record<string, string> = { '/v1/search': '?query=lease', '/sync/ops': '?origin=rep_000000000000',
      '/sync/artifact': `?id=${ids.artifact}` };
    let mutating = 0;
    for (const layer of h.api.routes.stack as unknown as RouteLayer[]) {
      if (!layer.route) continue;
      const routePath =
        layer.route.path.replace(':id', layer.route.path.startsWith('/v1/sources/') ? ids.registeredSource : ids.job).replace(':queue', 'notifications') +
        (readQuery[layer.route.path] ?? '');
      for (const method of Object.keys(layer.route.methods).map((m) => m.toUpperCase())) {
        const key = `${method} ${layer.route.path}`;
        const res = await h.call(routePath, { token: 'tok-reader', method, ...(bodies[key] === undefined ? {} : { body: bodies[key] }) });
        if (key === 'POST /v1/hooks/git') {
          // Authenticated by its signature, not by the token: an unsigned push is refused.
          expect([400, 401], key).toContain(res.status);
          await res.body?.cancel();
        } else if (method !== 'GET' && !readOnlyPosts.has(key) || ROUTE_SCOPES[key] === 'admin') {
          // Every write, and the admin reads (the audit trail), refused naming the scope the table gives.
          mutating += 1;
          expect(res.status, key).toBe(403);
          expect(await res.json(), key).toMatchObject({ code: 'permission_denied', required_scope: ROUTE_SCOPES[key] });
        } else {
          expect(res.status, key).toBeLessThan(400);
          await res.body?.cancel();
        }
      }
    }
    // Every route the scope table marks write or admin was called and refused.
    expect(mutating).toBe(Object.values(ROUTE_SCOPES).filter((scope) => scope === 'write' || scope === 'admin').length);
    expect(await snapshot()).toEqual(before);
  });

  it('every mutating MCP tool is refused for lack of write scope, nothing changes', async () => {
    const mutatingTools = TOOLS.filter((t) => t.guards.readOnlyRefused).map((t) => t.name);
    expect(mutatingTools.length).toBe(21);
    const before = await snapshot();
    for (const name of mutatingTools) {
      const result = await reader.callTool({ name, arguments: argsFor(name, ids) });
      const payload = result.structuredContent as { error?: string; success?: boolean };
      expect(payload.error, name).toBe(`this token has no write scope; ${name} needs it`);
      expect(payload.success === undefined || payload.success === false, name).toBe(true);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('the same arguments succeed with a write token, so the refusals were about the scope', async () => {
    const writer = await h.mcpClient('tok-admin');
    const event = await writer.callTool({ name: 'mempalace_event_append', arguments: { ...argsFor('mempalace_event_append', ids), from_agent: 'ops' } });
    expect(event.structuredContent).toMatchObject({ success: true });
    const drawer = await writer.callTool({ name: 'mempalace_add_drawer', arguments: { ...argsFor('mempalace_add_drawer', ids), added_by: 'ops' } });
    expect(drawer.structuredContent).toMatchObject({ success: true });
  });
});
