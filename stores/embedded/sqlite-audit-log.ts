/**
 * The embedded profile's audit log: `<palace>/audit.sqlite3`, one row per record (its canonical
 * JSON) keyed by seq, the retention anchor and the head (the last record's seq and hash, so a
 * removed last record is noticed too). An append reads the head and inserts after it in one
 * IMMEDIATE transaction, so concurrent processes on the same palace extend one chain.
 */
import type Database from 'better-sqlite3';
import { GENESIS_HASH, canonicalJson, chainHash } from '../../core/audit-chain.js';
import type { AuditAnchor, AuditDraft, AuditLog, AuditRecord } from '../ports/audit-log.js';
import { openStoreSqlite } from './sqlite-open.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS audit_records (seq INTEGER PRIMARY KEY, at TEXT NOT NULL, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS audit_anchor (one INTEGER PRIMARY KEY CHECK (one = 1), seq INTEGER NOT NULL, hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS audit_head (one INTEGER PRIMARY KEY CHECK (one = 1), seq INTEGER NOT NULL, hash TEXT NOT NULL);
`;

export class SqliteAuditLog implements AuditLog {
  private readonly db: Database.Database;

  constructor(file: string) {
    // FULL: an acknowledged write's record must survive a power cut as the write does.
    this.db = openStoreSqlite(file, { busyTimeoutMs: 10_000, synchronous: 'FULL', setup: (db) => db.exec(SCHEMA) });
  }

  private anchorNow(): AuditAnchor {
    const row = this.db.prepare('SELECT seq, hash FROM audit_anchor WHERE one = 1').get() as AuditAnchor | undefined;
    return row ?? { seq: 0, hash: GENESIS_HASH };
  }

  private headNow(): AuditAnchor {
    const row = this.db.prepare('SELECT seq, hash FROM audit_head WHERE one = 1').get() as AuditAnchor | undefined;
    return row ?? this.anchorNow();
  }

  private insert(record: AuditRecord): void {
    this.db.prepare('INSERT INTO audit_records (seq, at, record) VALUES (?, ?, ?)').run(record.seq, record.at, canonicalJson(record));
    this.db.prepare('INSERT INTO audit_head (one, seq, hash) VALUES (1, ?, ?) ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, hash = excluded.hash')
      .run(record.seq, record.hash);
  }

  async append(draft: AuditDraft): Promise<AuditRecord> {
    return this.db.transaction(() => {
      const head = this.headNow();
      const body = { ...draft, seq: head.seq + 1, prev_hash: head.hash };
      const record: AuditRecord = { ...body, hash: chainHash(head.hash, body) };
      this.insert(record);
      return record;
    }).immediate();
  }

  async scan(afterSeq: number, limit: number): Promise<AuditRecord[]> {
    const rows = this.db.prepare('SELECT record FROM audit_records WHERE seq > ? ORDER BY seq LIMIT ?').all(afterSeq, limit) as { record: string }[];
    return rows.map((r) => JSON.parse(r.record) as AuditRecord);
  }

  async head(): Promise<AuditAnchor> {
    return this.headNow();
  }

  async anchor(): Promise<AuditAnchor> {
    return this.anchorNow();
  }

  async prune(before: string): Promise<number> {
    return this.db.transaction(() => {
      // The prefix of the chain older than `before`: the first younger record ends it.
      const stop = this.db.prepare('SELECT min(seq) AS seq FROM audit_records WHERE at >= ?').get(before) as { seq: number | null };
      const last = this.db.prepare('SELECT record FROM audit_records WHERE seq < coalesce(?, 9223372036854775807) ORDER BY seq DESC LIMIT 1')
        .get(stop.seq) as { record: string } | undefined;
      if (!last) return 0;
      const anchor = JSON.parse(last.record) as AuditRecord;
      this.db.prepare('INSERT INTO audit_anchor (one, seq, hash) VALUES (1, ?, ?) ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, hash = excluded.hash')
        .run(anchor.seq, anchor.hash);
      return this.db.prepare('DELETE FROM audit_records WHERE seq <= ?').run(anchor.seq).changes;
    }).immediate();
  }

  async restore(records: AuditRecord[], anchor: AuditAnchor): Promise<number> {
    return this.db.transaction(() => {
      const empty = this.db.prepare('SELECT 1 FROM audit_records LIMIT 1').get() === undefined;
      if (empty && this.anchorNow().seq === 0 && anchor.seq > 0) {
        this.db.prepare('INSERT INTO audit_anchor (one, seq, hash) VALUES (1, ?, ?) ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, hash = excluded.hash')
          .run(anchor.seq, anchor.hash);
      }
      let headSeq = this.headNow().seq;
      let written = 0;
      for (const r of [...records].sort((a, b) => a.seq - b.seq)) {
        if (r.seq <= headSeq) continue;
        this.insert(r);
        headSeq = r.seq;
        written++;
      }
      return written;
    }).immediate();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
