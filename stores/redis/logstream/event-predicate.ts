/**
 * The event query predicate in code, for the Redis adapter, whose index streams only narrow the
 * candidates (the embedded adapter states the same predicate as SQL in sqlite-logstream.ts).
 */
import type { EventQuery, StoredEvent } from '../../ports/logstream/records.js';

/** The complete predicate of an event query (docs/logstream.md §5.3), applied to every candidate and by the tailer. */
export function eventMatches(e: StoredEvent, q: Omit<EventQuery, 'order' | 'limit'>): boolean {
  for (const field of ['stream', 'room', 'topic', 'type', 'from_agent', 'correlation_id', 'status'] as const) {
    const want = q[field];
    if (want !== undefined && e[field] !== want) return false;
  }
  if (q.to_agent !== undefined && e.to_agent !== q.to_agent && e.to_agent !== '*') return false;
  if (q.afterSeq !== undefined && e.seq <= q.afterSeq) return false;
  if (q.beforeSeq !== undefined && e.seq >= q.beforeSeq) return false;
  if (q.sinceCreatedAt !== undefined && e.created_at < q.sinceCreatedAt) return false;
  return true;
}
