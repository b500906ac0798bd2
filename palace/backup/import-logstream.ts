/**
 * Restoring events and artifacts from an export (issue 24, I1 and I2).
 *
 * - Own-origin events (a palace restored from its own backup) keep their `origin_seq`; before a
 *   batch holding any is written, the own sequence counter is moved above the highest of them
 *   (`reserveOwnSeqAbove`), so a later local append never mints a number already held — with a
 *   gap in the backup (4 after 2) the next append would otherwise collide with 4.
 * - Every record is stored or is an exact duplicate of what is held; anything else is an error,
 *   never a silent skip. An event whose (origin, origin_seq) is held by a different event (the
 *   store lost its file and minted those numbers again before the restore) is a `conflict`.
 */
import { PalaceError } from '../../core/errors.js';
import type { LogstreamReplication } from '../../stores/ports/logstream/replication.js';
import type { RemoteArtifact, RemoteEvent, StoredArtifact, StoredEvent } from '../../stores/ports/logstream/records.js';
import { remoteMetadataJson } from '../logstream/validate.js';

/** The fields that make two events the same event. */
function eventFingerprint(e: Omit<StoredEvent, 'seq' | 'metadata'> & { metadata_json: string }): string {
  return JSON.stringify([e.id, e.origin_replica, e.origin_seq, e.hlc, e.type, e.stream, e.room, e.topic, e.from_agent, e.to_agent, e.correlation_id, e.branch,
    e.base_commit, e.status, e.body, e.created_at, e.metadata_json, [...e.artifact_ids].sort()]);
}

function heldFingerprint(e: StoredEvent): string {
  const { seq: _seq, metadata, ...rest } = e;
  return eventFingerprint({ ...rest, metadata_json: remoteMetadataJson(metadata) });
}

function conflict(message: string, where: string, details: Record<string, unknown>): PalaceError {
  return new PalaceError('conflict', `${where}: ${message}`, { field: 'event', rule: 'matches_held', details });
}

/** Applies events in order; returns how many were newly stored. `where(i)` names the i-th for errors. */
export async function restoreEvents(logstream: LogstreamReplication, events: RemoteEvent[], where: (i: number) => string): Promise<number> {
  const self = await logstream.replicaId();
  const ownTop = Math.max(0, ...events.filter((e) => e.origin_replica === self).map((e) => e.origin_seq));
  if (ownTop > 0) await logstream.reserveOwnSeqAbove(ownTop);
  let stored = 0;
  for (const [i, event] of events.entries()) {
    const outcome = await logstream.applyRemoteEvent(event, { reclaimOwn: true });
    if (outcome === 'applied') {
      stored++;
      continue;
    }
    const details = { id: event.id, origin_replica: event.origin_replica, origin_seq: event.origin_seq };
    const held = await logstream.getEvent(event.id);
    if (held) {
      if (heldFingerprint(held) === eventFingerprint(event)) continue;
      throw conflict(`event ${event.id} is held with different content`, where(i), details);
    }
    const [other] = await logstream.opsAfter(event.origin_replica, event.origin_seq - 1, 1);
    if (other && other.origin_seq === event.origin_seq) {
      throw conflict(
        `event ${event.id} (origin ${event.origin_replica}, origin_seq ${event.origin_seq}) cannot be restored: the palace holds a different event, ${other.id}, under the same origin_seq (minted after the logstream was lost?); nothing after it was imported`,
        where(i),
        { ...details, held_id: other.id },
      );
    }
    throw conflict(`event ${event.id} was not stored (${outcome})`, where(i), details);
  }
  return stored;
}

function sameArtifact(held: StoredArtifact, a: RemoteArtifact): boolean {
  return held.sha256 === a.sha256 && held.kind === a.kind && held.created_by === a.created_by && held.created_at === a.created_at;
}

/** Applies artifacts; returns how many were newly stored. */
export async function restoreArtifacts(logstream: LogstreamReplication, artifacts: RemoteArtifact[], where: (i: number) => string): Promise<number> {
  let stored = 0;
  for (const [i, artifact] of artifacts.entries()) {
    if (await logstream.applyRemoteArtifact(artifact)) {
      stored++;
      continue;
    }
    const held = await logstream.getArtifact(artifact.id);
    if (!held || !sameArtifact(held, artifact)) {
      throw new PalaceError('conflict',
        `${where(i)}: artifact ${artifact.id} is held with different content (sha256 ${held?.sha256.slice(0, 16) ?? 'none'}…, the export's ${
          artifact.sha256.slice(0, 16)
        }…)`, { field: 'artifact', rule: 'matches_held', details: { id: artifact.id } });
    }
  }
  return stored;
}
