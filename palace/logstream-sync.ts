/**
 * Peer replication of the logstream (logstream.md §7.3, §8.2–§8.4): the three pull endpoints a
 * replica serves, the checks a received event or artifact must pass, and one anti-entropy round
 * against one peer. A round resumes from the local version vector, which the store keeps
 * durably, so a crash mid-round costs only a re-pull of the tail and every apply is idempotent.
 */
import { createHash } from 'node:crypto';
import { PalaceError, invalidArgument, isPalaceError } from '../core/errors.js';
import type { Logstream, RemoteArtifact, RemoteEvent, StoredEvent } from '../stores/ports/logstream.js';
import { BODY_MAX_BYTES, METADATA_MAX_BYTES, pyRepr, remoteMetadataJson, routingField } from './logstream-validate.js';
import type { Logger } from '../core/log.js';

export const OPS_PAGE_MAX = 500;

/** A configured peer (§8.6); the token never leaves the transport. */
export interface SyncPeer {
  name: string;
  url: string;
  token?: string;
}

export type SyncPath = '/sync/version_vector' | '/sync/ops' | '/sync/artifact';

/** The transport seam of §8.10: one authenticated round trip to a peer. */
export interface SyncTransport {
  request(peer: SyncPeer, path: SyncPath, params: Record<string, string>): Promise<{ status: number; body: unknown }>;
}

/** The peer's url with any user-info removed, for messages (§8.6). */
export function peerLabel(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url.replace(/\/\/[^/@]*@/, '//');
  }
}

// --- serving --------------------------------------------------------------------------------

function integerParam(field: string, value: unknown, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  if (typeof value !== 'string' || !/^-?\d+$/.test(value.trim())) throw invalidArgument(field, 'integer', `${field} must be an integer`);
  return Number(value.trim());
}

/** `GET /sync/ops`: events authored by `origin` after `after`, ascending `origin_seq`. */
export async function syncOps(logstream: Logstream, params: Record<string, unknown>): Promise<{ origin: string; events: StoredEvent[]; count: number }> {
  const origin = typeof params.origin === 'string' ? params.origin.trim() : '';
  if (origin === '') throw invalidArgument('origin', 'non_empty_string', 'origin must be a non-empty string');
  const after = integerParam('after', params.after, 0);
  if (after < 0) throw invalidArgument('after', 'non_negative_integer', 'after_seq must be a non-negative integer');
  const limit = integerParam('limit', params.limit, OPS_PAGE_MAX);
  if (limit < 1) throw invalidArgument('limit', 'positive_integer', 'limit must be a positive integer');
  const events = await logstream.opsAfter(origin, after, Math.min(limit, OPS_PAGE_MAX));
  return { origin, events, count: events.length };
}

/** `GET /sync/artifact`: the full artifact with its content. */
export async function syncArtifact(logstream: Logstream, params: Record<string, unknown>): Promise<{ artifact: Record<string, unknown> }> {
  const id = typeof params.id === 'string' ? params.id.trim() : '';
  if (id === '') throw invalidArgument('id', 'non_empty_string', 'artifact_id must be a non-empty string');
  const a = await logstream.getArtifact(id);
  if (!a) throw new PalaceError('not_found', `artifact ${pyRepr(id)} not found`, { field: 'id', rule: 'known_artifact', details: { id } });
  return { artifact: { id: a.id, kind: a.kind, sha256: a.sha256, size_bytes: a.size_bytes, content: a.content, created_by: a.created_by, created_at: a.created_at, origin_replica: a.origin_replica, metadata: a.metadata } };
}

// --- receiving ------------------------------------------------------------------------------

const nonEmpty = (v: unknown) => (typeof v === 'string' && v !== '') || (typeof v === 'number' && Number.isFinite(v));

function requireFields(kind: 'event' | 'artifact', record: Record<string, unknown>, fields: string[]): void {
  for (const f of fields) {
    if (!nonEmpty(record[f])) throw invalidArgument(f, 'remote_required', `remote ${kind} is missing required field ${pyRepr(f)}`);
  }
}

