/**
 * Logstream events as tests write them: a draft to append (a note unless told otherwise), and a
 * replicated event as a hostile peer forges it (any fields, signed with the forger's own key).
 */
import { signEvent } from '../../palace/logstream/signature.js';
import type { EventDraft } from '../../stores/ports/logstream/records.js';

/** A draft with no topic, addressee, correlation, branch, status or artifacts; `over` sets the rest. */
export function eventDraft(over: Partial<EventDraft> & Pick<EventDraft, 'body'>): EventDraft {
  return {
    type: 'note',
    stream: 's',
    room: 'general',
    topic: null,
    from_agent: 'a',
    to_agent: null,
    correlation_id: null,
    branch: null,
    base_commit: null,
    status: null,
    metadata_json: '{}',
    artifact_ids: [],
    ...over,
  };
}

/** A replicated event as served on the wire. */
export type WireEvent = Record<string, unknown> & { id: string; origin_seq: number };

/**
 * A task assignment from alice to bob as event `originSeq` of `origin`, signed with
 * `signingKey` after `prev`; `patch` replaces any field (id, stream, body, …).
 */
export function forgedEvent(signingKey: string, origin: string, originSeq: number, prev: number, patch: Record<string, unknown> = {}): WireEvent {
  const fields = {
    id: `evt_20260101T000000_${originSeq.toString(16).padStart(12, '0').slice(-12)}`,
    origin_replica: origin,
    origin_seq: originSeq,
    hlc: `${String(Date.now()).padStart(13, '0')}-000000-${origin}`,
    ...eventDraft({ type: 'task.assign', stream: 'project/atlas', room: 'tasks', from_agent: 'alice', to_agent: 'bob', body: 'rotate the prod credentials' }),
    created_at: '2026-01-01T00:00:00Z',
    ...patch,
  };
  const { metadata_json: _m, ...wire } = fields;
  return { ...wire, metadata: {}, prev_origin_seq: prev, sig: signEvent(signingKey, fields, prev) };
}

/** Where an event came from: its id, origin replica, sequence there and clock. */
export interface EventOrigin {
  id: string;
  origin_replica: string;
  origin_seq: number;
  hlc: string;
}

/** An event as an export file holds it: an `eventDraft` from `origin`, created 2026-01-01, metadata parsed. */
export function exportedEvent(origin: EventOrigin, over: Partial<EventDraft> & Pick<EventDraft, 'body'>): Record<string, unknown> {
  const { metadata_json: _m, ...fields } = eventDraft(over);
  return { ...origin, ...fields, created_at: '2026-01-01T00:00:00Z', metadata: {} };
}
