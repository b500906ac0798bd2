/**
 * The cluster drawer store's indices on OpenSearch: the drawers alias, the file-states alias and
 * the meta index of one palace, with the request helpers the ports' adapters in this folder
 * share (search, bulk writes with retries of busy items, delete-by-query).
 */
import { errors } from '@opensearch-project/opensearch';
import type { Client } from '@opensearch-project/opensearch';
import type { DrawerMeta, DrawerWrite } from '../../core/drawer.js';
import { PalaceError, invalidArgument, storeUnavailable } from '../../core/errors.js';
import { checkInt } from '../shared/drawers/port-args.js';
import { OPENSEARCH_STORE, OpenSearchConnection, backoffMs, openSearchFailure } from './connection.js';
import type { OpenSearchConnectionOptions } from './connection.js';
import { documentId, toDocument } from './drawer-documents.js';
import type { FilterClause } from './drawer-filter-query.js';
import { aliasName, changeDimension, ensureIndices, metaIndexName, storedDimension } from './drawer-mapping.js';
import { MergeAfterLoad, startBackgroundMerge } from './segment-merge.js';

export const DEFAULT_DIMENSION = 384;
/** The largest page any listing of the drawer store returns. */
export const PAGE_MAX = 10_000;
const BULK_DOCS = 500;
const BULK_ATTEMPTS = 4;

export type RefreshPolicy = true | 'wait_for' | false;

export interface OpenSearchDrawerIndexOptions extends OpenSearchConnectionOptions {
  dimension?: number;
  /**
   * When writes become visible to searches: `true` (default) refreshes the index before the write
   * returns; `'wait_for'` waits for the next scheduled refresh (up to 1 s); `false` leaves it to
   * the schedule (bulk loads that call `refresh()` at the end).
   */
  refresh?: RefreshPolicy;
}

export interface Hit<S> {
  _id: string;
  _index?: string;
  _score: number | null;
  _source?: S;
  fields?: Record<string, unknown[]>;
  sort?: unknown[];
  matched_queries?: Record<string, number> | string[];
}

export interface SearchBody<S> {
  hits: { total?: { value: number }; hits: Hit<S>[] };
  aggregations?: Record<string, unknown>;
}

export interface BulkItem {
  status: number;
  result?: string;
  error?: { type?: string; reason?: string };
}

