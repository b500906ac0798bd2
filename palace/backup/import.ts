/**
 * `mempalace import`: applies a record stream (backup-records.ts) to the palace's stores.
 *
 * - The header comes first and is checked before anything is written: its model identity must
 *   be the running embedder's, and its dimension the drawer index's, or the import is refused.
 * - Every record passes the live write rules (import-record-rules.ts) before its batch is
 *   written, and an id repeated in the stream is a no-op when identical and an error when not
 *   (import-duplicates.ts). The import stops at the first bad record with an error naming its
 *   line, field and rule; the batches before it stay applied (a re-run is idempotent), nothing
 *   from its batch on is written.
 * - Every write is idempotent by id (drawers upserted, file states put, triples, tunnels and
 *   hallways restored by id); events and artifacts are stored or are exact duplicates of what is
 *   held, never silently skipped (import-logstream.ts).
 * - Resumable: after each batch a checkpoint tied to the stream and to this palace is kept in
 *   the job store (import-checkpoint.ts); a re-run after a crash skips what it applied. The
 *   checkpoint is dropped when the stream ends with its footer and every count matches.
 */
import { invalidArgument } from '../../core/errors.js';
import { wingSlug } from '../../core/validate.js';
import type { DrawerWrite } from '../../core/drawer.js';
import type { ModelIdentity } from '../../embed/model-identity.js';
import { sameModel } from '../../embed/model-identity.js';
import type { JobStore } from '../../stores/ports/job-store.js';
import { decodeVector, parseHeader, RECORD_KINDS, zeroCounts } from './backup-records.js';
import type { ExportHeader, PalaceRecord, RecordKind } from './backup-records.js';
import type { PalaceContentStores, RecordProgress } from './export.js';
import { exportFileIdentity, readExportFile } from './export-file.js';
import type { CheckpointScope } from './import-checkpoint.js';
import { CheckpointTrail, dropCheckpoint, loadCheckpoint, saveCheckpoint } from './import-checkpoint.js';
import { StreamDuplicates } from './import-duplicates.js';
import { restoreArtifacts, restoreEvents } from './import-logstream.js';
import { checkRecord, recordPlace } from './import-record-rules.js';
import { remoteArtifact, remoteEvent } from '../logstream/remote.js';

export interface ImportStores extends PalaceContentStores {
  jobs: JobStore;
}

export interface ImportSummary {
  export_id: string;
  /** Records read from the stream (header and footer excluded). */
  counts: Record<RecordKind, number>;
  /** Records skipped because an earlier, interrupted run had applied them. */
  resumed_from: number;
  /** Why a checkpoint found for this stream was not used (the import started from the first record). */
  checkpoint_discarded?: string;
  /** Records skipped because the stream had already carried the identical record. */
  repeated: number;
  /** Rows newly stored where the store can tell (triples, artifacts, events). */
  inserted: { kg_triple: number; artifact: number; event: number; audit: number };
}

const BATCH = 256;

/** Refuses an export whose vectors come from another model than the palace's embedder. */
export function assertSameModel(header: ExportHeader, running: ModelIdentity, dimension: number): void {
  if (!sameModel(header.model, running) || header.model.dimension !== dimension) {
    throw invalidArgument('model', 'matches_palace',
      `the export's vectors come from ${header.model.name} (${header.model.dimension}-d, weights ${
        header.model.weightsSha256.slice(0, 12)
      }…), this palace embeds with ${running.name} (${running.dimension}-d, weights ${running.weightsSha256.slice(0, 12)}…); refusing to mix them`, {
      export_model: header.model,
      palace_model: running,
      palace_dimension: dimension,
    });
  }
}

/**
 * Applies the stream; `items` must start with the header and should end with the footer. With
 * a `scope`, progress is checkpointed there and an earlier run's checkpoint is resumed; without
 * one (a stream nothing identifies) every record is applied.
 */
export async function importRecords(stores: ImportStores, running: ModelIdentity, items: AsyncIterable<unknown>, onProgress?: RecordProgress,
  scope?: CheckpointScope): Promise<ImportSummary> {
  const iterator = items[Symbol.asyncIterator]();
  try {
    return await applyStream(stores, running, iterator, onProgress, scope);
  } finally {
    // Closes the file when the import stops early (refused header, bad record, store error).
    await iterator.return?.();
  }
}