const optionalText = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** §8.4 artifacts: required fields, then the hash is recomputed; a corrupt transfer never enters the store. */
export function remoteArtifact(input: unknown): RemoteArtifact {
  const a = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  requireFields('artifact', a, ['id', 'kind', 'sha256', 'content', 'created_by', 'created_at']);
  const content = a.content as string;
  const computed = createHash('sha256').update(content, 'utf8').digest('hex');
  const claimed = String(a.sha256);
  if (computed !== claimed) {
    throw invalidArgument('sha256', 'hash_verification', `remote artifact ${pyRepr(a.id)} failed hash verification (claimed ${claimed.slice(0, 16)}..., computed ${computed.slice(0, 16)}...)`);
  }
  return {
    id: String(a.id), kind: String(a.kind), sha256: computed, size_bytes: Buffer.byteLength(content, 'utf8'), content,
    created_by: String(a.created_by), created_at: String(a.created_at), origin_replica: optionalText(a.origin_replica), metadata_json: remoteMetadataJson(a.metadata),
  };
}

/** §8.4 events: required fields; everything else stored verbatim (topic routing-checked, metadata canonical). */
export function remoteEvent(input: unknown, log?: Logger): RemoteEvent {
  const e = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  requireFields('event', e, ['id', 'type', 'stream', 'room', 'from_agent', 'created_at', 'origin_replica', 'origin_seq', 'hlc']);
  const originSeq = Number(e.origin_seq);
  if (!Number.isSafeInteger(originSeq) || originSeq < 1) throw invalidArgument('origin_seq', 'positive_integer', `remote event ${pyRepr(e.id)} has origin_seq ${pyRepr(e.origin_seq)}, not a positive integer`);
  const ids = Array.isArray(e.artifact_ids) ? [...new Set(e.artifact_ids.filter((x): x is string => typeof x === 'string' && x !== ''))] : [];
  const body = typeof e.body === 'string' ? e.body : '';
  const metadata_json = remoteMetadataJson(e.metadata);
  // DECISIONS Q5: stored as received for convergence, logged when beyond the local limits.
  if (log && (Buffer.byteLength(body, 'utf8') > BODY_MAX_BYTES || Buffer.byteLength(metadata_json, 'utf8') > METADATA_MAX_BYTES)) {
    log.warn(`mempalace sync: remote event ${String(e.id)} from ${String(e.origin_replica)} exceeds the local body or metadata limit; stored as received`);
  }
  return {
    id: String(e.id), origin_replica: String(e.origin_replica), origin_seq: originSeq, hlc: String(e.hlc),
    type: String(e.type), stream: String(e.stream), room: String(e.room), topic: routingField('topic', e.topic, false),
    from_agent: String(e.from_agent), to_agent: optionalText(e.to_agent), correlation_id: optionalText(e.correlation_id),
    branch: optionalText(e.branch), base_commit: optionalText(e.base_commit), status: optionalText(e.status),
    artifact_ids: ids, body, created_at: String(e.created_at), metadata_json,
  };
}

// --- one round against one peer (§8.3) ------------------------------------------------------

export interface PullReport {
  peer_url: string;
  peer_replica: string;
  pulled_events: number;
  pulled_artifacts: number;
  per_origin: Record<string, number>;
  remote_version_vector: Record<string, number>;
  remote_profile: Record<string, unknown> | null;
  remote_profiles: Record<string, unknown>;
}

