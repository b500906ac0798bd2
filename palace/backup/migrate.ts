/**
 * `mempalace migrate --to cluster|embedded`: the export stream of one profile's stores applied
 * to the other's (vectors copied, nothing re-embedded; idempotent), then the copy verified: drawer counts per wing and room, KG, tunnel, hallway, event
 * and artifact counts, the version vector, and a sample of searches compared result for result
 * where both profiles search exactly.
 *
 * Resumable like a file import: the checkpoint lives in the target under the source palace's
 * name, and is tied to the source's figures (every count and its version vector) as a file's
 * is to its hash, so a run killed midway continues where it stopped as long as the source is
 * unchanged, and starts over (idempotently) when it changed.
 */
import { createHash } from 'node:crypto';
import { lexicalTokens } from '../../core/lexical.js';
import type { ModelIdentity } from '../../embed/model-identity.js';
import type { DrawerFilter, TaxonomyRow } from '../../stores/ports/drawers/drawer-index.js';
import type { PalaceContentStores, RecordProgress } from './export.js';
import { palaceRecords } from './export.js';
import type { CheckpointScope } from './import-checkpoint.js';
import type { ImportStores, ImportSummary } from './import.js';
import { importRecords } from './import.js';

/** Both adapters rank vectors exactly for a filter matching at most this many rows (stores/*-drawer-index.ts). */
const EXACT_VECTOR_ROWS = 4000;
/** Both choose lexical candidates exactly while the matches fit the OpenSearch re-rank window. */
const EXACT_LEXICAL_ROWS = 200;
const SAMPLE_SCOPES = 20;
const SAMPLE_K = 10;

export interface CountCheck {
  what: string;
  source: number | string;
  target: number | string;
}

export interface SearchCheck {
  scope: DrawerFilter;
  kind: 'vector' | 'lexical';
  identical: boolean;
  source_ids: string[];
  target_ids: string[];
}

export interface CopyVerification {
  ok: boolean;
  /** Every count compared; `mismatches` lists those that differ. */
  counts: CountCheck[];
  mismatches: CountCheck[];
  searches: { sampled: number; identical: number; differing: SearchCheck[] };
}

export interface MigrationSummary {
  copy: ImportSummary;
  verification: CopyVerification;
}

async function countEvents(stores: PalaceContentStores): Promise<number> {
  let n = 0;
  for (let afterSeq = 0;;) {
    const page = await stores.logstream.list({ order: 'asc', afterSeq, limit: 1000 });
    n += page.length;
    if (page.length < 1000) return n;
    afterSeq = page[page.length - 1]!.seq;
  }
}

/** Distinct artifact ids (a Redis SCAN may return one twice). */
async function countArtifacts(stores: PalaceContentStores): Promise<number> {
  const ids = new Set<string>();
  for (let cursor: string | undefined;;) {
    const page = await stores.logstream.scanArtifacts(cursor, 500);
    for (const a of page.items) ids.add(a.id);
    if (page.next === undefined) return ids.size;
    cursor = page.next;
  }
}

/** The counts both palaces must agree on, keyed by what they count. */
export async function palaceFigures(stores: PalaceContentStores): Promise<Map<string, number | string>> {
  const out = new Map<string, number | string>();
  out.set('drawers', await stores.drawers.count());
  for (const row of await stores.drawers.taxonomy()) out.set(`drawers in ${row.wing}/${row.room}`, row.count);
  const kg = await stores.graph.kgStats();
  out.set('kg entities', kg.entities);
  out.set('kg triples', kg.triples);
  out.set('kg current facts', kg.current_facts);
  out.set('tunnels', await stores.graph.tunnelCount());
  out.set('hallways', (await stores.graph.hallwayList()).length);
  out.set('events', await countEvents(stores));
  out.set('artifacts', await countArtifacts(stores));
  const vector = await stores.logstream.versionVector();
  out.set('version vector', JSON.stringify(Object.keys(vector).sort().map((origin) => [origin, vector[origin]])));
  return out;
}

