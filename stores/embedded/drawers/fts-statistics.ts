/**
 * The counts the lexical fetch plans with (fts-lexical.ts), kept until the palace changes: the
 * drawer count (a walk of an index: 30–75 ms at a million rows on the 2-core test machine) and
 * each token's document count (fts5vocab walks the token's whole doclist: up to ~30 ms for a
 * token in 40 % of a million rows). Like the OpenSearch leg's statistics (lexical-statistics.ts)
 * they are kept with a change mark: the palace's write generation, which every write transaction
 * of this connection moves (ann-drawer-sync.ts), and the connection's `data_version`, which
 * moves whenever another connection commits.
 */
import type Database from 'better-sqlite3';
import { currentGeneration } from './ann-drawer-sync.js';
import { FTS_VOCABULARY } from './schema.js';

/** Tokens whose counts are kept at most; past it the cache starts over (a token is one small map entry). */
const TOKENS_KEPT = 100_000;

export class FtsStatistics {
  private mark: string | undefined;
  private rowCount: number | undefined;
  private readonly documents = new Map<string, number>();

  constructor(private readonly db: Database.Database) {}

  /** Drawers in the palace. */
  rows(): number {
    this.follow();
    this.rowCount ??= this.db.prepare('SELECT count(*) FROM drawers').pluck().get() as number;
    return this.rowCount;
  }

  /** Rows holding `term` (already case-folded like the index). */
  documentFrequency(term: string): number {
    this.follow();
    let n = this.documents.get(term);
    if (n === undefined) {
      n = (this.db.prepare(`SELECT doc FROM temp.${FTS_VOCABULARY} WHERE term = ?`).pluck().get(term) as number | undefined) ?? 0;
      if (this.documents.size >= TOKENS_KEPT) this.documents.clear();
      this.documents.set(term, n);
    }
    return n;
  }

  /** Drops every count: for a rewrite of the index that moves no generation (repair). */
  forget(): void {
    this.mark = undefined;
    this.rowCount = undefined;
    this.documents.clear();
  }

  private follow(): void {
    const mark = `${currentGeneration(this.db)}:${String(this.db.pragma('data_version', { simple: true }))}`;
    if (mark === this.mark) return;
    this.forget();
    this.mark = mark;
  }
}
