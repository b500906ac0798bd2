/**
 * Every one of the 45 tools, over stdio and over Streamable HTTP, with the real runtime and the
 * real MiniLM embedder: tools/list order and schemas, one valid call per tool (result checked
 * against the tool's outputSchema with ajv and for its meaning), one invalid call per tool
 * (structured error, nothing written).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './mcp-harness.js';
import { call, items, learnSchemas, makeProject, rpcError, snapshot, startClusterWorker, startHttp, startStdio } from './mcp-harness.js';

/** docs/tools.md §1, typed from the spec. */
const EXPECTED_ORDER = `status list_wings list_rooms get_taxonomy get_aaak_spec kg_query kg_add kg_invalidate
kg_supersede kg_timeline kg_stats traverse find_tunnels graph_stats mesh_peers create_tunnel list_tunnels delete_tunnel
list_hallways delete_hallway follow_tunnels search check_duplicate add_drawer checkpoint delete_drawer mine
delete_by_source sync get_drawer list_drawers update_drawer diary_write diary_read hook_settings memories_filed_away
reconnect event_append task_create event_list event_wait event_ack artifact_put artifact_get patch_submit`.split(/\s+/).map((n) => `mempalace_${n}`);

const M = `add_drawer checkpoint delete_drawer mine delete_by_source sync update_drawer kg_add kg_invalidate kg_supersede
create_tunnel delete_tunnel delete_hallway diary_write task_create event_append event_ack artifact_put patch_submit`.split(/\s+/).map((n) => `mempalace_${n}`);
const R = [...M, 'mempalace_hook_settings', 'mempalace_memories_filed_away'];

const resourceText = (r: { contents: unknown[] }) => (r.contents[0] as { text: string }).text;
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

const LONG = Array.from({ length: 30 },
  (_, i) => `Decision ${i}: the ingestion service keeps its queue in Redis streams and acknowledges each batch after the write.`).join('\n');

// Both transports on both profiles: the cluster runs use the real engines of deploy/local
// (OpenSearch, Neo4j, Redis) under a palace name of their own.
const RUNS = [
  { kind: 'http', profile: 'embedded' },
  { kind: 'stdio', profile: 'embedded' },
  { kind: 'http', profile: 'cluster' },
  { kind: 'stdio', profile: 'cluster' },
] as const;

