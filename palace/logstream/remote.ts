/**
 * The checks a record received from a peer must pass before anything else looks at it (issue 24,
 * M4): the same validators a local `event_append` or `artifact_put` runs — routing fields,
 * type, status, body and metadata limits, artifact kind and content limit — plus the fields only
 * a replicated record has (origin, origin_seq, hlc, created_at, signature, chain link). This
 * overrides docs/logstream.md §8.4's "stored as received": a record a local caller could not have
 * written is refused, never stored. Each refusal names the field and the rule.
 */
import { createHash } from 'node:crypto';
import { invalidArgument } from '../../core/errors.js';
import { MAX_SEQ, type RemoteArtifact, type RemoteEvent } from '../../stores/ports/logstream/records.js';
import { artifactDraft, artifactIds, eventBody, eventStatus, eventType, metadataJson, pyRepr, routingField } from './validate.js';

export const REPLICA_ID_RE = /^rep_(?:[0-9a-f]{32}|[0-9a-f]{12})$/;
const INSTANT_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/;
const SIG_RE = /^[A-Za-z0-9_-]{86}$/;

const asRecord = (
  input: unknown,
): Record<string, unknown> => (typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {});

/** A UTC instant `YYYY-MM-DDTHH:MM:SSZ` that names a real second (what both adapters stamp). */
export function utcInstant(field: string, value: unknown): string {
  const m = typeof value === 'string' ? INSTANT_RE.exec(value) : null;
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])) : Number.NaN;
  if (!m || !Number.isFinite(ms) || new Date(ms).toISOString().slice(0, 19) !== m[0].slice(0, 19)) {
    throw invalidArgument(field, 'utc_instant', `${field}=${pyRepr(value)} is not a UTC instant (expected YYYY-MM-DDTHH:MM:SSZ)`);
  }
  return value as string;
}

export function replicaIdField(field: string, value: unknown): string {
  if (typeof value !== 'string' || !REPLICA_ID_RE.test(value))
    throw invalidArgument(field, 'replica_id', `${field}=${pyRepr(value)} is not a replica id (rep_ + 32 or 12 lowercase hex)`);
  return value;
}

function seqField(field: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > MAX_SEQ) {
    throw invalidArgument(field, 'safe_integer', `${field}=${pyRepr(value)} is not an integer from ${min} to ${MAX_SEQ}`);
  }
  return value;
}

function recordId(field: string, prefix: 'evt' | 'art', value: unknown): string {
  const id = routingField(field, value, true)!;
  if (!id.startsWith(`${prefix}_`) || id !== value) throw invalidArgument(field, 'record_id', `${field}=${pyRepr(value)} is not a ${prefix}_ id`);
  return id;
}

/** The signature and chain link a sync answer carries; absent on imports, checked when present. */
function signedParts(r: Record<string, unknown>, originSeq: number): { sig?: string; prev_origin_seq?: number } {
  const out: { sig?: string; prev_origin_seq?: number } = {};
  if (r.sig !== undefined && r.sig !== null) {
    if (typeof r.sig !== 'string' || !SIG_RE.test(r.sig)) throw invalidArgument('sig', 'ed25519_signature', 'sig must be an Ed25519 signature in base64url');
    out.sig = r.sig;
  }
  if (r.prev_origin_seq !== undefined && r.prev_origin_seq !== null) {
    out.prev_origin_seq = seqField('prev_origin_seq', r.prev_origin_seq, 0);
    if (out.prev_origin_seq >= originSeq)
      throw invalidArgument('prev_origin_seq', 'below_origin_seq', `prev_origin_seq ${out.prev_origin_seq} is not below origin_seq ${originSeq}`);
  }
  return out;
}

/** An event as a peer serves it, through every local validator. */
export function remoteEvent(input: unknown): RemoteEvent {
  const e = asRecord(input);
  const id = recordId('id', 'evt', e.id);
  const origin_replica = replicaIdField('origin_replica', e.origin_replica);
  const origin_seq = seqField('origin_seq', e.origin_seq, 1);
  const hlc = typeof e.hlc === 'string' && /^\d{13}-[0-9a-f]{6}-/.test(e.hlc) && e.hlc.endsWith(`-${origin_replica}`) ? e.hlc : null;
  if (hlc === null) throw invalidArgument('hlc', 'hlc_of_origin', `hlc=${pyRepr(e.hlc)} is not a hybrid logical clock stamp of ${origin_replica}`);
  return {
    id,
    origin_replica,
    origin_seq,
    hlc,
    type: eventType(e.type),
    stream: routingField('stream', e.stream, true)!,
    room: routingField('room', e.room, true)!,
    topic: routingField('topic', e.topic, false),
    from_agent: routingField('from_agent', e.from_agent, true)!,
    to_agent: routingField('to_agent', e.to_agent, false),
    correlation_id: routingField('correlation_id', e.correlation_id, false),
    branch: routingField('branch', e.branch, false),
    base_commit: routingField('base_commit', e.base_commit, false),
    status: eventStatus(e.status),
    artifact_ids: artifactIds(e.artifact_ids),
    body: eventBody(e.body),
    created_at: utcInstant('created_at', e.created_at),
    metadata_json: metadataJson(e.metadata),
    ...signedParts(e, origin_seq),
  };
}

/** An artifact as a peer serves it: the local artifact validators, then the hash is recomputed. */
export function remoteArtifact(input: unknown): RemoteArtifact {
  const a = asRecord(input);
  const id = recordId('id', 'art', a.id);
  const draft = artifactDraft({ kind: a.kind, created_by: a.created_by, content: a.content, metadata: a.metadata });
  const computed = createHash('sha256').update(a.content as string, 'utf8').digest('hex');
  const claimed = String(a.sha256);
  if (computed !== claimed || draft.sha256 !== computed) {
    throw invalidArgument('sha256', 'hash_verification',
      `remote artifact ${pyRepr(id)} failed hash verification (claimed ${claimed.slice(0, 16)}..., computed ${computed.slice(0, 16)}...)`);
  }
  const origin = a.origin_replica === null || a.origin_replica === undefined || a.origin_replica === ''
    ? null
    : replicaIdField('origin_replica', a.origin_replica);
  const sig = a.sig === undefined || a.sig === null ? {} : typeof a.sig === 'string' && SIG_RE.test(a.sig) ? { sig: a.sig } : null;
  if (sig === null) throw invalidArgument('sig', 'ed25519_signature', 'sig must be an Ed25519 signature in base64url');
  return {
    id,
    kind: draft.kind,
    sha256: computed,
    size_bytes: draft.size_bytes,
    content: draft.content,
    created_by: draft.created_by,
    created_at: utcInstant('created_at', a.created_at),
    origin_replica: origin,
    metadata_json: draft.metadata_json,
    ...sig,
  };
}