export type DrawerSource = { id: string; content: string; meta: DrawerMeta };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class OpenSearchDrawerIndices {
  readonly drawers: string;
  readonly states: string;
  readonly meta: string;
  private readonly merges: MergeAfterLoad;

  private constructor(
    readonly conn: OpenSearchConnection,
    private storedLength: number,
    readonly refreshPolicy: RefreshPolicy,
  ) {
    this.drawers = aliasName(conn, 'drawers');
    this.states = aliasName(conn, 'file-states');
    this.meta = metaIndexName(conn);
    this.merges = new MergeAfterLoad(() => startBackgroundMerge(conn, this.drawers));
  }

  /** Opens the palace's indices, creating them (templates, `-v1` indices, aliases) if needed. */
  static async open(options: OpenSearchDrawerIndexOptions): Promise<OpenSearchDrawerIndices> {
    if (options.dimension !== undefined) checkInt('dimension', options.dimension, 1, 16_000);
    const conn = new OpenSearchConnection(options);
    try {
      const stored = await storedDimension(conn);
      if (stored !== undefined && options.dimension !== undefined && stored !== options.dimension) {
        throw invalidArgument('dimension', 'matches_palace', `the palace stores ${stored}-dimensional embeddings, not ${options.dimension}`);
      }
      const dimension = stored ?? options.dimension ?? DEFAULT_DIMENSION;
      await ensureIndices(conn, dimension);
      return new OpenSearchDrawerIndices(conn, dimension, options.refresh ?? true);
    } catch (e) {
      await conn.close();
      throw openSearchFailure(e);
    }
  }

  /** Length of the vectors the palace takes, as of opening or the last `followStoredDimension`. */
  get dimension(): number {
    return this.storedLength;
  }

  /** Re-reads the vector length (another process may have changed it since this one opened). */
  async followStoredDimension(): Promise<void> {
    this.storedLength = (await storedDimension(this.conn)) ?? this.storedLength;
  }

  /** DrawerBulk.resetEmbeddings: the drawers move to an index of `dimension`-d vectors, without their vectors. */
  async resetDimension(dimension: number): Promise<void> {
    checkInt('dimension', dimension, 1, 16_000);
    await changeDimension(this.conn, dimension);
    this.storedLength = dimension;
  }

  call<T>(fn: (client: Client) => Promise<{ body: unknown }>): Promise<T> {
    return this.conn.call(async (c) => (await fn(c)).body as T);
  }

  search<S>(index: string, body: Record<string, unknown>, params: Record<string, unknown> = {}): Promise<SearchBody<S>> {
    return this.call<SearchBody<S>>((c) => c.search({ index, body, ...params }));
  }

  /**
   * Several searches of one index in one request (`_msearch`), answers in order. A failed search
   * fails the whole call the way a failed single search would (transient failures retried).
   */
  async msearch<S>(index: string, searches: Record<string, unknown>[]): Promise<SearchBody<S>[]> {
    const body = searches.flatMap((s) => [{ index }, s]);
    return this.conn.call(async (c) => {
      const res = (await c.msearch({ body })).body as { responses: (SearchBody<S> & { error?: unknown; status?: number })[] };
      const failed = res.responses.find((r) => r.error !== undefined);
      // Thrown inside the call, so a transient failure of one search is retried like any other.
      if (failed)
        throw new errors.ResponseError({ body: { error: failed.error }, statusCode: failed.status ?? 500, headers: {}, warnings: null, meta: {} } as never);
      return res.responses;
    });
  }

  /** Makes every write so far visible to searches (after loads written with `refresh: false`). */
  async refresh(): Promise<void> {
    await this.call((c) => c.indices.refresh({ index: `${this.drawers},${this.states}` }));
  }

  /**
   * Sends bulk operations in chunks, retrying items the node refused as busy or unavailable
   * (each operation is idempotent: index or delete by id). Returns the items in order.
   */
  async bulk(index: string, ops: { action: Record<string, unknown>; doc?: object }[], refresh = this.refreshPolicy): Promise<BulkItem[]> {
    const out: BulkItem[] = [];
    for (let start = 0; start < ops.length; start += BULK_DOCS) {
      let pending = ops.slice(start, start + BULK_DOCS).map((op, i) => ({ op, at: out.length + i }));
      out.push(...pending.map(() => ({ status: 0 })));
      for (let attempt = 1; pending.length > 0; attempt++) {
        const body = pending.flatMap(({ op }) => (op.doc === undefined ? [op.action] : [op.action, op.doc]));
        const res = await this.call<{ errors: boolean; items: Record<string, BulkItem>[] }>((c) =>
          c.bulk({ index, body, require_alias: true, refresh: refresh === false ? false : refresh === true ? 'true' : 'wait_for' })
        );
        const retry: typeof pending = [];
        let refused: BulkItem | undefined;
        res.items.forEach((item, i) => {
          const result = Object.values(item)[0]!;
          const p = pending[i]!;
          out[p.at] = result;
          if (!result.error) return;
          if (result.status === 429 || result.status >= 500) retry.push(p);
          else refused ??= result;
        });
        if (refused) {
          throw new PalaceError('internal', `opensearch refused a bulk write: ${refused.error!.type}: ${refused.error!.reason}`, { store: OPENSEARCH_STORE });
        }
        if (retry.length > 0 && attempt >= BULK_ATTEMPTS) {
          const first = out[retry[0]!.at]!;
          throw storeUnavailable(OPENSEARCH_STORE,
            new Error(`${retry.length} bulk items refused (${first.status} ${first.error!.type}: ${first.error!.reason})`));
        }
        pending = retry;
        if (pending.length > 0) await sleep(backoffMs(attempt));
      }
    }
    if (index === this.drawers) this.merges.noteWrites(ops.filter((op) => !('delete' in op.action)).length);
    return out;
  }

  indexOps(drawers: readonly DrawerWrite[]) {
    return drawers.map((d) => ({ action: { index: { _id: documentId(d.id) } }, doc: toDocument(d) }));
  }

  /** `_delete_by_query` until no version conflict (a row rewritten meanwhile) is left over. */
  async deleteByQuery(index: string, query: FilterClause, refresh = this.refreshPolicy !== false): Promise<number> {
    let deleted = 0;
    for (let round = 0;; round++) {
      const res = await this.call<{ deleted: number; version_conflicts: number; failures?: unknown[] }>((c) =>
        c.deleteByQuery({ index, body: { query }, refresh, conflicts: 'proceed', wait_for_completion: true })
      );
      if (res.failures && res.failures.length > 0) throw openSearchFailure(new Error(`delete by query failed: ${JSON.stringify(res.failures[0])}`));
      deleted += res.deleted;
      if (res.version_conflicts === 0 || round >= 4) return deleted;
    }
  }

  async fetchSources<S>(ids: string[], includes: string[]): Promise<Map<string, S>> {
    const res = await this.call<{ docs: { found: boolean; _source?: S & { id: string } }[] }>((c) =>
      c.mget({ index: this.drawers, body: { ids: [...new Set(ids)].map(documentId) }, _source_includes: includes })
    );
    return new Map(res.docs.filter((d) => d.found && d._source).map((d) => [d._source!.id, d._source!]));
  }

  async close(): Promise<void> {
    this.merges.close();
    await this.conn.close();
  }
}
