/**
 * Index layout of one palace in OpenSearch. Two aliases are the only names the adapter reads and
 * writes: `<prefix>-drawers` and `<prefix>-file-states`, each in front of a versioned index
 * (`…-v1`). A mapping change creates `…-v<N+1>` from the index template, copies the documents
 * with `_reindex`, and swaps the alias in one atomic alias update (`reindexTo`), so readers never
 * see a missing or half-filled index.
 *
 * Drawer documents (one per drawer row, `_id` derived from the drawer id):
 * - `embedding`: 384-d `knn_vector`, Lucene HNSW, cosine, stored once: in Lucene's flat vector
 *   file beside the graph. The k-NN plugin's derived source (`index.knn.derived_source.enabled`,
 *   set explicitly though it is the 3.x default) keeps it out of the stored `_source` and puts it
 *   back, as the float32 values, whenever `_source` is read (get, mget, search, `_reindex`,
 *   `_update`), so every reader of vectors (exact re-sort, export, migrate, reembed, repair's
 *   `_reindex`) gets each vector bit for bit; no binary doc-values copy is written either. On 2.19
 *   the vector was kept three times (graph file, doc values, JSON in `_source`: 9.1 KB per 384-d
 *   vector measured on 2.19, 1.6 KB on 3.5 with this mapping); `repair` moves such an index to
 *   this mapping (reindex-repair.ts). m 32 / ef_construction 128, measured (bench/README.md,
 *   "ef, m and the segments a load leaves"): with real MiniLM vectors of mined chunks and their
 *   held-out text queries, a merged m 16 graph stopped at recall@20 0.96 whatever the ef (0.934
 *   at ef 100, 0.960 at 800), an m 32 one reached 0.975 at ef 100 and 0.992 at 200 for the same
 *   load time; ef_construction 256 added little (0.996 at 200) for ~50 % more load time. Graph
 *   memory ~256 B per vector at layer 0 (2·m neighbours), small beside the 1.5 KB vector.
 *   `repair` moves an index built with other parameters. Small or selective searches do not
 *   depend on it: the adapter makes those exact (see knn-leg.ts).
 * - `content`: stored in `_source` only (returned verbatim, never searched).
 * - `lexical`: the product's token stream (core/lexical) under a plain whitespace analyser, BM25,
 *   which picks a window of candidates; the adapter counts each query token in the window rows'
 *   own streams (docs/decisions.md palace 8: the product ranks lexical candidates itself), so no
 *   scripted similarity and no second copy of the stream is indexed (mapping version 1 had both);
 *   `lexical_length` the number of tokens, summed for the corpus statistics.
 * - keyword fields for every filter: wing, room, source_file, parent ids, `logical_id`, `id`.
 *   `filed_at` is a keyword, not a date: the embedded profile compares the stored UTC instant
 *   text byte-wise (`filed_at >= since`), and a keyword `range` compares UTF-8 bytes the same way,
 *   for any text; a `date` field would parse, round to milliseconds and refuse odd values.
 * - `meta_terms`: one keyword per metadata entry, tagged with its JSON type (`key\0s:value`), so a
 *   metadata filter matches type-exactly ("1" never matches 1), like the embedded JSON filter.
 * - `meta`: the whole metadata object, not indexed (`enabled: false`), so any key round-trips
 *   with its type.
 */
import type { OpenSearchConnection } from './connection.js';
import { startBackgroundMerge } from './segment-merge.js';

/**
 * The drawer mapping's version, kept in the index's mapping `_meta` (an index without it was made
 * by version 1: vectors in `_source`, scripted term-frequency field). `repair` moves an index of
 * an older version onto this one.
 */
export const DRAWER_MAPPING_VERSION = 2;
/** The suffix of the first index behind each alias (`…-v1`); `reindexTo` moves on from it. */
const FIRST_INDEX_VERSION = 1;
export const KNN_M = 32;
export const KNN_EF_CONSTRUCTION = 128;

export type IndexKind = 'drawers' | 'file-states';

export function aliasName(conn: OpenSearchConnection, kind: IndexKind): string {
  return conn.name(kind);
}

/** The palace's small meta index (the model record); a plain index, never reindexed. */
export function metaIndexName(conn: OpenSearchConnection): string {
  return conn.name('palace-meta');
}

export function versionedName(conn: OpenSearchConnection, kind: IndexKind, version: number): string {
  return conn.name(`${kind}-v${version}`);
}

const keyword = { type: 'keyword' } as const;
const stored = { type: 'object', enabled: false } as const;