async function applyStream(stores: ImportStores, running: ModelIdentity, iterator: AsyncIterator<unknown>, onProgress: RecordProgress | undefined,
  scope: CheckpointScope | undefined): Promise<ImportSummary> {
  const first = await iterator.next();
  const header = parseHeader(first.done ? undefined : first.value);
  const dimension = stores.drawers.dimension;
  assertSameModel(header, running, dimension);

  const saved = scope ? await loadCheckpoint(stores, scope) : undefined;
  const resumeFrom = saved && 'applied' in saved ? saved.applied : 0;
  const trail = saved && 'trail' in saved ? saved.trail : new CheckpointTrail();
  const duplicates = new StreamDuplicates();
  const counts = zeroCounts();
  const inserted = { kg_triple: 0, artifact: 0, event: 0, audit: 0 };
  let repeated = 0;
  let read = 0;
  /** Records up to and including the batch's last one. */
  let batched = 0;
  let batch: { record: PalaceRecord; index: number }[] = [];
  let footer: Partial<Record<RecordKind, number>> | undefined;

  const flush = async () => {
    if (batch.length === 0) return;
    await applyBatch(stores, batch, dimension, inserted);
    trail.note(batch.map((b) => b.record));
    batch = [];
    if (scope) await saveCheckpoint(stores, scope, batched, trail);
  };

  for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
    const item = next.value as { kind?: unknown };
    if (item?.kind === 'footer') {
      footer = (item as { counts: Partial<Record<RecordKind, number>> }).counts;
      break;
    }
    read++;
    const record = checkRecord(item, read, dimension);
    counts[record.kind]++;
    onProgress?.(record.kind, counts[record.kind]);
    if (duplicates.repeats(record, read)) {
      repeated++;
      continue;
    }
    if (read <= resumeFrom) continue;
    if (batch.length > 0 && (batch[0]!.record.kind !== record.kind || batch.length >= BATCH)) await flush();
    batch.push({ record, index: read });
    batched = read;
  }
  await flush();
  if (!footer)
    throw invalidArgument('file', 'complete_export',
      `the export ends after ${read} records without its footer (truncated?); what was read is applied, a re-run with the complete file finishes it`);
  for (const kind of RECORD_KINDS) {
    // A kind the footer does not name is one the exporting build did not have yet (the audit trail): none.
    const expected = footer[kind] ?? 0;
    if (expected !== counts[kind])
      throw invalidArgument('file', 'complete_export', `the export's footer counts ${expected} ${kind} records, the stream held ${counts[kind]}`);
  }
  if (scope) await dropCheckpoint(stores, scope);
  return {
    export_id: header.export_id,
    counts,
    resumed_from: Math.min(resumeFrom, read),
    ...(saved && 'discarded' in saved ? { checkpoint_discarded: saved.discarded } : {}),
    repeated,
    inserted,
  };
}

async function applyBatch(stores: ImportStores, batch: { record: PalaceRecord; index: number }[], dimension: number,
  inserted: ImportSummary['inserted']): Promise<void> {
  const kind = batch[0]!.record.kind;
  const of = <K extends RecordKind>(_kind: K) => batch.map((b) => b.record) as Extract<PalaceRecord, { kind: K }>[];
  const where = (i: number) => recordPlace(batch[i]!.index);
  switch (kind) {
    case 'drawer': {
      const rows: DrawerWrite[] = of('drawer').map((r) => ({ id: r.id, content: r.content, meta: r.meta,
        embedding: decodeVector(r.embedding, dimension, `drawer ${r.id}`) })
      );
      await stores.drawers.upsert(rows);
      return;
    }
    case 'file_state':
      await stores.drawers.putFileStates(of('file_state').map((r) => r.state));
      return;
    case 'kg_triple':
      // Exports written before issue 28 name no owner: unknown, as for facts added outside a face.
      inserted.kg_triple += await stores.graph.kgRestore(of('kg_triple').map((r) => ({ created_by: null, updated_by: null, updated_at: null, ...r.triple })));
      return;
    case 'tunnel':
      await stores.graph.tunnelRestore(
        of('tunnel').map(({ tunnel: t }) => ({ ...t, source_wing_key: wingSlug(t.source.wing), target_wing_key: wingSlug(t.target.wing) })),
      );
      return;
    case 'hallway':
      await stores.graph.hallwayRestore(of('hallway').map((r) => r.hallway));
      return;
    case 'artifact':
      inserted.artifact += await restoreArtifacts(stores.logstream, of('artifact').map((r) => {
        const { sig: _sig, ...artifact } = remoteArtifact(r.artifact);
        return artifact;
      }), where);
      return;
    case 'event':
      // Exports carry no signature or chain link: restored events are stored as plain records.
      inserted.event += await restoreEvents(stores.logstream, of('event').map((r) => {
        const { sig: _sig, prev_origin_seq: _prev, ...event } = remoteEvent(r.event);
        return event;
      }), where);
      return;
    case 'audit': {
      const records = of('audit');
      inserted.audit += await stores.audit.restore(records.map((r) => r.record), records[0]!.anchor);
      return;
    }
  }
}

/** The checkpoint scope of an export file: its identity (size and sha256); fails when it cannot be read. */
export async function exportFileScope(file: string): Promise<CheckpointScope> {
  const identity = await exportFileIdentity(file);
  return { key: `import:${identity.sha256}`, stream: `file ${identity.size} ${identity.sha256}` };
}

/** `mempalace import <file>`: resumable under the file's identity. */
export async function importPalace(stores: ImportStores, running: ModelIdentity, file: string, onProgress?: RecordProgress): Promise<ImportSummary> {
  const scope = await exportFileScope(file);
  return importRecords(stores, running, readExportFile(file), onProgress, scope);
}
