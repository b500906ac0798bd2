/**
 * The cluster profile's connection to OpenSearch (`config.opensearch.url`), made in one place so
 * every OpenSearch adapter fails and recovers the same way:
 *
 * - each request has a timeout; transient failures (connection refused or reset, timeouts, 429,
 *   502/503/504, shards not yet recovered after a restart) are retried a few times with capped,
 *   jittered exponential backoff, then surface as a retryable `store_unavailable` error naming
 *   opensearch, so callers never hang on a dead node;
 * - the client keeps no sticky "dead node" state that outlives an outage (with one node it keeps
 *   trying the dead connection), so the same adapter works again as soon as OpenSearch is back.
 *
 * Index names of one palace share the prefix `mempalace-<palace>-`.
 */
import { Client, errors } from '@opensearch-project/opensearch';
import { PalaceError, invalidArgument, isPalaceError, storeUnavailable } from '../../core/errors.js';

export const OPENSEARCH_STORE = 'opensearch';

export interface OpenSearchConnectionOptions {
  /** `http(s)://host:port`. */
  url: string;
  /** The palace whose indices this connection's users touch. */
  palaceName: string;
  /** Per-request limit (default 30 000 ms: bulk writes and delete-by-query can be slow). */
  requestTimeoutMs?: number;
  /** Attempts of one call before it fails with `store_unavailable` (default 3). */
  attempts?: number;
  /** Primary shards of a drawers index this connection creates (default 1; the small indices always have one). */
  shards?: number;
  /** Copies of every shard of the indices this connection creates (default 0). */
  replicas?: number;
  /** HNSW candidates of an approximate knn search, Lucene's `ef_search` (default `EF_SEARCH` in knn-leg.ts). */
  efSearch?: number;
}

// Index names must be lowercase and free of \ / * ? " < > | , # and spaces; the palace name is
// also kept short so `<prefix>-file-states-v<N>` stays far below the 255-byte limit.
const PALACE_NAME_RE = /^[a-z0-9][a-z0-9_-]{0,99}$/;
const TRANSIENT_STATUS = new Set([408, 429, 502, 503, 504]);
// Shard-level failures that mean "not ready yet" right after a node restart, not a bad request.
const TRANSIENT_REASON = /no_shard_available|unavailable_shards|cluster_block|node_not_connected|search_phase_execution/;

/** Backoff before attempt `attempt` (1-based): 100 ms doubling, capped at 2 s, plus ≤ 20 % jitter. */
export function backoffMs(attempt: number): number {
  const base = Math.min(2_000, 100 * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (1 + 0.2 * Math.random()));
}

/** The index-name prefix of one palace: `mempalace-<palace>`. */
export function indexPrefix(palaceName: string): string {
  if (typeof palaceName !== 'string' || !PALACE_NAME_RE.test(palaceName)) {
    throw invalidArgument('palace_name', 'opensearch_index_name',
      'palace_name must be 1–100 characters of a-z, 0-9, _ and -, starting with a letter or digit (it prefixes OpenSearch index names)');
  }
  return `mempalace-${palaceName}`;
}

function statusOf(e: unknown): number | undefined {
  return e instanceof errors.ResponseError ? e.meta.statusCode ?? undefined : undefined;
}

function reasonOf(e: unknown): string {
  if (!(e instanceof errors.ResponseError)) return e instanceof Error ? e.message : String(e);
  const body = e.meta.body as { error?: { type?: string; reason?: string; root_cause?: { type?: string; reason?: string }[] } } | undefined;
  const err = body?.error;
  if (!err) return e.message;
  const root = err.root_cause?.[0];
  return [err.type, err.reason, root && root.reason !== err.reason ? `${root.type}: ${root.reason}` : undefined].filter(Boolean).join(': ');
}

/** True when retrying the same request later can succeed (the node is down, busy or recovering). */
export function isTransient(e: unknown): boolean {
  if (e instanceof errors.ConnectionError || e instanceof errors.TimeoutError || e instanceof errors.NoLivingConnectionsError) return true;
  if (e instanceof errors.ResponseError) {
    const status = statusOf(e);
    if (status !== undefined && TRANSIENT_STATUS.has(status)) return true;
    return status !== undefined && status >= 500 && TRANSIENT_REASON.test(reasonOf(e));
  }
  return false;
}

/** Any failure of an OpenSearch call as the caller sees it. */
export function openSearchFailure(e: unknown): PalaceError {
  if (isPalaceError(e)) return e;
  if (isTransient(e)) return storeUnavailable(OPENSEARCH_STORE, new Error(reasonOf(e), { cause: e }));
  return new PalaceError('internal', `opensearch: ${reasonOf(e)}`, { store: OPENSEARCH_STORE, cause: e });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class OpenSearchConnection {
  readonly prefix: string;
  readonly client: Client;
  private readonly attempts: number;
  private closed = false;

  constructor(readonly options: OpenSearchConnectionOptions) {
    this.prefix = indexPrefix(options.palaceName);
    let url: URL;
    try {
      url = new URL(options.url);
    } catch {
      throw invalidArgument('opensearch.url', 'http_url', `opensearch.url must be an http:// or https:// URL, got ${JSON.stringify(options.url)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw invalidArgument('opensearch.url', 'http_url', `opensearch.url must be an http:// or https:// URL, got ${JSON.stringify(options.url)}`);
    }
    this.attempts = options.attempts ?? 3;
    this.client = new Client({
      node: url.toString(),
      // Retries are ours (below): the client's own would retry without backoff.
      maxRetries: 0,
      requestTimeout: options.requestTimeoutMs ?? 30_000,
      pingTimeout: 3_000,
      // No periodic pings: with one node the pool uses a dead connection anyway, which is how
      // the first request after an outage reaches the restarted node.
      resurrectStrategy: 'none',
    });
  }

  /** The shard settings of an index this connection creates: its drawers index spread over `shards`, the small ones on one. */
  indexLayout(kind: 'drawers' | 'small'): { number_of_shards: number; number_of_replicas: number } {
    return { number_of_shards: kind === 'drawers' ? this.options.shards ?? 1 : 1, number_of_replicas: this.options.replicas ?? 0 };
  }

  /** An index or alias name of this palace: `<prefix>-<name>`. */
  name(name: string): string {
    return `${this.prefix}-${name}`;
  }

  /**
   * Run one request, retrying transient failures with backoff; failures become PalaceErrors
   * (`store_unavailable` for the transient ones). Only idempotent requests go through here.
   */
  async call<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    if (this.closed)
      throw new PalaceError('store_unavailable', 'opensearch is unavailable: the connection is closed', { store: OPENSEARCH_STORE, retryable: false });
    let last: unknown;
    for (let attempt = 1; attempt <= this.attempts; attempt++) {
      try {
        return await fn(this.client);
      } catch (e) {
        last = e;
        if (!isTransient(e) || attempt === this.attempts) break;
        await sleep(backoffMs(attempt));
      }
    }
    throw openSearchFailure(last);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.close();
  }
}