async function fetchJson(transport: SyncTransport, peer: SyncPeer, path: SyncPath, params: Record<string, string>): Promise<Record<string, unknown>> {
  const { status, body } = await transport.request(peer, path, params);
  if (status !== 200) {
    const detail = typeof body === 'object' && body !== null && typeof (body as { error?: unknown }).error === 'string' ? `: ${(body as { error: string }).error}` : '';
    throw new PalaceError('store_unavailable', `${peerLabel(peer.url)}${path}: HTTP ${status}${detail}`, { retryable: true, details: { status } });
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new PalaceError('store_unavailable', `${peerLabel(peer.url)}${path}: the answer is not a JSON object`, { retryable: true });
  return body as Record<string, unknown>;
}

function versionVectorOf(value: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (typeof value !== 'object' || value === null) return out;
  for (const [origin, top] of Object.entries(value)) if (typeof top === 'number' && Number.isSafeInteger(top) && top > 0) out[origin] = top;
  return out;
}

const asObject = (v: unknown): Record<string, unknown> | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

/**
 * Pull everything `peer` holds that this replica lacks: for every origin the peer knows (other
 * than this replica, unless the peer holds more of it — §10.7), the ops after the local vector's
 * entry, artifacts before the events that cite them. Events applied before a failure stay; the
 * next round resumes from the vector.
 */
export async function pullFromPeer(logstream: Logstream, transport: SyncTransport, peer: SyncPeer, log?: Logger): Promise<PullReport> {
  const label = peerLabel(peer.url);
  const remote = await fetchJson(transport, peer, '/sync/version_vector', {});
  const remoteVector = versionVectorOf(remote.version_vector);
  const self = await logstream.replicaId();
  const local = await logstream.versionVector();
  const report: PullReport = {
    peer_url: label, peer_replica: typeof remote.replica_id === 'string' ? remote.replica_id : '', pulled_events: 0, pulled_artifacts: 0, per_origin: {},
    remote_version_vector: remoteVector, remote_profile: asObject(remote.profile), remote_profiles: asObject(remote.profiles) ?? {},
  };
  // Own events come back in ascending order, so what is held up to the peer's number is a prefix.
  const ownHeld = await logstream.originTop(self, remoteVector[self] ?? 0);
  const ownBehind = (remoteVector[self] ?? 0) > ownHeld;
  if (ownBehind) {
    // §10.7: a peer holds more of our own origin than we do — this store was restored or lost its
    // tail. First stop minting numbers the peer already holds, then pull our own events back.
    await logstream.reserveOwnSeqAbove(remoteVector[self]!);
    log?.warn(`mempalace sync: WARNING ${label} holds events of this replica (${self}) up to origin_seq ${remoteVector[self]}, but this store holds them only up to ${ownHeld} (restored from an older copy?); own appends now continue above ${remoteVector[self]} and the missing own events are pulled back`);
  }
  for (const origin of Object.keys(remoteVector).sort()) {
    if (origin === self && !ownBehind) continue;
    let after = origin === self ? ownHeld : (local[origin] ?? 0);
    while (after < remoteVector[origin]!) {
      const page = await fetchJson(transport, peer, '/sync/ops', { origin, after: String(after), limit: String(OPS_PAGE_MAX) });
      const events = Array.isArray(page.events) ? page.events : [];
      if (events.length === 0) break;
      const before = after;
      for (const raw of events) {
        const event = remoteEvent(raw, log);
        for (const artifactId of event.artifact_ids) {
          if (await logstream.hasArtifact(artifactId)) continue;
          const { status, body } = await transport.request(peer, '/sync/artifact', { id: artifactId });
          if (status === 404) throw new PalaceError('not_found', `${label}: peer served event ${pyRepr(event.id)} but not its artifact ${pyRepr(artifactId)}`, { rule: 'peer_artifact_missing' });
          if (status !== 200) throw new PalaceError('store_unavailable', `${label}/sync/artifact: HTTP ${status}`, { retryable: true });
          if (await logstream.applyRemoteArtifact(remoteArtifact((body as { artifact?: unknown } | null)?.artifact))) report.pulled_artifacts++;
        }
        try {
          if ((await logstream.applyRemoteEvent(event, { reclaimOwn: origin === self })) === 'applied') {
            report.pulled_events++;
            report.per_origin[origin] = (report.per_origin[origin] ?? 0) + 1;
          }
        } catch (e) {
          if (isPalaceError(e) && e.rule === 'known_artifact') {
            throw new PalaceError('not_found', `remote event ${pyRepr(event.id)} references artifact ${pyRepr(e.details?.artifact_id)} not yet applied locally`, { rule: 'known_artifact' });
          }
          throw e;
        }
        after = Math.max(after, event.origin_seq);
      }
      // A page that does not advance would loop forever; the peer broke its own contract.
      if (after === before) break;
    }
  }
  return report;
}
