/**
 * The registered sources port: the repositories and directories the palace follows
 * (`mempalace sources add`), each with its latest refresh. Implemented by `embedded/` (SQLite)
 * and `redis/`; tests/contract/registered-sources.contract.ts defines its meaning.
 */

/** How a registered source's latest refresh went (written by the refresh handler). */
export interface SourceRefresh {
  /** What asked for it: a git push webhook, or a person/agent (CLI, REST). */
  trigger: 'webhook' | 'manual';
  requested_at: string;
  /** The mine it ran; absent while it waits for a running job on the same source. */
  job_id?: string;
  state: 'waiting' | 'running' | 'completed' | 'failed' | 'cancelled';
  finished_at?: string;
  /** Commit mined (git sources). */
  commit?: string;
  drawers_written?: number;
  error?: string;
}

/** A source the palace follows: refreshed by webhooks or on request. */
export interface RegisteredSource {
  source_id: string;
  kind: 'git' | 'dir';
  /** The repository URL as given, or the absolute directory. */
  location: string;
  /** Normalised repository identity that push payloads are matched on (git sources). */
  match_key?: string;
  ref?: string;
  wing?: string;
  mode: string;
  added_by: string;
  added_at: string;
  /**
   * Who last replaced the record by registering the source again, and when (issue 28); absent
   * while it is as first registered (`updated_by` also when the replacement had no actor). A
   * refresh is not a change of the record: it has its own record (`last_refresh`, its trigger),
   * and the audit trail names who started a manual one.
   */
  updated_by?: string;
  updated_at?: string;
  last_refresh?: SourceRefresh;
}

export interface RegisteredSources {
  /**
   * Add a source, or replace the one registered under its id: a replaced source keeps who added it
   * and when (`added_by`, `added_at` of its first registration, also under concurrent ones) and its
   * `last_refresh` when the new record has none; every other field is the new record's, verbatim.
   */
  put(source: RegisteredSource): Promise<void>;
  get(sourceId: string): Promise<RegisteredSource | undefined>;
  /** Every registered source, ordered by source id. */
  list(): Promise<RegisteredSource[]>;
  /** False when no such source was registered. */
  remove(sourceId: string): Promise<boolean>;
  /** Record a source's latest refresh; false (nothing written) when the source is not registered. */
  setRefresh(sourceId: string, refresh: SourceRefresh): Promise<boolean>;
  close(): Promise<void>;
}
