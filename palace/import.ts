/**
 * `mempalace import`: applies a record stream (backup-records.ts) to the palace's stores.
 *
 * - The header comes first and is checked before anything is written: its model identity must
 *   be the running embedder's, and its dimension the drawer index's, or the import is refused.
 * - Every write is idempotent by id (drawers upserted, file states put, triples, tunnels and
 *   hallways restored by id, artifacts and events skipped when held), so a re-run converges to
 *   the same state with no duplicates.
 * - Resumable: after each batch the number of records applied is kept in the job store under
 *   the export's id; a re-run after a crash skips that many records and carries on. The
 *   checkpoint is dropped when the stream ends with its footer and every count matches.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import readline from 'node:readline';
import { createGunzip } from 'node:zlib';
import { invalidArgument } from '../core/errors.js';
import { wingSlug } from '../core/validate.js';
import type { DrawerWrite } from '../core/drawer.js';
import type { ModelIdentity } from '../embed/model-identity.js';
import { sameModel } from '../embed/model-identity.js';
import type { JobStore } from '../stores/ports/job-store.js';
import { decodeVector, parseHeader, RECORD_KINDS, zeroCounts } from './backup-records.js';
import type { ExportHeader, PalaceRecord, RecordKind } from './backup-records.js';
import type { PalaceContentStores, RecordProgress } from './export.js';
import { remoteMetadataJson } from './logstream-validate.js';

export interface ImportStores extends PalaceContentStores {
  jobs: JobStore;
}

export interface ImportSummary {
  export_id: string;
  /** Records read from the stream (header and footer excluded). */
  counts: Record<RecordKind, number>;
  /** Records skipped because an earlier, interrupted run had applied them. */
  resumed_from: number;
  /** Rows newly stored where the store can tell (triples, artifacts, events). */
  inserted: { kg_triple: number; artifact: number; event: number };
}

const BATCH = 256;

function checkpointKey(exportId: string): string {
  return `import:${exportId}`;
}

/** Refuses an export whose vectors come from another model than the palace's embedder. */
export function assertSameModel(header: ExportHeader, running: ModelIdentity, dimension: number): void {
  if (!sameModel(header.model, running) || header.model.dimension !== dimension) {
    throw invalidArgument('model', 'matches_palace', `the export's vectors come from ${header.model.name} (${header.model.dimension}-d, weights ${header.model.weightsSha256.slice(0, 12)}…), this palace embeds with ${running.name} (${running.dimension}-d, weights ${running.weightsSha256.slice(0, 12)}…); refusing to mix them`, {
      export_model: header.model, palace_model: running, palace_dimension: dimension,
    });
  }
}

/** Applies the stream; `items` must start with the header and should end with the footer. */
export async function importRecords(stores: ImportStores, running: ModelIdentity, items: AsyncIterable<unknown>, onProgress?: RecordProgress): Promise<ImportSummary> {
  const iterator = items[Symbol.asyncIterator]();
  try {
    return await applyStream(stores, running, iterator, onProgress);
  } finally {
    // Closes the file when the import stops early (refused header, bad record, store error).
    await iterator.return?.();
  }
}

async function applyStream(stores: ImportStores, running: ModelIdentity, iterator: AsyncIterator<unknown>, onProgress?: RecordProgress): Promise<ImportSummary> {
  const first = await iterator.next();
  const header = parseHeader(first.done ? undefined : first.value);
  assertSameModel(header, running, stores.drawers.dimension);

  const key = checkpointKey(header.export_id);
  const saved = (await stores.jobs.getBlob(key)) as { applied?: number } | undefined;
  const resumeFrom = typeof saved?.applied === 'number' ? saved.applied : 0;
  const counts = zeroCounts();
  const inserted = { kg_triple: 0, artifact: 0, event: 0 };
  let read = 0;
  /** Records up to and including the batch's last one. */
  let batched = 0;
  let batch: PalaceRecord[] = [];
  let footer: Record<RecordKind, number> | undefined;

  const flush = async () => {
    if (batch.length === 0) return;
    await applyBatch(stores, batch, stores.drawers.dimension, inserted);
    batch = [];
    await stores.jobs.putBlob(key, { applied: batched });
  };

  for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
    const item = next.value as { kind?: unknown };
    if (item?.kind === 'footer') {
      footer = (item as { counts: Record<RecordKind, number> }).counts;
      break;
    }
    if (!RECORD_KINDS.includes(item?.kind as RecordKind)) throw invalidArgument('file', 'record_kind', `record ${read + 1}: unknown kind ${JSON.stringify(item?.kind)}`);
    const record = item as PalaceRecord;
    read++;
    counts[record.kind]++;
    onProgress?.(record.kind, counts[record.kind]);
    if (read <= resumeFrom) continue;
    if (batch.length > 0 && (batch[0]!.kind !== record.kind || batch.length >= BATCH)) await flush();
    batch.push(record);
    batched = read;
  }
  await flush();
  if (!footer) throw invalidArgument('file', 'complete_export', `the export ends after ${read} records without its footer (truncated?); what was read is applied, a re-run with the complete file finishes it`);
  for (const kind of RECORD_KINDS) {
    if (footer[kind] !== counts[kind]) throw invalidArgument('file', 'complete_export', `the export's footer counts ${footer[kind]} ${kind} records, the stream held ${counts[kind]}`);
  }
  await stores.jobs.dropArtifacts(key);
  return { export_id: header.export_id, counts, resumed_from: Math.min(resumeFrom, read), inserted };
}

