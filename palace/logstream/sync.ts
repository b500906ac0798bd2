/**
 * Peer replication of the logstream (docs/logstream.md §7.3, §8.2–§8.4): the three pull endpoints a
 * replica serves and one anti-entropy round against one peer. A round resumes from the local
 * version vector, which the store keeps durably, so a crash mid-round costs only a re-pull of the
 * tail and every apply is idempotent.
 *
 * Trust (issue 24, M1–M3): a replica signs its own events and artifacts when it serves them and
 * relays serve the stored signatures verbatim. A receiver keeps an event of origin X only when
 * it is signed by X's key (from the peers file), chains to the local watermark for X, lies within
 * the top the peer advertised, and came in an answer for X; anything else is a refusal reported
 * in the round's report (and so in `mesh_peers`), and stops that origin for the round, since its
 * chain cannot continue past it. Stored volume is capped per origin and per round.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { PalaceError, invalidArgument, isPalaceError } from '../../core/errors.js';
import type { LogstreamReplication } from '../../stores/ports/logstream/replication.js';
import type { RemoteArtifact, RemoteEvent, ReplicatedEvent, StoredEvent } from '../../stores/ports/logstream/records.js';
import { remoteArtifact, remoteEvent } from './remote.js';
import { artifactSignatureValid, eventSignatureValid, privateKey, signArtifact, signEvent } from './signature.js';
import { pyRepr, remoteMetadataJson } from './validate.js';
import type { Logger } from '../../core/log.js';

export const OPS_PAGE_MAX = 500;
/** A served page stops adding events past this many body + metadata bytes (always one event at least). */
export const OPS_PAGE_MAX_BYTES = 4 * 1024 * 1024;
/** Per round, the bytes of events and artifacts stored from one origin, and from one peer over all origins. */
export const ORIGIN_ROUND_MAX_BYTES = 16 * 1024 * 1024;
export const PEER_ROUND_MAX_BYTES = 64 * 1024 * 1024;
/** Per round, the events stored from one origin (many tiny events cost rows, not bytes). */
export const ORIGIN_ROUND_MAX_EVENTS = 10_000;

/** A configured peer (docs/logstream.md §8.6); the token never leaves the transport. */
export interface SyncPeer {
  name: string;
  url: string;
  token?: string;
}

/** Public keys of the origins this replica accepts records from, by replica id (from the peers file). */
export type OriginKeys = ReadonlyMap<string, KeyObject>;

export type SyncPath = '/sync/version_vector' | '/sync/ops' | '/sync/artifact';

/** The transport seam of docs/logstream.md §8.10: one authenticated round trip to a peer. */
export interface SyncTransport {
  request(peer: SyncPeer, path: SyncPath, params: Record<string, string>): Promise<{ status: number; body: unknown }>;
}

/** The peer's url with any user-info removed, for messages (docs/logstream.md §8.6). */
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

/** An event as `/sync/ops` serves it: the stored event, the origin's signature and its chain link. */
export type ServedEvent = StoredEvent & { sig: string | null; prev_origin_seq: number | null };

const eventBytes = (e: StoredEvent): number => Buffer.byteLength(e.body, 'utf8') + Buffer.byteLength(JSON.stringify(e.metadata), 'utf8');
const signedFields = (e: StoredEvent) => ({ ...e, metadata_json: remoteMetadataJson(e.metadata) });

/**
 * `GET /sync/ops`: events authored by `origin` after `after`, ascending `origin_seq`. This
 * replica signs its own events (chained to the own event before each); others' events carry the
 * signature they were received with, or none if they were stored before signing existed.
 */
export async function syncOps(logstream: LogstreamReplication,
  params: Record<string, unknown>): Promise<{ origin: string; events: ServedEvent[]; count: number }> {
  const origin = typeof params.origin === 'string' ? params.origin.trim() : '';
  if (origin === '') throw invalidArgument('origin', 'non_empty_string', 'origin must be a non-empty string');
  const after = integerParam('after', params.after, 0);
  if (after < 0) throw invalidArgument('after', 'non_negative_integer', 'after_seq must be a non-negative integer');
  const limit = integerParam('limit', params.limit, OPS_PAGE_MAX);
  if (limit < 1) throw invalidArgument('limit', 'positive_integer', 'limit must be a positive integer');
  const held: ReplicatedEvent[] = await logstream.opsAfter(origin, after, Math.min(limit, OPS_PAGE_MAX));
  const own = origin === (await logstream.replicaId());
  const key = own ? await logstream.signingKey() : '';
  let prev = own && held.length > 0 ? await logstream.originTop(origin, held[0]!.origin_seq - 1) : 0;
  const events: ServedEvent[] = [];
  let bytes = 0;
  for (const { sig, prev_origin_seq, ...e } of held) {
    bytes += eventBytes(e);
    if (events.length > 0 && bytes > OPS_PAGE_MAX_BYTES) break;
    if (own) {
      events.push({ ...e, sig: signEvent(key, signedFields(e), prev), prev_origin_seq: prev });
      prev = e.origin_seq;
    } else {
      events.push({ ...e, sig, prev_origin_seq });
    }
  }
  return { origin, events, count: events.length };
}

