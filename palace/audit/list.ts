/**
 * `mempalace audit list` and `GET /v1/audit`: records filtered by identity, wing, tool (the
 * action), session and time, newest first. The filter runs over a scan of the trail, which is
 * kept for a bounded time (retention.ts).
 */
import { invalidArgument } from '../../core/errors.js';
import type { AuditLog, AuditRecord } from '../../stores/ports/audit-log.js';

export interface AuditQuery {
  identity?: string | undefined;
  wing?: string | undefined;
  /** The tool or route, exactly as recorded (`mempalace_add_drawer`, `cli mine`, `POST /v1/jobs/mine`). */
  tool?: string | undefined;
  session?: string | undefined;
  /** Inclusive lower and exclusive upper bound on `at` (ISO 8601 instants). */
  since?: string | undefined;
  until?: string | undefined;
  limit: number;
}

/** An ISO 8601 instant as the trail stores it (UTC, milliseconds), or an invalid_argument naming `field`. */
export function auditInstant(field: string, value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw invalidArgument(field, 'iso_date_or_utc_instant', `${field} must be an ISO 8601 date or instant, got '${value}'`);
  return new Date(ms).toISOString();
}

export function matchesAudit(r: AuditRecord, q: Omit<AuditQuery, 'limit'>): boolean {
  return (q.identity === undefined || r.identity === q.identity)
    && (q.wing === undefined || r.wings.includes(q.wing))
    && (q.tool === undefined || r.action === q.tool)
    && (q.session === undefined || r.session === q.session)
    && (q.since === undefined || r.at >= q.since)
    && (q.until === undefined || r.at < q.until);
}

/** Every record in seq order (export, revert planning). */
export async function* auditRecords(audit: AuditLog, afterSeq?: number): AsyncGenerator<AuditRecord> {
  for (let after = afterSeq ?? (await audit.anchor()).seq;;) {
    const page = await audit.scan(after, 1000);
    yield* page;
    if (page.length < 1000) return;
    after = page[page.length - 1]!.seq;
  }
}

export async function listAudit(audit: AuditLog, q: AuditQuery): Promise<AuditRecord[]> {
  const matching: AuditRecord[] = [];
  for await (const r of auditRecords(audit)) {
    if (!matchesAudit(r, q)) continue;
    matching.push(r);
    // Newest first: keep only the last `limit` seen.
    if (matching.length > q.limit) matching.shift();
  }
  return matching.reverse();
}