describe.each(RUNS)('MCP tools over $kind, $profile profile', ({ kind, profile }) => {
  let h: Harness;
  let worker: { stop(): Promise<void> } | undefined;
  let c: Client;
  let project: string;
  const ids: Record<string, string> = {};
  let longAdd: Record<string, unknown> = {};

  beforeAll(async () => {
    const env: Record<string, string> = profile === 'cluster'
      ? { MEMPALACE_PROFILE: 'cluster', MEMPALACE_PALACE_NAME: `e2e-${kind}-${Date.now().toString(36)}` }
      : {};
    if (profile === 'cluster') worker = await startClusterWorker(env);
    h = kind === 'http' ? await startHttp({ env }) : await startStdio({ env });
    c = h.client;
    await learnSchemas(c);
    project = makeProject();
  });
  afterAll(async () => {
    await h?.close();
    await worker?.stop();
  });

  it('lists exactly the 45 tools in the contract order with strict input schemas, output schemas and annotations', async () => {
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual(EXPECTED_ORDER);
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      expect((t.inputSchema as { additionalProperties?: unknown }).additionalProperties).toBe(false);
      expect(t.inputSchema).not.toHaveProperty('anyOf');
      expect(t.outputSchema?.type).toBe('object');
      expect(t.annotations?.readOnlyHint).toBe(!R.includes(t.name));
      expect(t.annotations?.openWorldHint).toBe(t.name === 'mempalace_mine');
      expect(t.description!.length).toBeGreaterThan(40);
    }
    const destructive = tools.filter((t) => t.annotations?.destructiveHint).map((t) => t.name);
    expect(destructive).toEqual(
      expect.arrayContaining(['mempalace_delete_drawer', 'mempalace_delete_by_source', 'mempalace_sync', 'mempalace_kg_invalidate', 'mempalace_kg_supersede']),
    );
    expect(tools.find((t) => t.name === 'mempalace_add_drawer')?.annotations?.idempotentHint).toBe(true);
  });

  it('status and get_aaak_spec: overview, protocol, AAAK and diagnostics', async () => {
    const status0 = await call(c, 'mempalace_status');
    expect(status0.total_drawers).toBe(0);
    expect(status0.protocol).toContain('mempalace_kg_supersede');
    expect(status0.sqlite_integrity).toMatchObject({ checked: false, ok: null });
    expect(status0.library_versions).toMatchObject({ stale: false, packages: [] });
    expect((status0.updates as { server: { installed: string } }).server.installed).toMatch(/^\d+\.\d+\.\d+/);
    const aaak = await call(c, 'mempalace_get_aaak_spec');
    expect(aaak.aaak_spec).toBe(status0.aaak_dialect);
    expect(aaak.aaak_spec).toContain('hall_facts');
  });

  it('add_drawer, list_wings, list_rooms, get_taxonomy, search, check_duplicate, update_drawer', async () => {
    const a = await call(c, 'mempalace_add_drawer', { wing: 'alpha', room: 'backend',
      content: 'The billing service retries failed card charges three times with exponential backoff.', added_by: 'ops' });
    expect(a).toMatchObject({ success: true, wing: 'alpha', room: 'backend', chunks: 1 });
    expect(a.drawer_id).toMatch(/^drawer_alpha_backend_[0-9a-f]{24}$/);
    expect(
      await call(c, 'mempalace_add_drawer', { wing: 'alpha', room: 'backend',
        content: 'The billing service retries failed card charges three times with exponential backoff.' }),
    )
      .toEqual({ success: true, reason: 'already_exists', drawer_id: a.drawer_id });
    const b = await call(c, 'mempalace_add_drawer', { wing: 'beta', room: 'backend', content: 'Our mobile app caches user avatars on disk for seven days.' });
    const long = await call(c, 'mempalace_add_drawer', { wing: 'alpha', room: 'decisions', content: LONG });
    ids.a = a.drawer_id as string;
    ids.b = b.drawer_id as string;
    longAdd = long;
    expect(long.chunks as number).toBeGreaterThan(1);
    expect((long.chunk_ids as string[]).length).toBe(long.chunks);

    expect(await call(c, 'mempalace_list_wings')).toEqual({ wings: { alpha: 1 + (long.chunks as number), beta: 1 } });
    expect(await call(c, 'mempalace_list_rooms', { wing: 'alpha' })).toEqual({ wing: 'alpha', rooms: { backend: 1, decisions: long.chunks } });
    expect((await call(c, 'mempalace_get_taxonomy')).taxonomy).toEqual({ alpha: { backend: 1, decisions: long.chunks }, beta: { backend: 1 } });

    const found = await call(c, 'mempalace_search', { query: 'how are failed card payments retried?', limit: '3' });
    expect((found.results as { drawer_id: string }[])[0]!.drawer_id).toBe(a.drawer_id);
    expect(found.filters).toEqual({ wing: null, room: null, source_file: null, since: null, before: null });
    const dup = await call(c, 'mempalace_check_duplicate', { content: 'Our mobile app caches user avatars on disk for seven days.' });
    expect(dup.is_duplicate).toBe(true);
    expect((dup.matches as { id: string; similarity: number }[])[0]).toMatchObject({ id: b.drawer_id, similarity: 1 });

    const conflict = await call(c, 'mempalace_update_drawer', { drawer_id: a.drawer_id, content: 'changed', if_unchanged: '0'.repeat(64) });
    expect(conflict).toMatchObject({ success: false, conflict: true, truncated_token: false });
    const aSha = (await call(c, 'mempalace_get_drawer', { drawer_id: a.drawer_id })).content_sha256 as string;
    expect(
      await call(c, 'mempalace_update_drawer', { drawer_id: a.drawer_id, content: 'The billing service retries failed charges five times.',
        if_unchanged: aSha }),
    )
      .toEqual({ success: true, drawer_id: a.drawer_id, wing: 'alpha', room: 'backend' });
    expect((await call(c, 'mempalace_get_drawer', { drawer_id: a.drawer_id })).content).toBe('The billing service retries failed charges five times.');
  });

  it('get_drawer and list_drawers resolve a chunked drawer as one logical drawer', async () => {
    const got = await call(c, 'mempalace_get_drawer', { drawer_id: longAdd.drawer_id });
    expect(got.content_sha256).toBe(sha256(LONG));
    expect(got.content).toBe(LONG);
    expect(got.chunk_ids).toEqual(longAdd.chunk_ids);
    const page = await call(c, 'mempalace_list_drawers', { wing: 'alpha', limit: 500 });
    expect(page).toMatchObject({ total: 2, count: 2, offset: 0, limit: 100 });
  });

  it('checkpoint, diary_write, diary_read', async () => {
    const cp = await call(c, 'mempalace_checkpoint', {
      items: [
        { wing: 'beta', room: 'backend', content: 'Our mobile app caches user avatars on disk for seven days.' },
        { wing: 'beta', room: 'frontend', content: 'The settings page uses a two-column layout on tablets.' },
        { wing: 'beta' },
      ],
      diary: { agent_name: 'ops', entry: 'SESSION:2026-04-01 | avatars.layout | ★★' },
    });
    expect((cp.added as unknown[]).length).toBe(1);
    expect((cp.duplicates as { room: string }[])[0]!.room).toBe('backend');
    expect(cp.errors).toEqual([{ item: { wing: 'beta' }, error: 'wing, room, content must be non-empty strings' }]);
    expect(cp.diary).toMatchObject({ success: true, agent: 'ops', topic: 'session-checkpoint' });

    const dw = await call(c, 'mempalace_diary_write', { agent_name: 'OPS', content: 'SESSION:2026-04-02 | billing.retries | ★★★' });
    expect(dw).toMatchObject({ success: true, agent: 'ops', topic: 'general', chunks: 1 });
    const dr = await call(c, 'mempalace_diary_read', { agent_name: 'ops' });
    expect(dr.total).toBe(2);
    expect((dr.entries as { content: string }[])[0]!.content).toBe('SESSION:2026-04-02 | billing.retries | ★★★');
  });

  it('the six knowledge-graph tools', async () => {
    const added = await call(c, 'mempalace_kg_add', { subject: 'Max', predicate: 'works at', object: 'Acme', valid_from: '2024-01-01' });
    expect(added).toMatchObject({ success: true, fact: 'Max → works at → Acme' });
    await call(c, 'mempalace_kg_add', { subject: 'Max', predicate: 'likes', object: 'tea' });
    expect(await call(c, 'mempalace_kg_supersede', { subject: 'Max', predicate: 'works_at', old_object: 'Acme', new_object: 'Globex', at: '2025-06-01' }))
      .toMatchObject({ success: true, superseded: 'Acme', fact: 'Max → works_at → Globex' });
    const asOf = await call(c, 'mempalace_kg_query', { entity: 'Max', as_of: '2025-06-01', direction: 'outgoing' });
    expect((asOf.facts as { predicate: string; object: string }[]).filter((f) => f.predicate === 'works_at').map((f) => f.object)).toEqual(['Globex']);
    expect(await call(c, 'mempalace_kg_invalidate', { subject: 'Max', predicate: 'likes', object: 'tea', ended: '2025-12-31' }))
      .toEqual({ success: true, fact: 'Max → likes → tea', ended: '2025-12-31' });
    const tl = await call(c, 'mempalace_kg_timeline', { entity: 'Max' });
    expect(tl.count).toBe(3);
    expect(await call(c, 'mempalace_kg_stats')).toMatchObject({ triples: 3, current_facts: 1, expired_facts: 2, relationship_types: ['likes', 'works_at'] });
  });

  it('the nine navigation tools', async () => {
    const b = { drawer_id: ids.b };
    const walk = await items(c, 'mempalace_traverse', { start_room: 'backend' });
    expect(walk[0]).toMatchObject({ room: 'backend', hop: 0, wings: ['alpha', 'beta'] });
    const bridges = await items(c, 'mempalace_find_tunnels', { wing_a: 'alpha', wing_b: 'beta' });
    expect(bridges.map((t) => t.room)).toEqual(['backend']);
    expect(await call(c, 'mempalace_graph_stats')).toMatchObject({ tunnel_rooms: 1 });
    const tunnel = await call(c, 'mempalace_create_tunnel', { source_wing: 'alpha', source_room: 'backend', target_wing: 'beta', target_room: 'backend',
      label: 'shared retry policy', target_drawer_id: b.drawer_id });
    expect(tunnel.id).toMatch(/^[0-9a-f]{16}$/);
    expect((await items(c, 'mempalace_list_tunnels', { wing: 'beta' })).map((t) => t.id)).toEqual([tunnel.id]);
    const follow = await items(c, 'mempalace_follow_tunnels', { wing: 'alpha', room: 'backend' });
    expect(follow).toEqual([{ direction: 'outgoing', connected_wing: 'beta', connected_room: 'backend', label: 'shared retry policy', drawer_id: b.drawer_id,
      tunnel_id: tunnel.id, drawer_preview: 'Our mobile app caches user avatars on disk for seven days.' }]);
    expect(await call(c, 'mempalace_delete_tunnel', { tunnel_id: tunnel.id })).toEqual({ deleted: tunnel.id });
    expect(await items(c, 'mempalace_list_tunnels')).toEqual([]);
    expect(Array.isArray(await items(c, 'mempalace_list_hallways'))).toBe(true);
    expect(await call(c, 'mempalace_delete_hallway', { hallway_id: 'hallway_alpha_nobody_none_00000000' })).toEqual({ deleted: false });
  });

  it('mine (with progress notifications), delete_by_source, sync', async () => {
    const before = (await call(c, 'mempalace_status')).total_drawers as number;
    const progress: unknown[] = [];
    const mined = await call(c, 'mempalace_mine', { source: project, mode: 'projects', wing: 'harbour' }, { onprogress: () => progress.push(1) });
    expect(mined).toMatchObject({ success: true, mode: 'projects', dry_run: false });
    expect(typeof mined.output).toBe('string');
    expect(progress.length).toBeGreaterThan(0);
    const afterMine = (await call(c, 'mempalace_status')).total_drawers as number;
    expect(afterMine).toBeGreaterThan(before);
    expect((await call(c, 'mempalace_mine', { source: project, wing: 'harbour' })).success).toBe(true);
    expect((await call(c, 'mempalace_status')).total_drawers).toBe(afterMine);

    const hit = (await call(c, 'mempalace_search', { query: 'lighthouse keeper storm harbour', wing: 'harbour' })).results as { source_path: string }[];
    const sourcePath = hit[0]!.source_path;
    expect(path.isAbsolute(sourcePath)).toBe(true);
    const dry = await call(c, 'mempalace_delete_by_source', { source_file: sourcePath });
    expect(dry).toMatchObject({ success: true, dry_run: true, source_file: sourcePath });
    expect(dry.match_count as number).toBeGreaterThan(0);
    expect((await call(c, 'mempalace_status')).total_drawers).toBe(afterMine);
    const del = await call(c, 'mempalace_delete_by_source', { source_file: sourcePath, dry_run: false });
    expect(del).toMatchObject({ success: true, dry_run: false, deleted: dry.match_count });
    const afterDelete = (await call(c, 'mempalace_status')).total_drawers as number;
    expect(afterDelete).toBeLessThan(afterMine);

    const synced = await call(c, 'mempalace_sync', { project_dir: project });
    expect(synced).toMatchObject({ success: true, dry_run: true, removed_drawers: 0 });
  });

  it('hook_settings, memories_filed_away, reconnect', async () => {
    expect(await call(c, 'mempalace_hook_settings')).toEqual({ success: true, settings: { silent_save: true, desktop_toast: false } });
    expect(await call(c, 'mempalace_hook_settings', { desktop_toast: true })).toEqual({ success: true, settings: { silent_save: true, desktop_toast: true },
      updated: ['desktop_toast → true'] });
    expect(JSON.parse(fs.readFileSync(path.join(h.home, 'config.json'), 'utf8')).hooks).toEqual({ desktop_toast: true });
    expect(await call(c, 'mempalace_memories_filed_away')).toEqual({ status: 'quiet', message: 'No recent journal entry', count: 0, timestamp: null });
    fs.mkdirSync(path.join(h.home, 'hook_state'), { recursive: true });
    fs.writeFileSync(path.join(h.home, 'hook_state', 'last_checkpoint'), JSON.stringify({ msgs: 7, ts: '2026-04-01T10:00:00' }));
    expect(await call(c, 'mempalace_memories_filed_away')).toEqual({ status: 'ok', message: '✦ 7 messages tucked into drawers', count: 7,
      timestamp: '2026-04-01T10:00:00' });
    expect((await call(c, 'mempalace_memories_filed_away')).status).toBe('quiet');
    const drawers = (await call(c, 'mempalace_status')).total_drawers;
    expect(await call(c, 'mempalace_reconnect')).toMatchObject({ success: true, message: 'Reconnected to palace', drawers });
  });

  it('the nine coordination tools', async () => {
    // Earlier tests' job ends already appended `job.finished` events: count this test's own four.
    const ownSeq = async () => {
      const m = await call(c, 'mempalace_mesh_peers');
      return (m.self as { version_vector: Record<string, number> }).version_vector[(m.self as { replica_id: string }).replica_id] ?? 0;
    };
    const before = await ownSeq();
    const ev = await call(c, 'mempalace_event_append', { type: 'status.note', stream: 'project/demo', room: 'status', from_agent: 'ops',
      body: 'deploy finished', metadata: { build: 42 } });
    expect((ev.event as { seq: number; body: string }).body).toBe('deploy finished');
    const listed = await call(c, 'mempalace_event_list', { stream: 'project/demo' });
    expect((listed.events as { id: string }[]).map((e) => e.id)).toEqual([(ev.event as { id: string }).id]);
    const waited = await call(c, 'mempalace_event_wait', { stream: 'project/demo', timeout_ms: 0 });
    expect(waited).toMatchObject({ timed_out: false, count: 1 });
    const ack = await call(c, 'mempalace_event_ack', { event_id: (ev.event as { id: string }).id, from_agent: 'ops', status: 'applied' });
    expect(ack.event).toMatchObject({ type: 'event.ack', to_agent: 'ops', metadata: { ack_of: (ev.event as { id: string }).id } });
    const note = 'line one\nline two ✓\n';
    const put = await call(c, 'mempalace_artifact_put', { kind: 'note', content: note, created_by: 'ops' });
    expect((put.artifact as { sha256: string }).sha256).toBe(sha256(note));
    expect((await call(c, 'mempalace_artifact_get', { artifact_id: (put.artifact as { id: string }).id })).artifact).toMatchObject({ content: note,
      sha256: sha256(note) });
    const patch = await call(c, 'mempalace_patch_submit', { content: 'diff --git a/x b/x\n', from_agent: 'ops', stream: 'project/demo' });
    expect(patch.event).toMatchObject({ type: 'patch.ready', status: 'ready', room: 'patches', artifact_ids: [(patch.artifact as { id: string }).id] });
    const task = await call(c, 'mempalace_task_create', { project: 'Demo App', from_agent: 'ops', to_agent: 'worker', goal: 'Fix the login bug',
      branch: 'fix/login', base_commit: 'ABCDEF1', done: 'tests pass' });
    expect(task.task).toMatchObject({ type: 'task.request', stream: 'project/demo_app', status: 'open', base_commit: 'abcdef1', to_agent: 'worker' });
    expect(task.handoff).toContain((task.task as { correlation_id: string }).correlation_id);
    expect(await ownSeq()).toBe(before + 4);
  });

  it('delete_drawer removes every chunk of a logical drawer', async () => {
    const long = longAdd;
    expect(await call(c, 'mempalace_delete_drawer', { drawer_id: long.drawer_id })).toEqual({ success: true, drawer_id: long.drawer_id,
      deleted_ids: long.chunk_ids, chunks_deleted: long.chunks });
    expect((await call(c, 'mempalace_get_drawer', { drawer_id: long.drawer_id })).error).toBe(`Drawer not found: ${String(long.drawer_id)}`);
  });

  it('refuses an invalid call to every tool with a structured error and writes nothing', async () => {
    const before = await snapshot(c);
    const someDrawer = ((await call(c, 'mempalace_list_drawers', { limit: 1 })).drawers as { drawer_id: string }[])[0]!.drawer_id;
    const configFile = path.join(h.home, 'config.json');
    const configBefore = fs.existsSync(configFile) ? fs.readFileSync(configFile, 'utf8') : null;
    const toolError = async (name: string, args: Record<string, unknown>, contains: string, shape: 'error' | 'success_false') => {
      const r = await call(c, name, args);
      expect(r.error, name).toEqual(expect.stringContaining(contains));
      if (shape === 'success_false') expect(r.success, name).toBe(false);
      else expect(r.success, name).toBeUndefined();
    };
    const unknownParam = async (name: string) => {
      const e = await rpcError(c, name, { bogus: 1 }, -32602);
      expect(e.message).toContain(`Unknown parameter 'bogus' for tool ${name}`);
    };

    for (const name of ['mempalace_status', 'mempalace_list_wings', 'mempalace_get_taxonomy', 'mempalace_get_aaak_spec', 'mempalace_kg_stats',
      'mempalace_graph_stats', 'mempalace_memories_filed_away', 'mempalace_reconnect', 'mempalace_mesh_peers']) {
      await unknownParam(name);
    }
    await toolError('mempalace_list_rooms', { wing: '../etc' }, 'wing contains invalid path characters', 'error');
    await toolError('mempalace_search', { query: 'x', candidate_strategy: 'bogus' }, 'candidate_strategy', 'error');
    const badDate = await call(c, 'mempalace_search', { query: 'x', since: 'yesterday' });
    expect(Object.keys(badDate).sort()).toEqual(['error', 'field', 'rule']);
    expect(badDate.field).toBe('since');
    expect((await rpcError(c, 'mempalace_search', { query: 'x', limit: 'many' }, -32602)).message).toContain("Invalid value for parameter 'limit'");
    await toolError('mempalace_check_duplicate', { content: 'x', threshold: 2 }, 'threshold', 'error');
    await toolError('mempalace_add_drawer', { wing: 'a/b', room: 'r', content: 'c' }, 'wing contains invalid path characters', 'success_false');
    expect((await rpcError(c, 'mempalace_add_drawer', { wing: 'w', room: 'r' }, -32602)).message).toContain(
      "Missing required parameter 'content' for tool mempalace_add_drawer",
    );
    await toolError('mempalace_checkpoint', { items: 'nope' }, 'items must be a list of {wing, room, content} objects', 'error');
    await toolError('mempalace_delete_drawer', { drawer_id: 'drawer_missing' }, 'Drawer not found: drawer_missing', 'success_false');
    await toolError('mempalace_mine', { source: path.join(project, 'missing') }, 'source directory not found', 'success_false');
    await toolError('mempalace_mine', { source: project, mode: 'bogus' }, "invalid mode 'bogus'; expected one of: projects, convos, extract", 'success_false');
    await toolError('mempalace_delete_by_source', { source_file: '   ' }, 'source_file must be a non-empty string', 'success_false');
    await toolError('mempalace_sync', { apply: true }, 'wing or project_dir', 'success_false');
    await toolError('mempalace_get_drawer', { drawer_id: 'drawer_missing' }, 'Drawer not found: drawer_missing', 'error');
    await toolError('mempalace_list_drawers', { since: '2026-05-01', before: '2026-04-01' }, 'must be earlier than', 'error');
    await toolError('mempalace_update_drawer', { drawer_id: someDrawer, content: 'x', if_unchanged: 'not-hex' }, 'if_unchanged', 'success_false');
    await toolError('mempalace_kg_query', { entity: 'Max', direction: 'sideways' }, "direction must be 'outgoing', 'incoming', or 'both'", 'error');
    await toolError('mempalace_kg_add', { subject: '  ', predicate: 'p', object: 'o' }, 'subject must be a non-empty string', 'success_false');
    await toolError('mempalace_kg_invalidate', { subject: 'Max', predicate: 'a/b', object: 'x' }, 'predicate contains invalid path characters',
      'success_false');
    const inverted = await rpcError(c, 'mempalace_kg_add', { subject: 'Max', predicate: 'lived_in', object: 'Oslo', valid_from: '2025-01-01',
      valid_to: '2024-01-01' }, -32000);
    expect(inverted.data).toMatchObject({ error_class: 'ValueError' });
    expect((await rpcError(c, 'mempalace_kg_supersede', { subject: 'Max', predicate: 'works_at', old_object: 'Globex' }, -32602)).message).toContain(
      "Missing required parameter 'new_object'",
    );
    await toolError('mempalace_kg_timeline', { entity: 5 }, 'entity', 'error');
    const lost = await call(c, 'mempalace_traverse', { start_room: 'backen' });
    expect(lost).toMatchObject({ error: "Room 'backen' not found", suggestions: ['backend'] });
    await toolError('mempalace_find_tunnels', { wing_a: '../x' }, 'wing_a', 'error');
    await toolError('mempalace_create_tunnel', { source_wing: 'alpha', source_room: 'nowhere', target_wing: 'beta', target_room: 'backend' },
      "Source room 'nowhere' does not exist in wing 'alpha'", 'error');
    await toolError('mempalace_list_tunnels', { wing: 'a/b' }, 'wing contains invalid path characters', 'error');
    await toolError('mempalace_delete_tunnel', { tunnel_id: '' }, 'tunnel_id', 'error');
    await toolError('mempalace_list_hallways', { wing: 'a/b' }, 'wing contains invalid path characters', 'error');
    await toolError('mempalace_delete_hallway', { hallway_id: '' }, 'hallway_id is required', 'error');
    expect((await rpcError(c, 'mempalace_follow_tunnels', { wing: 'alpha' }, -32602)).message).toContain("Missing required parameter 'room'");
    expect((await rpcError(c, 'mempalace_diary_write', { agent_name: 'ops' }, -32602)).message).toContain(
      "Missing required parameter 'entry' for tool mempalace_diary_write",
    );
    await toolError('mempalace_diary_write', { agent_name: 'ops', entry: 'x', wing: 'a/b' }, 'wing contains invalid path characters', 'success_false');
    await toolError('mempalace_diary_read', { agent_name: 'a/b' }, 'agent_name contains invalid path characters', 'error');
    await toolError('mempalace_hook_settings', { silent_save: 'yes' }, 'silent_save must be a boolean', 'success_false');
    await toolError('mempalace_event_append', { type: 'BAD TYPE', stream: 's', room: 'r', from_agent: 'ops' }, 'type', 'success_false');
    await toolError('mempalace_task_create', { project: 'p', from_agent: 'ops', to_agent: 'w', goal: 'g', branch: 'b', base_commit: 'main', done: 'd' },
      'base commit', 'success_false');
    await toolError('mempalace_event_list', { order: 'sideways' }, "order='sideways' must be 'asc' or 'desc'", 'error');
    await toolError('mempalace_event_wait', { timeout_ms: -5 }, 'timeout_ms', 'error');
    await toolError('mempalace_event_ack', { event_id: 'evt_missing', from_agent: 'ops' }, "event 'evt_missing' not found", 'success_false');
    await toolError('mempalace_artifact_put', { kind: 'binary', content: 'x', created_by: 'ops' }, 'kind="binary" is not one of: file, json, log, note, patch',
      'success_false');
    await toolError('mempalace_artifact_get', { artifact_id: 'art_missing' }, "artifact 'art_missing' not found", 'error');
    await toolError('mempalace_patch_submit', { content: '', from_agent: 'ops', stream: 's' }, 'content', 'success_false');
    expect((await rpcError(c, 'mempalace_nonexistent', {}, -32602)).message).toContain('Unknown tool: mempalace_nonexistent');
    expect((await rpcError(c, 'mempalace_search', { query: 'x', min_similarity: 0.5 }, -32602)).message).toContain("Unknown parameter 'min_similarity'");

    expect(await snapshot(c)).toEqual(before);
    expect(fs.existsSync(configFile) ? fs.readFileSync(configFile, 'utf8') : null).toBe(configBefore);
  });

  it('serves resources: taxonomy, protocol, AAAK spec, a drawer by URI and templates', async () => {
    const { resources } = await c.listResources();
    expect(resources.map((r) => r.uri)).toEqual(expect.arrayContaining(['mempalace://taxonomy', 'mempalace://protocol', 'mempalace://aaak-spec']));
    const { resourceTemplates } = await c.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['mempalace://drawer/{drawer_id}', 'mempalace://job/{job_id}']);
    const tax = await c.readResource({ uri: 'mempalace://taxonomy' });
    expect(JSON.parse(resourceText(tax)).taxonomy).toEqual((await call(c, 'mempalace_get_taxonomy')).taxonomy);
    const protocol = await c.readResource({ uri: 'mempalace://protocol' });
    expect(resourceText(protocol)).toBe((await call(c, 'mempalace_status')).protocol);
    const id = ((await call(c, 'mempalace_list_drawers', { limit: 1 })).drawers as { drawer_id: string }[])[0]!.drawer_id;
    const drawer = await c.readResource({ uri: `mempalace://drawer/${id}` });
    expect(JSON.parse(resourceText(drawer))).toEqual(await call(c, 'mempalace_get_drawer', { drawer_id: id }));
    const jobs = resources.filter((r) => r.uri.startsWith('mempalace://job/'));
    expect(jobs.length).toBeGreaterThan(0);
    const job = JSON.parse(resourceText(await c.readResource({ uri: jobs[0]!.uri })));
    expect(['mine', 'sync', 'delete_by_source']).toContain(job.kind);
  });
});
