/**
 * `mempalace export`: the whole palace as a stream of records (backup-records.ts), read page by
 * page from the stores so memory stays bounded whatever the palace's size, written as gzip JSON
 * lines to `<file>.partial` and renamed into place only when complete.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { DrawerMeta } from '../../core/drawer.js';
import { maskUrlCredentials } from '../../core/url-credentials.js';
import type { ModelIdentity } from '../../embed/model-identity.js';
import type { DrawerBulk } from '../../stores/ports/drawers/drawer-bulk.js';
import type { DrawerIndex } from '../../stores/ports/drawers/drawer-index.js';
import type { FileStateStore } from '../../stores/ports/drawers/file-states.js';
import type { GraphStore } from '../../stores/ports/graph-store.js';
import type { LogstreamStore } from '../../stores/ports/palace-stores.js';
import type { AuditLog } from '../../stores/ports/audit-log.js';
import { encodeVector, EXPORT_FORMAT, EXPORT_VERSION, zeroCounts } from './backup-records.js';
import type { ExportHeader, PalaceRecord, RecordKind, StreamItem } from './backup-records.js';

/** The stores a palace's content lives in. */
export interface PalaceContentStores {
  profile: string;
  palace: string;
  drawers: DrawerIndex & FileStateStore & DrawerBulk;
  graph: GraphStore;
  logstream: LogstreamStore;
  audit: AuditLog;
}

const PAGE = 500;

/**
 * A drawer's or file state's source as exported: a credential written into a repository URL by a
 * mine made before credentials were kept apart is masked, never carried into the file.
 */
function exportedMeta(meta: DrawerMeta): DrawerMeta {
  return typeof meta.source_file === 'string' ? { ...meta, source_file: maskUrlCredentials(meta.source_file) } : meta;
}

export type RecordProgress = (kind: RecordKind, done: number) => void;

/** Every record of the palace, header first and footer last, a page at a time. */
export async function* palaceRecords(stores: PalaceContentStores, model: ModelIdentity): AsyncGenerator<StreamItem> {
  const header: ExportHeader = {
    kind: 'header',
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    export_id: randomUUID(),
    created_at: new Date().toISOString(),
    model,
    source: { profile: stores.profile, palace: stores.palace },
  };
  yield header;
  const counts = zeroCounts();
  const emit = function*(records: PalaceRecord[]) {
    for (const r of records) {
      counts[r.kind]++;
      yield r;
    }
  };

  for (let after: string | undefined;;) {
    const rows = await stores.drawers.scanRows(after, PAGE);
    yield* emit(rows.map((d) => ({ kind: 'drawer', id: d.id, content: d.content, meta: exportedMeta(d.meta), embedding: encodeVector(d.embedding) })));
    if (rows.length < PAGE) break;
    after = rows[rows.length - 1]!.id;
  }
  for (let after: string | undefined;;) {
    const page = await stores.drawers.listFileStates(undefined, after, PAGE);
    yield* emit(page.items.map((state) => ({ kind: 'file_state', state: { ...state, source_file: maskUrlCredentials(state.source_file) } })));
    if (page.next === undefined) break;
    after = page.next;
  }
  for (let after: { recorded_at: string; id: string } | undefined;;) {
    const triples = await stores.graph.kgScan(after, PAGE);
    yield* emit(triples.map((triple) => ({ kind: 'kg_triple', triple })));
    if (triples.length < PAGE) break;
    const last = triples[triples.length - 1]!;
    after = { recorded_at: last.recorded_at, id: last.id };
  }
  // Tunnels join rooms and hallways pair entities of one wing: both lists are read whole.
  yield* emit((await stores.graph.tunnelList()).map((tunnel) => ({ kind: 'tunnel', tunnel })));
  yield* emit((await stores.graph.hallwayList()).map((hallway) => ({ kind: 'hallway', hallway })));
  for (let cursor: string | undefined;;) {
    const page = await stores.logstream.scanArtifacts(cursor, PAGE);
    yield* emit(page.items.map((artifact) => ({ kind: 'artifact', artifact })));
    if (page.next === undefined) break;
    cursor = page.next;
  }
  for (let afterSeq = 0;;) {
    const events = await stores.logstream.list({ order: 'asc', afterSeq, limit: PAGE });
    yield* emit(events.map(({ seq: _seq, ...event }) => ({ kind: 'event', event })));
    if (events.length < PAGE) break;
    afterSeq = events[events.length - 1]!.seq;
  }
  const anchor = await stores.audit.anchor();
  for (let afterSeq = anchor.seq;;) {
    const records = await stores.audit.scan(afterSeq, PAGE);
    yield* emit(records.map((record) => ({ kind: 'audit', record, anchor })));
    if (records.length < PAGE) break;
    afterSeq = records[records.length - 1]!.seq;
  }
  yield { kind: 'footer', counts };
}

export interface ExportSummary {
  file: string;
  export_id: string;
  model: ModelIdentity;
  counts: Record<RecordKind, number>;
  bytes: number;
}

/** Writes the palace to `file` (gzip JSON lines); the file appears only once it is complete. */
export async function exportPalace(stores: PalaceContentStores, model: ModelIdentity, file: string, onProgress?: RecordProgress): Promise<ExportSummary> {
  const partial = `${file}.partial`;
  let header: ExportHeader | undefined;
  let counts = zeroCounts();
  const done = zeroCounts();
  async function* lines() {
    for await (const item of palaceRecords(stores, model)) {
      if (item.kind === 'header') header = item;
      else if (item.kind === 'footer') counts = item.counts;
      else onProgress?.(item.kind, ++done[item.kind]);
      yield `${JSON.stringify(item)}\n`;
    }
  }
  try {
    await pipeline(Readable.from(lines()), createGzip(), createWriteStream(partial, { mode: 0o600 }));
    await fs.rename(partial, file);
  } catch (e) {
    await fs.rm(partial, { force: true });
    throw e;
  }
  const { size } = await fs.stat(file);
  return { file, export_id: header!.export_id, model, counts, bytes: size };
}
