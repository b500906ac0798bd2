/**
 * `mempalace audit verify`: walks the trail from its anchor and checks every link. A removed
 * record shows as a gap in seq (or a prev_hash that names another record), an edited one as a
 * hash that no longer recomputes, a removed last record as a head the records do not reach.
 */
import { chainHash } from '../../core/audit-chain.js';
import type { AuditAnchor, AuditLog } from '../../stores/ports/audit-log.js';

export interface AuditProblem {
  seq: number;
  /** `missing`: records before this one are gone; `edited`: its hash does not recompute; `head`: records after the last one are gone. */
  kind: 'missing' | 'edited' | 'head';
  message: string;
}

export interface AuditVerification {
  ok: boolean;
  records: number;
  anchor: AuditAnchor;
  head: AuditAnchor;
  problems: AuditProblem[];
}

const PAGE = 1000;

export async function verifyAudit(audit: AuditLog): Promise<AuditVerification> {
  const anchor = await audit.anchor();
  const head = await audit.head();
  const problems: AuditProblem[] = [];
  let prev = anchor;
  let records = 0;
  for (let after = anchor.seq;;) {
    const page = await audit.scan(after, PAGE);
    for (const r of page) {
      records++;
      if (r.seq !== prev.seq + 1) {
        problems.push({ seq: r.seq, kind: 'missing', message: `records ${prev.seq + 1}..${r.seq - 1} are missing before record ${r.seq}` });
      } else if (r.prev_hash !== prev.hash) {
        problems.push({ seq: r.seq, kind: 'missing',
          message: `record ${r.seq} does not follow record ${prev.seq}: the record it was chained to is gone or changed` });
      }
      const { hash, ...body } = r;
      if (chainHash(r.prev_hash, body) !== hash) problems.push({ seq: r.seq, kind: 'edited', message: `record ${r.seq} was changed after it was written` });
      prev = { seq: r.seq, hash };
    }
    if (page.length < PAGE) break;
    after = page[page.length - 1]!.seq;
  }
  if (prev.seq !== head.seq || prev.hash !== head.hash) {
    problems.push({ seq: head.seq, kind: 'head',
      message: `the trail ends at record ${prev.seq} but its head is record ${head.seq}: records after ${prev.seq} are gone` });
  }
  return { ok: problems.length === 0, records, anchor, head, problems };
}
