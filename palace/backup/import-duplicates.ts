/**
 * Ids repeated within one import stream (issue 24, I4). An export never writes a record twice,
 * except that a Redis SCAN may return an artifact twice: so a repeat with the same content is a
 * no-op (skipped), and a repeat with different content is an error — with last-wins, which of two
 * versions survived depended on batch boundaries. Events are also unique by (origin, origin_seq).
 * Memory: one short digest per record read (about 100 bytes each).
 */
import { createHash } from 'node:crypto';
import { PalaceError } from '../../core/errors.js';
import type { PalaceRecord } from './backup-records.js';
import { recordId, recordPlace } from './import-record-rules.js';

interface Seen {
  digest: string;
  index: number;
}

export class StreamDuplicates {
  private readonly seen = new Map<string, Seen>();

  /** True when the record repeats an earlier one exactly (skip it); throws when it conflicts. */
  repeats(record: PalaceRecord, index: number): boolean {
    const digest = createHash('sha256').update(JSON.stringify(record)).digest('base64').slice(0, 22);
    const keys = [`${record.kind}\u0000${recordId(record)}`];
    if (record.kind === 'event') keys.push(`origin\u0000${record.event.origin_replica}\u0000${record.event.origin_seq}`);
    let exact = false;
    for (const key of keys) {
      const before = this.seen.get(key);
      if (!before) continue;
      if (before.digest !== digest) {
        throw new PalaceError('invalid_argument',
          `${recordPlace(index)}: ${record.kind} ${JSON.stringify(recordId(record))} repeats ${
            key.startsWith('origin') ? 'the (origin_replica, origin_seq)' : 'the id'
          } of ${recordPlace(before.index)} with different content; refusing to pick one`, {
          field: key.startsWith('origin') ? 'origin_seq' : 'id',
          rule: 'unique_in_export',
          details: { line: index + 1, record_kind: record.kind, record_id: recordId(record), first_line: before.index + 1 },
        });
      }
      exact = true;
    }
    if (!exact) { for (const key of keys) this.seen.set(key, { digest, index }); }
    return exact;
  }
}