function drawerIndexBody(conn: OpenSearchConnection, dimension: number) {
  return {
    settings: {
      'index.knn': true,
      'index.knn.derived_source.enabled': true,
      ...conn.indexLayout('drawers'),
    },
    mappings: {
      dynamic: 'strict' as const,
      _meta: { mapping_version: DRAWER_MAPPING_VERSION },
      properties: {
        id: keyword,
        logical_id: keyword,
        wing: keyword,
        room: keyword,
        source_file: keyword,
        parent_drawer_id: keyword,
        parent_entry_id: keyword,
        filed_at: keyword,
        chunk_index: { type: 'double' },
        // Longer entries are not filterable; refusing the whole drawer would be worse.
        meta_terms: { type: 'keyword', ignore_above: 8191 },
        meta: stored,
        content: { type: 'text', index: false },
        lexical: { type: 'text', analyzer: 'whitespace' },
        lexical_length: { type: 'integer' },
        embedding: {
          type: 'knn_vector',
          dimension,
          method: { name: 'hnsw', engine: 'lucene', space_type: 'cosinesimil', parameters: { m: KNN_M, ef_construction: KNN_EF_CONSTRUCTION } },
        },
      },
    },
  };
}

function fileStateIndexBody(conn: OpenSearchConnection) {
  return {
    settings: conn.indexLayout('small'),
    mappings: { dynamic: 'strict' as const, properties: { wing: keyword, source_file: keyword, state: stored } },
  };
}

// The client's mapping types know no `knn_vector`, hence `never`.
function indexBody(conn: OpenSearchConnection, kind: IndexKind, dimension: number): never {
  return (kind === 'drawers' ? drawerIndexBody(conn, dimension) : fileStateIndexBody(conn)) as never;
}

/**
 * The index template for `kind`: every `<prefix>-<kind>-v*` index gets the current settings and
 * mapping, whoever creates it. The adapter writes with `require_alias`, so nothing is ever
 * auto-created under the alias name itself.
 */
async function putTemplate(conn: OpenSearchConnection, kind: IndexKind, dimension: number): Promise<void> {
  const body = indexBody(conn, kind, dimension);
  await conn.call((c) =>
    c.indices.putIndexTemplate({
      name: conn.name(kind),
      body: { index_patterns: [`${conn.name(kind)}-v*`], priority: 500, template: body, _meta: { mapping_version: DRAWER_MAPPING_VERSION, dimension } },
    })
  );
}

async function indexExists(conn: OpenSearchConnection, index: string): Promise<boolean> {
  return conn.call(async (c) => (await c.indices.exists({ index })).body === true);
}

/** The concrete index behind an alias, or undefined when the alias does not exist. */
export async function aliasTarget(conn: OpenSearchConnection, alias: string): Promise<string | undefined> {
  return conn.call(async (c) => {
    const res = await c.indices.getAlias({ name: alias }, { ignore: [404] });
    if (res.statusCode === 404) return undefined;
    const names = Object.keys(res.body as Record<string, unknown>);
    return names[0];
  });
}

/** The dimension the palace's drawer mapping was made for, or undefined when there is no palace. */
export async function storedDimension(conn: OpenSearchConnection): Promise<number | undefined> {
  const target = await aliasTarget(conn, aliasName(conn, 'drawers'));
  if (target === undefined) return undefined;
  return conn.call(async (c) => {
    const res = await c.indices.getMapping({ index: target });
    const props = (res.body as Record<string, { mappings: { properties: { embedding: { dimension: number } } } }>)[target]!.mappings.properties;
    return props.embedding.dimension;
  });
}

/** What a drawer index stores, for `repair`'s check: its mapping version, where its vectors live, its shards and replicas. */
export async function drawerIndexLayout(conn: OpenSearchConnection, index: string): Promise<
  { mappingVersion: number; vectorsInSource: boolean; shards: number; replicas: number }
> {
  const [mapping, settings] = await Promise.all([
    conn.call(async (c) => (await c.indices.getMapping({ index })).body as Record<string, { mappings: { _meta?: { mapping_version?: number } } }>),
    conn.call(async (c) =>
      (await c.indices.getSettings({ index, flat_settings: true, include_defaults: true })).body as Record<string,
        { settings: Record<string, string>; defaults?: Record<string, string> }>
    ),
  ]);
  const flat = settings[index];
  const derived = flat?.settings['index.knn.derived_source.enabled'] ?? flat?.defaults?.['index.knn.derived_source.enabled'];
  return { mappingVersion: mapping[index]?.mappings._meta?.mapping_version ?? 1, vectorsInSource: derived !== 'true',
    shards: Number(flat?.settings['index.number_of_shards']), replicas: Number(flat?.settings['index.number_of_replicas']) };
}

/** Creates (if missing) the templates, `…-v1` indices and their aliases. Idempotent and race-safe. */
export async function ensureIndices(conn: OpenSearchConnection, dimension: number): Promise<void> {
  for (const kind of ['drawers', 'file-states'] as const) {
    const alias = aliasName(conn, kind);
    if ((await aliasTarget(conn, alias)) !== undefined) continue;
    await putTemplate(conn, kind, dimension);
    const index = versionedName(conn, kind, FIRST_INDEX_VERSION);
    if (!(await indexExists(conn, index))) {
      await conn.call((c) =>
        c.indices.create({ index, body: { aliases: { [alias]: { is_write_index: true } }, ...(indexBody(conn, kind, dimension) as object) },
          wait_for_active_shards: '1' }, { ignore: [400] })
      );
    }
    if ((await aliasTarget(conn, alias)) === undefined) {
      await conn.call((c) => c.indices.putAlias({ index, name: alias, body: { is_write_index: true } }));
    }
  }
}

