/**
 * Reading streams of the log's id space in `seq` order: a cursor over one stream, and a k-way
 * merge of several (the index streams of one query field, e.g. an agent's and the broadcasts').
 */
import type { RedisConnections } from '../connection.js';
import type { StreamEntry } from './codec.js';

/** Ranges one stream in order within an exclusive `seq` window, a chunk at a time. */
export class RangeCursor {
  private buffer: StreamEntry[] = [];
  private exhausted = false;

  constructor(
    private readonly connections: RedisConnections,
    private readonly key: string,
    private readonly order: 'asc' | 'desc',
    private low: string,
    private high: string,
    private readonly chunk: number,
  ) {}

  async peek(): Promise<StreamEntry | undefined> {
    if (this.buffer.length === 0 && !this.exhausted) await this.fill();
    return this.buffer[0];
  }

  shift(): StreamEntry | undefined {
    return this.buffer.shift();
  }

  /** The next chunk (for the log itself, read whole chunks at once). */
  async take(): Promise<StreamEntry[]> {
    if (this.buffer.length === 0 && !this.exhausted) await this.fill();
    const out = this.buffer;
    this.buffer = [];
    return out;
  }

  private async fill(): Promise<void> {
    const conn = this.connections.command();
    const entries = (this.order === 'asc'
      ? await conn.xrange(this.key, this.low, this.high, 'COUNT', this.chunk)
      : await conn.xrevrange(this.key, this.high, this.low, 'COUNT', this.chunk)) as StreamEntry[];
    if (entries.length < this.chunk) this.exhausted = true;
    const last = entries.at(-1);
    if (last) {
      if (this.order === 'asc') this.low = `(${last[0]}`;
      else this.high = `(${last[0]}`;
    }
    this.buffer = entries;
  }
}

const seqOfEntry = (entry: StreamEntry) => Number.parseInt(entry[0], 10);

/** Merges range cursors of one order into one sequence of `seq`s in that order. */
export class MergeCursor {
  constructor(
    private readonly cursors: RangeCursor[],
    private readonly order: 'asc' | 'desc',
  ) {}

  /** Up to `max` next `seq`s across every cursor; `[]` once all are exhausted. */
  async next(max: number): Promise<number[]> {
    const before = (a: number, b: number) => (this.order === 'asc' ? a < b : a > b);
    const seqs: number[] = [];
    while (seqs.length < max) {
      let pick: RangeCursor | undefined;
      let pickSeq = 0;
      for (const c of this.cursors) {
        const head = await c.peek();
        if (head && (!pick || before(seqOfEntry(head), pickSeq))) {
          pick = c;
          pickSeq = seqOfEntry(head);
        }
      }
      if (!pick) break;
      pick.shift();
      seqs.push(pickSeq);
    }
    return seqs;
  }
}
