/**
 * The audit log port (issue 28): an append-only, hash-chained trail of every write made for a
 * caller. Implemented by `embedded/` (SQLite) and `redis/` (a Redis Stream);
 * tests/contract/audit-log.contract.ts defines its meaning. Appends from any number of
 * processes keep one chain: each adapter assigns `seq` and `prev_hash` atomically.
 */
import type { Drawer } from '../../core/drawer.js';
import type { KgTriple, TunnelRestore } from './graph-store.js';

/** What an item looked like before the write, enough to undo it; an id the write touched but that is absent here did not exist. */
export interface AuditBefore {
  drawers?: Drawer[];
  triples?: KgTriple[];
  tunnels?: TunnelRestore[];
}

/** One write as the recorder drafts it; the log adds `seq`, `prev_hash` and `hash`. */
export interface AuditDraft {
  /** UTC instant of the write (ISO 8601, milliseconds). */
  at: string;
  /** The agent the write was made for (the token's identity, `local` for the local user). */
  identity: string;
  /** The OAuth subject or token the caller authenticated with, when it has one. */
  subject?: string | undefined;
  transport: string;
  request_id: string;
  /** The caller's session (palace/audit/session.ts says where it comes from). */
  session?: string | undefined;
  /** The tool or route called: `mempalace_update_drawer`, `POST /v1/revert`, `cli mine`. */
  action: string;
  /** The port operation: `drawers.upsert`, `graph.kgInvalidate`, `jobs.start`, … */
  op: string;
  wings: string[];
  /** Items touched, kind-prefixed: `drawer:<id>`, `fact:<id>`, `tunnel:<id>`, `job:<id>`, `event:<stream>`. */
  ids: string[];
  before?: AuditBefore | undefined;
  /** Operation arguments that are not state (a job's source, a fact's end date, a revert's selection). */
  detail?: Record<string, unknown> | undefined;
  /** Set on a revert's own writes: the seq of the record it undoes. */
  reverts?: number | undefined;
}

export interface AuditRecord extends AuditDraft {
  /** 1, 2, 3, … in append order; never reused, also after pruning. */
  seq: number;
  prev_hash: string;
  hash: string;
}

/** Where verification starts: the last record removed by retention (seq 0 and the genesis hash before any). */
export interface AuditAnchor {
  seq: number;
  hash: string;
}

export interface AuditLog {
  /** Append one record at the end of the chain, atomically with respect to every other writer. */
  append(draft: AuditDraft): Promise<AuditRecord>;
  /** Up to `limit` records with seq > `afterSeq`, in seq order. */
  scan(afterSeq: number, limit: number): Promise<AuditRecord[]>;
  /** The last record's seq and hash (the anchor when the log holds none). */
  head(): Promise<AuditAnchor>;
  anchor(): Promise<AuditAnchor>;
  /** Remove the records written before `before` (an instant) from the start of the chain, moving the anchor; returns how many went. */
  prune(before: string): Promise<number>;
  /**
   * Import: write records verbatim (their seq, hashes) after the last one held, and the anchor
   * when the log is empty; records at or below the held head are skipped. Returns how many were written.
   */
  restore(records: AuditRecord[], anchor: AuditAnchor): Promise<number>;
  close(): Promise<void>;
}