/**
 * Runs `load` with the index tuned for a bulk load: no periodic refresh (so segments grow to the
 * indexing buffer's size instead of one per second, and Lucene builds and merges far fewer HNSW
 * graphs) and an asynchronous translog (no fsync per bulk request). Both are reset to their
 * defaults afterwards, and the index is refreshed, whether `load` succeeded or not; a load that
 * succeeded then starts a background merge to one segment (segment-merge.ts). Searches of
 * the index see none of the load until it ends, and a node crash may lose its last seconds:
 * meant for loads that are simply re-run (ids are deterministic), like `reindexTo`'s copy.
 */
export async function withBulkLoadSettings<T>(conn: OpenSearchConnection, index: string, load: () => Promise<T>): Promise<T> {
  const put = (settings: Record<string, unknown>) => conn.call((c) => c.indices.putSettings({ index, body: { index: settings } }));
  await put({ refresh_interval: '-1', 'translog.durability': 'async' });
  let loaded: T;
  try {
    loaded = await load();
  } finally {
    await put({ refresh_interval: null, 'translog.durability': null });
    await conn.call((c) => c.indices.refresh({ index }));
  }
  await startBackgroundMerge(conn, index);
  return loaded;
}

/**
 * Moves one alias onto `…-v<version>`: create that index from the current template, copy every
 * document with `_reindex` (waiting for it), swap the alias atomically, drop the old index.
 * Writes that arrive during the copy land in the old index and are lost by the swap; run it
 * while no job writes (an operator command, like the embedded profile's schema migration).
 * Returns the number of documents copied.
 */
export async function reindexTo(conn: OpenSearchConnection, kind: IndexKind, version: number, dimension: number,
  options: { dropVectors?: boolean } = {}): Promise<{ from: string; to: string; copied: number }> {
  const alias = aliasName(conn, kind);
  const from = await aliasTarget(conn, alias);
  const to = versionedName(conn, kind, version);
  if (from === undefined) throw new Error(`${alias} does not exist; nothing to reindex`);
  if (from === to) return { from, to, copied: 0 };
  await putTemplate(conn, kind, dimension);
  if (!(await indexExists(conn, to))) {
    await conn.call((c) => c.indices.create({ index: to, body: indexBody(conn, kind, dimension), wait_for_active_shards: '1' }, { ignore: [400] }));
  }
  const copied = await withBulkLoadSettings(conn, to, () =>
    conn.call(async (c) => {
      // Vectors of another length cannot go into the new mapping: the documents go without them.
      const script = options.dropVectors === true ? { script: { lang: 'painless', source: "ctx._source.remove('embedding')" } } : {};
      const res = await c.reindex({ wait_for_completion: true, body: { source: { index: from }, dest: { index: to, op_type: 'index' }, ...script } });
      const body = res.body as { total?: number; failures?: unknown[] };
      if (body.failures && body.failures.length > 0) throw new Error(`reindex ${from} → ${to} failed: ${JSON.stringify(body.failures[0])}`);
      return body.total ?? 0;
    }));
  await conn.call((c) =>
    c.indices.updateAliases({ body: { actions: [{ remove: { index: from, alias } }, { add: { index: to, alias, is_write_index: true } }] } })
  );
  await conn.call((c) => c.indices.delete({ index: from }, { ignore: [404] }));
  return { from, to, copied };
}

/**
 * Moves the drawers alias onto a new index whose vectors have `dimension` numbers, its documents
 * copied without their vectors (DrawerBulk.resetEmbeddings); nothing when it has that length.
 */
export async function changeDimension(conn: OpenSearchConnection, dimension: number): Promise<void> {
  if ((await storedDimension(conn)) === dimension) return;
  const from = await aliasTarget(conn, aliasName(conn, 'drawers'));
  const version = Number(/-v(\d+)$/.exec(from ?? '')?.[1] ?? DRAWER_MAPPING_VERSION);
  await reindexTo(conn, 'drawers', version + 1, dimension, { dropVectors: true });
}

/** Deletes every index, alias and template of the palace (tests, `palace destroy`). */
export async function dropPalaceIndices(conn: OpenSearchConnection): Promise<void> {
  await conn.call((c) =>
    c.indices.delete({ index: `${conn.prefix}-drawers-v*,${conn.prefix}-file-states-v*,${metaIndexName(conn)}*`, expand_wildcards: 'all' }, { ignore: [404] })
  );
  for (const kind of ['drawers', 'file-states'] as const) {
    await conn.call((c) => c.indices.deleteIndexTemplate({ name: conn.name(kind) }, { ignore: [404] }));
  }
}
