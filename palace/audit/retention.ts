/**
 * Retention of the audit trail (`MEMPALACE_AUDIT_RETENTION_DAYS`): records older than that are
 * pruned from the start of the chain, at most once an hour per process; the log keeps the last
 * pruned record's hash as the anchor `audit verify` starts from.
 */
import type { AuditLog } from '../../stores/ports/audit-log.js';

const PRUNE_EVERY_MS = 3_600_000;
const lastPruned = new WeakMap<AuditLog, number>();

/** The instant before which records are expired, or undefined when they are kept forever. */
export function retentionCutoff(retentionDays: number, now: Date): string | undefined {
  return retentionDays > 0 ? new Date(now.getTime() - retentionDays * 86_400_000).toISOString() : undefined;
}

/** Prune expired records if this process has not done so within the hour; returns how many went. */
export async function pruneWhenDue(audit: AuditLog, retentionDays: number, now = new Date()): Promise<number> {
  const cutoff = retentionCutoff(retentionDays, now);
  if (cutoff === undefined) return 0;
  const last = lastPruned.get(audit);
  if (last !== undefined && now.getTime() - last < PRUNE_EVERY_MS) return 0;
  lastPruned.set(audit, now.getTime());
  return audit.prune(cutoff);
}