async function applyBatch(stores: ImportStores, batch: PalaceRecord[], dimension: number, inserted: ImportSummary['inserted']): Promise<void> {
  const kind = batch[0]!.kind;
  const of = <K extends RecordKind>(_kind: K) => batch as Extract<PalaceRecord, { kind: K }>[];
  switch (kind) {
    case 'drawer': {
      const rows: DrawerWrite[] = of('drawer').map((r) => ({ id: r.id, content: r.content, meta: r.meta, embedding: decodeVector(r.embedding, dimension, `drawer ${r.id}`) }));
      await stores.drawers.upsert(rows);
      return;
    }
    case 'file_state':
      await stores.drawers.putFileStates(of('file_state').map((r) => r.state));
      return;
    case 'kg_triple':
      inserted.kg_triple += await stores.graph.kgRestore(of('kg_triple').map((r) => r.triple));
      return;
    case 'tunnel':
      await stores.graph.tunnelRestore(of('tunnel').map(({ tunnel: t }) => ({ ...t, source_wing_key: wingSlug(t.source.wing), target_wing_key: wingSlug(t.target.wing) })));
      return;
    case 'hallway':
      await stores.graph.hallwayRestore(of('hallway').map((r) => r.hallway));
      return;
    case 'artifact': {
      const artifacts = of('artifact').map(({ artifact: a }) => {
        const computed = createHash('sha256').update(a.content, 'utf8').digest('hex');
        if (computed !== a.sha256) {
          throw invalidArgument('file', 'artifact_hash', `artifact ${a.id} failed hash verification (claimed ${a.sha256.slice(0, 16)}..., computed ${computed.slice(0, 16)}...)`);
        }
        const { metadata, ...rest } = a;
        return { ...rest, size_bytes: Buffer.byteLength(a.content, 'utf8'), metadata_json: remoteMetadataJson(metadata) };
      });
      for (const artifact of artifacts) {
        if (await stores.logstream.applyRemoteArtifact(artifact)) inserted.artifact++;
      }
      return;
    }
    case 'event':
      // Own-origin events are stored too (reclaimOwn), so a palace can be restored from its own backup.
      for (const { event: { metadata, ...rest } } of of('event')) {
        if (await stores.logstream.applyRemoteEvent({ ...rest, metadata_json: remoteMetadataJson(metadata) }, { reclaimOwn: true }) === 'applied') inserted.event++;
      }
      return;
  }
}

/** The items of an export file, one parsed JSON value per line, streamed. */
export async function* readExportFile(file: string): AsyncGenerator<unknown> {
  const lines = readline.createInterface({ input: createReadStream(file).pipe(createGunzip()), crlfDelay: Infinity });
  let n = 0;
  try {
    for await (const line of lines) {
      n++;
      if (line.trim() === '') continue;
      try {
        yield JSON.parse(line) as unknown;
      } catch {
        throw invalidArgument('file', 'json_lines', `line ${n} of ${file} is not JSON`);
      }
    }
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('Z_')) throw invalidArgument('file', 'gzip', `${file} is not a complete gzip stream (${(e as Error).message}); what was read before is applied`);
    if (code === 'ENOENT') throw invalidArgument('file', 'exists', `${file} does not exist`);
    throw e;
  } finally {
    lines.close();
  }
}

/** `mempalace import <file>`. */
export async function importPalace(stores: ImportStores, running: ModelIdentity, file: string, onProgress?: RecordProgress): Promise<ImportSummary> {
  return importRecords(stores, running, readExportFile(file), onProgress);
}
