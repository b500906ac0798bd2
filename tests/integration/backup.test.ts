/**
 * Backup, restore and migration on both profiles, against the real engines and the real MiniLM
 * embedder. One palace is filled through the palace operations (drawers, a chunked drawer, a
 * diary, file states, KG facts with a closed one, explicit tunnels, hallways, artifacts, a patch
 * and events), then:
 *
 * - exported and imported into a fresh embedded palace: the same counts per wing and room, KG,
 *   tunnels, hallways, events, artifacts and version vector, the same search results, the same
 *   event ids and artifact ids; a second import adds nothing;
 * - migrated into a cluster palace (OpenSearch, Neo4j, Redis) and verified, exported from there
 *   and imported into a second cluster palace with the same results, and migrated back;
 * - an export from another model is refused before anything is written;
 * - an import interrupted midway resumes from its checkpoint and ends in the same state.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../core/config.js';
import { loadConfig } from '../../app/config.js';
import { MiniLmEmbedder } from '../../embed/minilm.js';
import { addDrawer } from '../../palace/drawers/drawers.js';
import { diaryWriteOperation } from '../../palace/diary/diary.js';
import { exportPalace, palaceRecords } from '../../palace/backup/export.js';
import { readExportFile } from '../../palace/backup/export-file.js';
import { exportFileScope, importPalace, importRecords } from '../../palace/backup/import.js';
import { kgAddOperation, kgInvalidateOperation } from '../../palace/kg/kg.js';
import { operationCall } from '../helpers/operation-call.js';
import { migratePalace, palaceFigures, verifyCopy } from '../../palace/backup/migrate.js';
import { search } from '../../palace/search/search.js';
import { createTunnelOperation } from '../../palace/graph/tunnels.js';
import type { PalaceStores } from '../../stores/ports/palace-stores.js';
import { openStores } from '../../stores/open.js';
import type { EventDraft } from '../../stores/ports/logstream/records.js';
import { clusterConfig, dropClusterPalace } from '../helpers/cluster-palace.js';
import { rejectionOf } from '../helpers/errors.js';

const diaryWrite = operationCall(diaryWriteOperation);
const createTunnel = operationCall(createTunnelOperation);

const kgAdd = operationCall(kgAddOperation);
const kgInvalidate = operationCall(kgInvalidateOperation);

const QUERIES = ['storm gate procedure', 'berth allocation by draught', 'tide chart for the week', 'diary of the harbour master', 'crane maintenance schedule'];

let tmp: string;
let embedder: MiniLmEmbedder;
let source: PalaceStores;
const opened: PalaceStores[] = [];
const clusterConfigs: Config[] = [];

function embeddedConfig(name: string): Config {
  return loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(tmp, name) });
}

async function open(config: Config): Promise<PalaceStores> {
  if (config.profile === 'cluster') clusterConfigs.push(config);
  const stores = await openStores(config);
  opened.push(stores);
  return stores;
}

function draft(i: number, artifactIds: string[] = []): EventDraft {
  return {
    type: i % 2 ? 'note' : 'task',
    stream: 'ops/harbour',
    room: 'general',
    topic: i % 3 ? 'berths' : null,
    from_agent: `agent-${i % 2}`,
    to_agent: i % 2 ? '*' : null,
    correlation_id: `c${i % 2}`,
    branch: null,
    base_commit: null,
    status: null,
    body: `event body ${i}`,
    metadata_json: `{"n": ${i}}`,
    artifact_ids: artifactIds,
  };
}

async function fill(stores: PalaceStores): Promise<void> {
  const ctx = { config: embeddedConfig('source'), drawers: stores.drawers, embedder };
  const rooms = [['harbour', 'storms'], ['harbour', 'berths'], ['docks', 'cranes']] as const;
  for (let i = 0; i < 24; i++) {
    const [wing, room] = rooms[i % 3]!;
    await addDrawer(ctx, { wing, room,
      content: `${room} note ${i}: the storm gate closes at force nine; berth ${i} takes ships of draught ${i % 5} metres; crane ${
        i % 4
      } is serviced weekly.` });
  }
  await addDrawer(ctx, { wing: 'docks', room: 'cranes', content: 'Crane maintenance schedule. '.repeat(60) });
  await diaryWrite(ctx, { agent_name: 'Harbour Master', entry: 'Diary of the harbour master: calm sea, two arrivals.' });
  await stores.drawers.putFileStates([{ wing: 'harbour', source_file: '/src/storms.md', size: 10, mtime_ms: 1.5, content_sha256: 'ab'.repeat(32),
    drawer_count: 3, mined_at: '2026-01-02T03:04:05.000000Z', extra: { commit: 'abc', n: 2, ok: true } }]);
  const kg = { graph: stores.graph };
  await kgAdd(kg, { subject: 'Harbour Master', predicate: 'works_at', object: 'Port North', valid_from: '2025-01-01' });
  await kgAdd(kg, { subject: 'Crane 2', predicate: 'serviced_by', object: 'Dock Crew', valid_from: '2025-03-01' });
  await kgAdd(kg, { subject: 'Gate', predicate: 'closes_at', object: 'Force Nine' });
  await kgInvalidate(kg, { subject: 'Crane 2', predicate: 'serviced_by', object: 'Dock Crew', ended: '2025-06-01' });
  const graphCtx = { graph: stores.graph, drawers: stores.drawers };
  await createTunnel(graphCtx, { source_wing: 'harbour', source_room: 'storms', target_wing: 'docks', target_room: 'cranes', label: 'storm cranes' });
  await createTunnel(graphCtx, { source_wing: 'harbour', source_room: 'berths', target_wing: 'docks', target_room: 'cranes' });
  await stores.graph.hallwaysReplaceWing('harbour', [
    { id: 'hw1', wing: 'harbour', entity_a: 'gate', entity_b: 'storm', co_occurrence_count: 4, rooms: ['storms', 'berths'], label: 'gate–storm',
      created_at: '2026-01-01T00:00:00Z', created_by: 'test' },
    { id: 'hw2', wing: 'harbour', entity_a: 'berth', entity_b: 'ship', co_occurrence_count: 2, rooms: ['berths'], label: 'berth–ship',
      created_at: '2026-01-01T00:00:00Z', created_by: 'test' },
  ]);
  const content = 'diff --git a/gate b/gate\n+close at force nine\n';
  const sha = (await import('node:crypto')).createHash('sha256').update(content).digest('hex');
  // A kind artifact_put accepts: imports apply the live write rules (issue 24, I4), 'diff' is not one.
  const art = { kind: 'patch', content, sha256: sha, size_bytes: Buffer.byteLength(content), created_by: 'agent-0', metadata_json: '{"lang": "diff"}' };
  const a1 = await stores.logstream.putArtifact(art);
  await stores.logstream.putArtifact(art);
  for (let i = 0; i < 7; i++) await stores.logstream.append(draft(i, i === 3 ? [a1.id] : []));
  await stores.logstream.submitPatch({ ...art, kind: 'patch' }, draft(9));
}

async function searches(stores: PalaceStores) {
  const ctx = { config: embeddedConfig('source'), drawers: stores.drawers, embedder };
  const out = [];
  for (const query of QUERIES) {
    const r = await search(ctx, { query, limit: 8 }, { sanitize: false, defaultMaxDistance: 0 });
    out.push(r.results.map((h) => ({ id: h.drawer_id, text: h.text, similarity: h.similarity, bm25: h.bm25_score, wing: h.wing, room: h.room })));
  }
  return out;
}

async function eventIds(stores: PalaceStores) {
  const events = await stores.logstream.list({ order: 'asc', limit: 1000 });
  return events.map((e) => ({ id: e.id, hlc: e.hlc, origin_replica: e.origin_replica, origin_seq: e.origin_seq, artifact_ids: e.artifact_ids,
    metadata: e.metadata, body: e.body })
  ).sort((a, b) => a.hlc.localeCompare(b.hlc));
}

let exportFile: string;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-backup-'));
  embedder = new MiniLmEmbedder(embeddedConfig('source'));
  source = await open(embeddedConfig('source'));
  await fill(source);
  // Two audit records, so the trail's round trip is part of the export → import check.
  for (const n of [1, 2]) {
    await source.audit.append({ at: `2026-03-01T10:00:0${n}.000Z`, identity: 'alice', transport: 'cli', request_id: `r${n}`, action: 'cli drawers update',
      op: 'drawers.upsert', wings: ['w'], ids: [`drawer:d${n}`] });
  }
  exportFile = path.join(tmp, 'palace.jsonl.gz');
  await exportPalace(source, embedder.identity, exportFile);
}, 300_000);

afterAll(async () => {
  for (const s of opened) await s.close();
  for (const c of clusterConfigs) await dropClusterPalace(c);
  await embedder?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('export → import, embedded', () => {
  it('restores the same counts, search results, event ids and artifacts, and a second import adds nothing', async () => {
    const figures = await palaceFigures(source);
    expect(figures.get('drawers')).toBeGreaterThan(26);
    expect(figures.get('kg triples')).toBe(3);
    expect(figures.get('tunnels')).toBe(2);
    expect(figures.get('hallways')).toBe(2);
    expect(figures.get('events')).toBe(8);
    expect(figures.get('artifacts')).toBe(3);

    const restored = await open(embeddedConfig('restored'));
    const first = await importPalace(restored, embedder.identity, exportFile);
    expect(first.inserted).toEqual({ kg_triple: 3, artifact: 3, event: 8, audit: 2 });
    expect(await restored.audit.scan(0, 10)).toEqual(await source.audit.scan(0, 10));
    expect(await palaceFigures(restored)).toEqual(figures);
    expect(await searches(restored)).toEqual(await searches(source));
    expect(await eventIds(restored)).toEqual(await eventIds(source));
    expect(await restored.graph.hallwayList()).toEqual(await source.graph.hallwayList());
    expect(await restored.graph.tunnelList()).toEqual(await source.graph.tunnelList());
    expect(await restored.graph.kgTimeline({ limit: 100 })).toEqual(await source.graph.kgTimeline({ limit: 100 }));
    expect(await restored.drawers.listFileStates(undefined, undefined, 100)).toEqual(await source.drawers.listFileStates(undefined, undefined, 100));
    const [patchEvent] = await restored.logstream.list({ order: 'desc', limit: 1 });
    expect((await restored.logstream.getArtifact(patchEvent!.artifact_ids[0]!))?.content).toContain('force nine');

    const again = await importPalace(restored, embedder.identity, exportFile);
    expect(again.inserted).toEqual({ kg_triple: 0, artifact: 0, event: 0, audit: 0 });
    expect(await palaceFigures(restored)).toEqual(figures);
    // New local events after a restore still come later in causal (hlc) order.
    const after = await restored.logstream.append(draft(20));
    const maxRestored = (await eventIds(source)).at(-1)!.hlc;
    expect(after.hlc.slice(0, 20) > maxRestored.slice(0, 20)).toBe(true);
  });

  it('refuses an export of another model with a structured error and writes nothing', async () => {
    const lines = zlib.gunzipSync(fs.readFileSync(exportFile)).toString('utf8').split('\n');
    const header = JSON.parse(lines[0]!) as { model: { weightsSha256: string } };
    header.model.weightsSha256 = '0'.repeat(64);
    const other = path.join(tmp, 'other-model.jsonl.gz');
    fs.writeFileSync(other, zlib.gzipSync([JSON.stringify(header), ...lines.slice(1)].join('\n')));
    const target = await open(embeddedConfig('refused'));
    const error = await rejectionOf(importPalace(target, embedder.identity, other));
    expect(error).toMatchObject({ code: 'invalid_argument', field: 'model', rule: 'matches_palace' });
    const figures = await palaceFigures(target);
    expect([...figures.entries()].filter(([, v]) => v !== 0 && v !== '[]')).toEqual([]);
  });

  it('resumes an import interrupted midway and ends in the same state, without duplicates', async () => {
    const target = await open(embeddedConfig('resumed'));
    let seen = 0;
    async function* crashing() {
      for await (const item of readExportFile(exportFile)) {
        if (++seen === 40) throw new Error('simulated crash after 39 items');
        yield item;
      }
    }
    // The same checkpoint scope `importPalace` gives this file, so the re-run below resumes it.
    await expect(importRecords(target, embedder.identity, crashing(), undefined, await exportFileScope(exportFile))).rejects.toThrow('simulated crash');
    expect(await target.drawers.count()).toBeGreaterThan(0);
    const truncated = path.join(tmp, 'truncated.jsonl.gz');
    const whole = fs.readFileSync(exportFile);
    fs.writeFileSync(truncated, whole.subarray(0, Math.floor(whole.length * 0.6)));
    const cut = await rejectionOf(importPalace(target, embedder.identity, truncated));
    expect(cut).toMatchObject({ code: 'invalid_argument', field: 'file' });

    const done = await importPalace(target, embedder.identity, exportFile);
    // Drawers (28 rows) and the records after them up to the crash were checkpointed.
    expect(done.resumed_from).toBeGreaterThan(28);
    expect(await palaceFigures(target)).toEqual(await palaceFigures(source));
    expect(await eventIds(target)).toEqual(await eventIds(source));
    // The checkpoint is gone once complete: a later import replays everything, idempotently.
    expect((await importPalace(target, embedder.identity, exportFile)).resumed_from).toBe(0);
  });
});

describe('cluster profile (OpenSearch, Neo4j, Redis)', () => {
  it('migrates embedded → cluster verified, round-trips an export between two cluster palaces, and migrates back', async () => {
    const clusterA = await open(clusterConfig('bk-a'));
    const migrated = await migratePalace(source, clusterA, embedder.identity);
    expect(migrated.verification.mismatches).toEqual([]);
    expect(migrated.verification.searches.sampled).toBeGreaterThanOrEqual(4);
    expect(migrated.verification.searches.differing).toEqual([]);
    expect(migrated.verification.ok).toBe(true);
    expect(await searches(clusterA)).toEqual(await searches(source));
    expect(await eventIds(clusterA)).toEqual(await eventIds(source));
    expect(await clusterA.graph.hallwayList()).toEqual(await source.graph.hallwayList());
    expect(await clusterA.graph.kgTimeline({ limit: 100 })).toEqual(await source.graph.kgTimeline({ limit: 100 }));

    const clusterFile = path.join(tmp, 'cluster.jsonl.gz');
    const exported = await exportPalace(clusterA, embedder.identity, clusterFile);
    expect(exported.counts.event).toBe(8);
    const clusterB = await open(clusterConfig('bk-b'));
    await importPalace(clusterB, embedder.identity, clusterFile);
    expect(await palaceFigures(clusterB)).toEqual(await palaceFigures(clusterA));
    expect(await searches(clusterB)).toEqual(await searches(clusterA));
    expect((await importPalace(clusterB, embedder.identity, clusterFile)).inserted).toEqual({ kg_triple: 0, artifact: 0, event: 0, audit: 0 });
    expect(await palaceFigures(clusterB)).toEqual(await palaceFigures(clusterA));

    const back = await open(embeddedConfig('back'));
    const returned = await migratePalace(clusterB, back, embedder.identity);
    expect(returned.verification.ok).toBe(true);
    expect(await searches(back)).toEqual(await searches(source));
    expect((await verifyCopy(source, back)).ok).toBe(true);
  });

  it('verification reports a difference when the copy lacks something', async () => {
    const partial = await open(clusterConfig('bk-p'));
    let n = 0;
    async function* withoutOneDrawer() {
      for await (const item of palaceRecords(source, embedder.identity)) {
        if ((item as { kind: string }).kind === 'drawer' && n++ === 0) continue;
        if ((item as { kind: string }).kind === 'footer') (item as { counts: { drawer: number } }).counts.drawer--;
        yield item;
      }
    }
    await importRecords(partial, embedder.identity, withoutOneDrawer());
    const v = await verifyCopy(source, partial);
    expect(v.ok).toBe(false);
    expect(v.mismatches.map((m) => m.what)).toContain('drawers');
  });
});