async function compareSearches(source: PalaceContentStores, target: PalaceContentStores): Promise<SearchCheck[]> {
  const rows = await source.drawers.taxonomy();
  const total = rows.reduce((n, r) => n + r.count, 0);
  const exact = rows.filter((r) => r.count <= EXACT_VECTOR_ROWS);
  const step = Math.max(1, Math.floor(exact.length / SAMPLE_SCOPES));
  const scopes: { filter: DrawerFilter; row: TaxonomyRow | undefined }[] = exact.filter((_, i) => i % step === 0).slice(0, SAMPLE_SCOPES).map((row) => ({
    filter: { wing: row.wing, room: row.room },
    row,
  }));
  if (total > 0 && total <= EXACT_VECTOR_ROWS) scopes.push({ filter: {}, row: undefined });
  const checks: SearchCheck[] = [];
  for (const { filter, row } of scopes) {
    const [probe] = (await source.drawers.list(filter, 0, 1)).items;
    if (!probe) continue;
    const vector = (await source.drawers.embeddings([probe.id])).get(probe.id)!;
    const [a, b] = await Promise.all([source.drawers.knn(vector, SAMPLE_K, filter), target.drawers.knn(vector, SAMPLE_K, filter)]);
    const same = a.length === b.length && a.every((h, i) => h.drawer.id === b[i]!.drawer.id && h.distance === b[i]!.distance);
    checks.push({ scope: filter, kind: 'vector', identical: same, source_ids: a.map((h) => h.drawer.id), target_ids: b.map((h) => h.drawer.id) });
    if (row && row.count <= EXACT_LEXICAL_ROWS) {
      const tokens = lexicalTokens(probe.content).slice(0, 8);
      if (tokens.length === 0) continue;
      const [la, lb] = await Promise.all([source.drawers.lexical(tokens, SAMPLE_K, filter), target.drawers.lexical(tokens, SAMPLE_K, filter)]);
      const ids = (l: { id: string }[]) => l.map((d) => d.id);
      checks.push({ scope: filter, kind: 'lexical', identical: JSON.stringify(ids(la)) === JSON.stringify(ids(lb)), source_ids: ids(la), target_ids: ids(lb) });
    }
  }
  return checks;
}

/** Compares two palaces that should hold the same content. */
export async function verifyCopy(source: PalaceContentStores, target: PalaceContentStores): Promise<CopyVerification> {
  const [a, b] = await Promise.all([palaceFigures(source), palaceFigures(target)]);
  const counts: CountCheck[] = [...new Set([...a.keys(), ...b.keys()])].map((what) => ({ what, source: a.get(what) ?? 0, target: b.get(what) ?? 0 }));
  const mismatches = counts.filter((c) => c.source !== c.target);
  const searches = await compareSearches(source, target);
  const differing = searches.filter((s) => !s.identical);
  return { ok: mismatches.length === 0 && differing.length === 0, counts, mismatches,
    searches: { sampled: searches.length, identical: searches.length - differing.length, differing } };
}

/** Where a migration from `source` keeps its checkpoint, and the state of the source it read. */
async function migrationScope(source: PalaceContentStores): Promise<CheckpointScope> {
  const figures = createHash('sha256').update(JSON.stringify([...(await palaceFigures(source)).entries()])).digest('hex');
  return { key: `migrate:${source.profile}:${source.palace}`,
    stream: `palace ${source.profile} ${source.palace} ${await source.logstream.replicaId()} ${figures}` };
}

/** Copies `source` into `target` through the export stream, then verifies the copy. */
export async function migratePalace(source: PalaceContentStores, target: ImportStores, model: ModelIdentity,
  onProgress?: RecordProgress): Promise<MigrationSummary> {
  const copy = await importRecords(target, model, palaceRecords(source, model), onProgress, await migrationScope(source));
  return { copy, verification: await verifyCopy(source, target) };
}
