/**
 * The palace as a stream of records: what `export` writes (one JSON object per line, gzip) and
 * `import` and `migrate` read. A header (format, version, the model identity of the vectors)
 * comes first, then drawers with their vectors, file states, KG triples, tunnels, hallways,
 * artifacts, events and the audit trail, then a footer with the count of each kind, so a truncated stream is
 * recognised. Vectors travel as base64 of their little-endian float32 bytes: exact and compact.
 */
import type { DrawerMeta } from '../../core/drawer.js';
import { invalidArgument } from '../../core/errors.js';
import type { ModelIdentity } from '../../embed/model-identity.js';
import type { FileState } from '../../stores/ports/drawers/file-states.js';
import type { HallwayRecord, KgTriple, TunnelRecord } from '../../stores/ports/graph-store.js';
import type { StoredArtifact, StoredEvent } from '../../stores/ports/logstream/records.js';
import type { AuditAnchor, AuditRecord } from '../../stores/ports/audit-log.js';

export const EXPORT_FORMAT = 'mempalace-export';
export const EXPORT_VERSION = 1;

export const RECORD_KINDS = ['drawer', 'file_state', 'kg_triple', 'tunnel', 'hallway', 'artifact', 'event', 'audit'] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

export interface ExportHeader {
  kind: 'header';
  format: typeof EXPORT_FORMAT;
  version: number;
  /** Random id of this export; an interrupted import of it resumes under this id. */
  export_id: string;
  created_at: string;
  model: ModelIdentity;
  source: { profile: string; palace: string };
}

export type PalaceRecord =
  | { kind: 'drawer'; id: string; content: string; meta: DrawerMeta; embedding: string }
  | { kind: 'file_state'; state: FileState }
  | { kind: 'kg_triple'; triple: ExportedTriple }
  | { kind: 'tunnel'; tunnel: TunnelRecord }
  | { kind: 'hallway'; hallway: HallwayRecord }
  | { kind: 'artifact'; artifact: StoredArtifact }
  | { kind: 'event'; event: Omit<StoredEvent, 'seq'> }
  /** The audit trail, verbatim (seq and hashes), each with the anchor its chain starts from. */
  | { kind: 'audit'; record: AuditRecord; anchor: AuditAnchor };

/** A triple as an export holds it: files written before issue 28 name no owner. */
export type ExportedTriple = Omit<KgTriple, OwnershipField> & Partial<Pick<KgTriple, OwnershipField>>;
type OwnershipField = 'created_by' | 'updated_by' | 'updated_at';

export interface ExportFooter {
  kind: 'footer';
  counts: Record<RecordKind, number>;
}

export type StreamItem = ExportHeader | PalaceRecord | ExportFooter;

export function zeroCounts(): Record<RecordKind, number> {
  return Object.fromEntries(RECORD_KINDS.map((k) => [k, 0])) as Record<RecordKind, number>;
}

export function encodeVector(v: Float32Array): string {
  const bytes = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) bytes.writeFloatLE(v[i]!, i * 4);
  return bytes.toString('base64');
}

export function decodeVector(text: string, dimension: number, where: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length !== dimension * 4)
    throw invalidArgument('file', 'vector_dimension', `${where}: the embedding holds ${bytes.length / 4} numbers, the palace ${dimension}`);
  const v = new Float32Array(dimension);
  for (let i = 0; i < dimension; i++) v[i] = bytes.readFloatLE(i * 4);
  return v;
}

/** The header, checked for shape; anything else is not an export of this format. */
export function parseHeader(item: unknown): ExportHeader {
  const h = item as Partial<ExportHeader> | null;
  if (!h || h.kind !== 'header' || h.format !== EXPORT_FORMAT)
    throw invalidArgument('file', 'export_format', `not a ${EXPORT_FORMAT} file: the first line is not its header`);
  if (h.version !== EXPORT_VERSION)
    throw invalidArgument('file', 'export_version',
      `${EXPORT_FORMAT} version ${String(h.version)} is not supported (this build reads version ${EXPORT_VERSION})`);
  const m = h.model as Partial<ModelIdentity> | undefined;
  if (!m || typeof m.name !== 'string' || typeof m.dimension !== 'number' || typeof m.weightsSha256 !== 'string' || typeof h.export_id !== 'string') {
    throw invalidArgument('file', 'export_format', 'the export header lacks its model identity or export id');
  }
  return h as ExportHeader;
}