/** `GET /sync/artifact`: the full artifact with its content and its origin's signature. */
export async function syncArtifact(logstream: LogstreamReplication, params: Record<string, unknown>): Promise<{ artifact: Record<string, unknown> }> {
  const id = typeof params.id === 'string' ? params.id.trim() : '';
  if (id === '') throw invalidArgument('id', 'non_empty_string', 'artifact_id must be a non-empty string');
  const a = await logstream.getArtifact(id);
  if (!a) throw new PalaceError('not_found', `artifact ${pyRepr(id)} not found`, { field: 'id', rule: 'known_artifact', details: { id } });
  const fields = { id: a.id, kind: a.kind, sha256: a.sha256, size_bytes: a.size_bytes, created_by: a.created_by, created_at: a.created_at,
    origin_replica: a.origin_replica, metadata_json: remoteMetadataJson(a.metadata) };
  const sig = a.origin_replica === (await logstream.replicaId()) ? signArtifact(await logstream.signingKey(), fields) : await logstream.artifactSignature(a.id);
  return {
    artifact: { id: a.id, kind: a.kind, sha256: a.sha256, size_bytes: a.size_bytes, content: a.content, created_by: a.created_by, created_at: a.created_at,
      origin_replica: a.origin_replica, metadata: a.metadata, sig },
  };
}

// --- one round against one peer (docs/logstream.md §8.3) ------------------------------------------------------

/** A record of a peer this replica would not store, and why (reported in `mesh_peers`). */
export interface Refusal {
  origin: string;
  rule: string;
  message: string;
}

export interface PullReport {
  peer_url: string;
  peer_replica: string;
  pulled_events: number;
  pulled_artifacts: number;
  per_origin: Record<string, number>;
  remote_version_vector: Record<string, number>;
  remote_profile: Record<string, unknown> | null;
  remote_profiles: Record<string, unknown>;
  /** Origins this round stopped pulling from, and why; the chain resumes there next round. */
  refusals: Refusal[];
  /** Origins left for the next round because a per-round cap was reached. */
  capped_origins: string[];
}

