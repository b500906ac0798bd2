/**
 * The cluster profile's connection to Neo4j (`config.neo4j`), made in one place so every Neo4j
 * adapter fails and recovers the same way:
 *
 * - every call is one managed transaction (`executeRead`/`executeWrite`), which the driver
 *   retries with exponential backoff on transient errors (deadlocks, lost connections, a server
 *   that is restarting) for at most `retryBudgetMs`;
 * - what is still failing after that, or cannot be retried, becomes a `PalaceError` naming
 *   neo4j: `store_unavailable` (retryable) while the server cannot be reached;
 * - the driver's pool reconnects by itself, so the adapter recovers without a process restart.
 */
import neo4j, { isRetryableError, Neo4jError, type Driver, type ManagedTransaction, type SessionMode } from 'neo4j-driver';
import { invalidArgument, isPalaceError, PalaceError, storeUnavailable } from '../../core/errors.js';

export const NEO4J_STORE = 'neo4j';

/** Community edition has exactly one user database. */
const DATABASE = 'neo4j';

export interface Neo4jConnectionOptions {
  /** `bolt://host:port` or `neo4j://host:port` (and their `+s` forms). */
  uri: string;
  user: string;
  password: string;
  /** Connections kept per process (default 50). */
  maxConnectionPoolSize?: number;
  /** TCP connect limit (default 3 000 ms). */
  connectionTimeoutMs?: number;
  /** Wait for a free pooled connection (default 10 000 ms). */
  connectionAcquisitionTimeoutMs?: number;
  /** How long a managed transaction keeps retrying transient failures (default 5 000 ms). */
  retryBudgetMs?: number;
  /** Server-side limit of one transaction (default 30 000 ms). */
  transactionTimeoutMs?: number;
}

const URI_RE = /^(bolt|neo4j)(\+s|\+ssc)?:\/\/[^\s/]+\/?$/;

// Codes the driver itself uses for a server it cannot reach or a connection that went away.
const CONNECTION_CODES = new Set(['ServiceUnavailable', 'SessionExpired']);

/** Any failure of a Neo4j call as the caller sees it. */
export function neo4jFailure(e: unknown): PalaceError {
  if (isPalaceError(e)) return e;
  if (e instanceof Neo4jError) {
    if (CONNECTION_CODES.has(e.code) || isRetryableError(e)) return storeUnavailable(NEO4J_STORE, e);
    if (e.code.startsWith('Neo.ClientError.Security.')) {
      return new PalaceError('store_unavailable', `${NEO4J_STORE} is unavailable: ${e.message}`, { store: NEO4J_STORE, retryable: false, rule: 'neo4j_auth',
        cause: e });
    }
    return new PalaceError('internal', `${NEO4J_STORE} refused a statement: ${e.code}: ${e.message}`, { store: NEO4J_STORE, retryable: false, cause: e });
  }
  // Socket-level failures surface as plain errors with a Node error code.
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^E[A-Z]+/.test(code)) return storeUnavailable(NEO4J_STORE, e);
  return new PalaceError('internal', `${NEO4J_STORE} call failed: ${e instanceof Error ? e.message : String(e)}`, { store: NEO4J_STORE, retryable: false,
    cause: e });
}

/**
 * Thrown inside a write to roll the whole transaction back and still answer the caller with
 * `result` (e.g. "inverted interval: nothing was written").
 */
export class Rollback<T> extends Error {
  constructor(readonly result: T) {
    super('transaction rolled back on purpose');
  }
}

export class Neo4jConnection {
  private readonly driver: Driver;
  private readonly transactionTimeoutMs: number;
  private closed = false;

  constructor(readonly options: Neo4jConnectionOptions) {
    if (typeof options.uri !== 'string' || !URI_RE.test(options.uri)) {
      throw invalidArgument('neo4j.uri', 'neo4j_uri', `neo4j.uri must be a bolt:// or neo4j:// URL, got ${JSON.stringify(options.uri)}`);
    }
    this.transactionTimeoutMs = options.transactionTimeoutMs ?? 30_000;
    this.driver = neo4j.driver(options.uri, neo4j.auth.basic(options.user, options.password), {
      maxConnectionPoolSize: options.maxConnectionPoolSize ?? 50,
      connectionTimeout: options.connectionTimeoutMs ?? 3_000,
      connectionAcquisitionTimeout: options.connectionAcquisitionTimeoutMs ?? 10_000,
      maxTransactionRetryTime: options.retryBudgetMs ?? 5_000,
      // Counts and access_count come back as JS numbers; they never approach 2^53.
      disableLosslessIntegers: true,
      userAgent: 'mempalace',
    });
  }

  /** Fail with a clear error when Neo4j cannot be reached at all. */
  async verify(): Promise<void> {
    try {
      await this.driver.verifyConnectivity({ database: DATABASE });
    } catch (e) {
      throw neo4jFailure(e);
    }
  }

  read<T>(work: (tx: ManagedTransaction) => Promise<T>): Promise<T> {
    return this.run('READ', work);
  }

  write<T>(work: (tx: ManagedTransaction) => Promise<T>): Promise<T> {
    return this.run('WRITE', work);
  }

  /**
   * Schema statements cannot run in a managed transaction together with data; they run as
   * auto-commit queries, each idempotent (`IF NOT EXISTS`).
   */
  async schema(statement: string): Promise<void> {
    await this.guard(() => this.driver.executeQuery(statement, {}, { database: DATABASE }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.driver.close();
  }

  private async run<T>(mode: SessionMode, work: (tx: ManagedTransaction) => Promise<T>): Promise<T> {
    if (this.closed)
      throw new PalaceError('store_unavailable', `${NEO4J_STORE} is unavailable: the connection is closed`, { store: NEO4J_STORE, retryable: false });
    const session = this.driver.session({ database: DATABASE, defaultAccessMode: mode });
    try {
      const config = { timeout: this.transactionTimeoutMs };
      return await this.guard(() => (mode === 'READ' ? session.executeRead(work, config) : session.executeWrite(work, config)));
    } catch (e) {
      if (e instanceof Rollback) return e.result as T;
      throw e;
    } finally {
      await session.close().catch(() => undefined);
    }
  }

  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof Rollback) throw e;
      throw neo4jFailure(e);
    }
  }
}
