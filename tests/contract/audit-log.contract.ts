/**
 * The AuditLog contract, written once and run against every adapter: records chained by hash in
 * seq order, one chain kept by writers on separate connections appending at once, retention that
 * moves the anchor the chain is verified from, and import of records verbatim.
 */
import { describe, expect, it } from 'vitest';
import { GENESIS_HASH, chainHash } from '../../core/audit-chain.js';
import type { AuditDraft, AuditLog, AuditRecord } from '../../stores/ports/audit-log.js';
import { openForEachTest } from '../helpers/each-test.js';

export interface OpenedAuditLog {
  log: AuditLog;
  /** Another connection to the same palace's log (closed by cleanup). */
  another(): Promise<AuditLog>;
  cleanup(): Promise<void>;
}

function draft(n: number, overrides: Partial<AuditDraft> = {}): AuditDraft {
  return {
    at: new Date(Date.UTC(2026, 2, 1, 10, 0, n)).toISOString(),
    identity: 'alice',
    transport: 'rest',
    request_id: `req-${n}`,
    action: 'mempalace_update_drawer',
    op: 'drawers.upsert',
    wings: ['team'],
    ids: [`drawer:d${n}`],
    before: { drawers: [{ id: `d${n}`, content: 'before ünï', meta: { wing: 'team', room: 'r', chunk_index: 0 } as never }] },
    ...overrides,
  };
}

/** Each record's prev_hash is its predecessor's hash and its hash recomputes. */
function expectChained(records: AuditRecord[], from: { seq: number; hash: string }): void {
  let prev = from;
  for (const r of records) {
    expect(r.seq).toBe(prev.seq + 1);
    expect(r.prev_hash).toBe(prev.hash);
    const { hash, ...body } = r;
    expect(chainHash(r.prev_hash, body)).toBe(hash);
    prev = r;
  }
}

async function all(log: AuditLog): Promise<AuditRecord[]> {
  const out: AuditRecord[] = [];
  for (let after = 0;;) {
    const page = await log.scan(after, 7);
    out.push(...page);
    if (page.length < 7) return out;
    after = page[page.length - 1]!.seq;
  }
}

export function describeAuditLogContract(adapterName: string, open: () => Promise<OpenedAuditLog>): void {
  describe(`AuditLog contract — ${adapterName}`, () => {
    let log: AuditLog;
    const opened = openForEachTest(open, (opened) => (log = opened.log));

    it('appends records chained by hash from the genesis hash, and scans them in seq order', async () => {
      expect(await log.head()).toEqual({ seq: 0, hash: GENESIS_HASH });
      expect(await log.anchor()).toEqual({ seq: 0, hash: GENESIS_HASH });
      const a = await log.append(draft(1));
      const b = await log.append(draft(2, { subject: 'tok_1', session: 's1', detail: { source: '/x' }, before: undefined }));
      expect(a).toMatchObject({ seq: 1, prev_hash: GENESIS_HASH, identity: 'alice', ids: ['drawer:d1'] });
      expect(b.prev_hash).toBe(a.hash);
      expect(await log.head()).toEqual({ seq: 2, hash: b.hash });
      const stored = await all(log);
      expect(stored).toEqual([a, b]);
      expectChained(stored, { seq: 0, hash: GENESIS_HASH });
      expect(await log.scan(1, 10)).toEqual([b]);
    });

    it('keeps one chain when three writers on separate connections append at once', async () => {
      const writers = [log, await opened().another(), await opened().another()];
      await Promise.all(writers.map(async (w, k) => {
        for (let i = 0; i < 15; i++) await w.append(draft(k * 100 + i, { identity: `agent${k}` }));
      }));
      const stored = await all(log);
      expect(stored).toHaveLength(45);
      expectChained(stored, { seq: 0, hash: GENESIS_HASH });
      for (let k = 0; k < 3; k++) expect(stored.filter((r) => r.identity === `agent${k}`)).toHaveLength(15);
    });

    it('prunes the records older than an instant and keeps the rest verifiable from the new anchor', async () => {
      const records: AuditRecord[] = [];
      for (let i = 1; i <= 5; i++) records.push(await log.append(draft(i)));
      expect(await log.prune(draft(4).at)).toBe(3);
      expect(await log.anchor()).toEqual({ seq: 3, hash: records[2]!.hash });
      const kept = await all(log);
      expect(kept.map((r) => r.seq)).toEqual([4, 5]);
      expectChained(kept, await log.anchor());
      expect(await log.prune(draft(4).at)).toBe(0);
      const next = await log.append(draft(6));
      expect(next).toMatchObject({ seq: 6, prev_hash: records[4]!.hash });
      expect(await log.prune('2999-01-01T00:00:00.000Z')).toBe(3);
      expect(await log.head()).toEqual({ seq: 6, hash: next.hash });
      expect((await log.append(draft(7))).seq).toBe(7);
    });

    it('restores records verbatim after its head, with the anchor when empty', async () => {
      const source: AuditRecord[] = [];
      for (let i = 1; i <= 4; i++) source.push(await log.append(draft(i)));
      await log.prune(draft(2).at);
      const exported = { anchor: await log.anchor(), records: await all(log) };
      const target = await opened().another();
      expect(exported.records.map((r) => r.seq)).toEqual([2, 3, 4]);
      // The same palace: everything is already held.
      expect(await target.restore(exported.records, exported.anchor)).toBe(0);
      expect(await all(target)).toEqual(exported.records);
    });
  });
}