async function fetchJson(transport: SyncTransport, peer: SyncPeer, path: SyncPath, params: Record<string, string>): Promise<Record<string, unknown>> {
  const { status, body } = await transport.request(peer, path, params);
  if (status !== 200) {
    const detail = typeof body === 'object' && body !== null && typeof (body as { error?: unknown }).error === 'string'
      ? `: ${(body as { error: string }).error}`
      : '';
    throw new PalaceError('store_unavailable', `${peerLabel(peer.url)}${path}: HTTP ${status}${detail}`, { retryable: true, details: { status } });
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new PalaceError('store_unavailable', `${peerLabel(peer.url)}${path}: the answer is not a JSON object`, { retryable: true });
  return body as Record<string, unknown>;
}

function versionVectorOf(value: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (typeof value !== 'object' || value === null) return out;
  for (const [origin, top] of Object.entries(value)) if (typeof top === 'number' && Number.isSafeInteger(top) && top > 0) out[origin] = top;
  return out;
}

const asObject = (
  v: unknown,
): Record<string, unknown> | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

/** Thrown inside a round to stop one origin with a reported refusal. */
class Refused extends Error {
  constructor(readonly rule: string, message: string) {
    super(message);
  }
}

const refusedAs = (e: unknown): Refused => {
  if (e instanceof Refused) return e;
  if (isPalaceError(e) && e.code === 'invalid_argument') return new Refused(e.rule ?? 'invalid', `${e.field ?? 'record'}: ${e.message}`);
  throw e;
};

interface Budget {
  peerBytes: number;
}

/** One origin's pull within a round: the checks of every record, then the writes. */
class OriginPull {
  private bytes = 0;
  private events = 0;

  constructor(
    private readonly logstream: LogstreamReplication,
    private readonly transport: SyncTransport,
    private readonly peer: SyncPeer,
    private readonly origin: string,
    private readonly key: KeyObject,
    private readonly keys: (origin: string) => KeyObject | undefined,
    private readonly top: number,
    private readonly own: boolean,
    private readonly budget: Budget,
    private readonly report: PullReport,
  ) {}

  /** A served event through the validators, the origin, the advertised top, the chain and the signature. */
  private checked(raw: unknown, after: number): RemoteEvent {
    const event = remoteEvent(raw);
    if (event.origin_replica !== this.origin)
      throw new Refused('answer_origin', `asked for events of ${this.origin}, got ${event.id} of ${event.origin_replica}`);
    if (event.origin_seq <= after) throw new Refused('ascending', `event ${event.id} has origin_seq ${event.origin_seq}, not above ${after}`);
    if (event.origin_seq > this.top)
      throw new Refused('advertised_top', `event ${event.id} has origin_seq ${event.origin_seq}, past the ${this.top} the peer advertised`);
    if (event.sig === undefined || event.prev_origin_seq === undefined) throw new Refused('unsigned', `event ${event.id} carries no signature of its origin`);
    if (event.prev_origin_seq !== after)
      throw new Refused('chain_gap',
        `event ${event.id} follows origin_seq ${event.prev_origin_seq}, but this replica holds ${this.origin} contiguously up to ${after}`);
    if (!eventSignatureValid(this.key, event, event.prev_origin_seq, event.sig))
      throw new Refused('signature', `event ${event.id} is not signed by ${this.origin}'s key`);
    return event;
  }

  private async artifact(id: string): Promise<RemoteArtifact> {
    const { status, body } = await this.transport.request(this.peer, '/sync/artifact', { id });
    if (status === 404) throw new Refused('peer_artifact_missing', `peer served an event citing artifact ${pyRepr(id)} but not the artifact`);
    if (status !== 200) throw new PalaceError('store_unavailable', `${peerLabel(this.peer.url)}/sync/artifact: HTTP ${status}`, { retryable: true });
    const artifact = remoteArtifact(asObject(body)?.artifact);
    if (artifact.id !== id) throw new Refused('answer_artifact', `asked for artifact ${id}, got ${artifact.id}`);
    const key = artifact.origin_replica ? this.keys(artifact.origin_replica) : undefined;
    if (!key)
      throw new Refused('unknown_origin_key', `artifact ${id} claims origin ${artifact.origin_replica ?? 'none'}, whose key this replica does not know`);
    if (!artifact.sig || !artifactSignatureValid(key, artifact, artifact.sig))
      throw new Refused('signature', `artifact ${id} is not signed by its origin ${artifact.origin_replica}`);
    return artifact;
  }

  /** Whether `bytes` more fit this round's caps; the first event of an origin always fits. */
  private fits(bytes: number): boolean {
    if (this.events === 0) return true;
    return this.events < ORIGIN_ROUND_MAX_EVENTS && this.bytes + bytes <= ORIGIN_ROUND_MAX_BYTES && bytes <= this.budget.peerBytes;
  }

  private async store(event: RemoteEvent): Promise<void> {
    const artifacts: RemoteArtifact[] = [];
    for (const id of event.artifact_ids) if (!(await this.logstream.hasArtifact(id))) artifacts.push(await this.artifact(id));
    for (const a of artifacts) if (await this.logstream.applyRemoteArtifact(a)) this.report.pulled_artifacts++;
    const outcome = await this.logstream.applyRemoteEvent(event, { reclaimOwn: this.own });
    if (outcome === 'gap') throw new Refused('chain_gap', `event ${event.id} does not follow what this replica holds of ${this.origin}`);
    if (outcome === 'applied') {
      this.report.pulled_events++;
      this.report.per_origin[this.origin] = (this.report.per_origin[this.origin] ?? 0) + 1;
    }
  }

  /**
   * Pull from `after` up to the advertised top. For our own origin (docs/logstream.md §10.7) each page is proven
   * whole first — every event signed by our own key and chained — and own appends are moved
   * above the highest proven number before anything is stored, so no number a peer proves it
   * holds is minted twice, and nothing merely claimed moves our sequence.
   */
  async run(after: number): Promise<void> {
    while (after < this.top) {
      const page = await fetchJson(this.transport, this.peer, '/sync/ops', { origin: this.origin, after: String(after), limit: String(OPS_PAGE_MAX) });
      if (page.origin !== this.origin) throw new Refused('answer_origin', `asked for events of ${this.origin}, the answer is for ${pyRepr(page.origin)}`);
      const raw = Array.isArray(page.events) ? page.events : [];
      if (raw.length === 0) {
        if (this.own) throw new Refused('own_claim_unproven', `the peer claims this replica's own events up to ${this.top} but serves none after ${after}`);
        return;
      }
      // The checked prefix of the page is stored; the first record that fails stops the origin.
      const events: RemoteEvent[] = [];
      let cursor = after;
      let refusal: unknown = null;
      for (const r of raw) {
        try {
          const event = this.checked(r, cursor);
          events.push(event);
          cursor = event.origin_seq;
        } catch (e) {
          refusal = e;
          break;
        }
      }
      if (this.own && events.length > 0) await this.logstream.reserveOwnSeqAbove(cursor);
      for (const event of events) {
        const bytes = Buffer.byteLength(event.body, 'utf8') + Buffer.byteLength(event.metadata_json, 'utf8');
        if (!this.fits(bytes)) {
          this.report.capped_origins.push(this.origin);
          return;
        }
        await this.store(event);
        this.bytes += bytes;
        this.events++;
        this.budget.peerBytes -= bytes;
        after = event.origin_seq;
      }
      if (refusal) throw refusal;
    }
  }
}

export interface PullOptions {
  /** Keys of the origins this replica accepts; its own key is always known. */
  trust: OriginKeys;
  log?: Logger | undefined;
}

/**
 * Pull everything `peer` holds that this replica lacks: for every origin the peer advertises
 * (our own only when the peer claims more of it than we hold — docs/logstream.md §10.7), the ops after the local
 * watermark, artifacts before the events that cite them. Transport failures throw (the peer is
 * unreachable); records that fail a check are refused per origin and reported.
 */
export async function pullFromPeer(logstream: LogstreamReplication, transport: SyncTransport, peer: SyncPeer, options: PullOptions): Promise<PullReport> {
  const label = peerLabel(peer.url);
  const remote = await fetchJson(transport, peer, '/sync/version_vector', {});
  const remoteVector = versionVectorOf(remote.version_vector);
  const self = await logstream.replicaId();
  const ownKey = createPublicKey(privateKey(await logstream.signingKey()));
  const keys = (origin: string) => (origin === self ? ownKey : options.trust.get(origin));
  const local = await logstream.versionVector();
  const report: PullReport = {
    peer_url: label,
    peer_replica: typeof remote.replica_id === 'string' ? remote.replica_id : '',
    pulled_events: 0,
    pulled_artifacts: 0,
    per_origin: {},
    remote_version_vector: remoteVector,
    remote_profile: asObject(remote.profile),
    remote_profiles: asObject(remote.profiles) ?? {},
    refusals: [],
    capped_origins: [],
  };
  const budget: Budget = { peerBytes: PEER_ROUND_MAX_BYTES };
  for (const origin of Object.keys(remoteVector).sort()) {
    const top = remoteVector[origin]!;
    const own = origin === self;
    // Own events come back in ascending order, so what is held up to the peer's number is a prefix.
    const after = own ? await logstream.originTop(self, top) : (local[origin] ?? 0);
    if (after >= top) continue;
    const key = keys(origin);
    try {
      if (!key)
        throw new Refused('unknown_origin_key', `no public key is configured for origin ${origin}; its events are not stored (add it to the peers file)`);
      if (own)
        options.log?.warn(
          `mempalace sync: WARNING ${label} claims events of this replica (${self}) up to origin_seq ${top}, but this store holds them only up to ${after} (restored from an older copy?); pulling back the ones it proves with this replica's signature`,
        );
      if (budget.peerBytes <= 0) {
        report.capped_origins.push(origin);
        continue;
      }
      await new OriginPull(logstream, transport, peer, origin, key, keys, top, own, budget, report).run(after);
    } catch (e) {
      const refused = refusedAs(e);
      report.refusals.push({ origin, rule: refused.rule, message: refused.message });
      options.log?.warn(`mempalace sync: ${label}: refused ${origin}: ${refused.message}`);
    }
  }
  return report;
}
