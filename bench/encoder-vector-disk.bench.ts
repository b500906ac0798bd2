/**
 * Disk per drawer on OpenSearch for two encoders' vectors (issue 26): one 384-d field (today),
 * a second 384-d field beside it, or one 768-d field holding both vectors concatenated (whose
 * cosine with the query [w·q_MiniLM, (1−w)·q_bge] orders drawers exactly by w·cos_MiniLM +
 * (1−w)·cos_bge, since both halves of a drawer are unit vectors). Each layout is measured with
 * the vectors kept in `_source` (as the drawer mapping does today) and excluded from it.
 * Same HNSW settings as stores/opensearch/drawer-mapping.ts (Lucene, cosine, m 16, ef_construction 128);
 * random unit vectors, one shard, force-merged to one segment, then the index's store size.
 * The indices are temporary (`encoder-disk-probe-*`) and deleted afterwards.
 *
 *   source deploy/local/env.sh && npx tsx bench/encoder-vector-disk.bench.ts [drawers=5000]
 */
import { KNN_EF_CONSTRUCTION, KNN_M } from '../stores/opensearch/drawer-mapping.js';

const DRAWERS = Number(process.argv[2] ?? 5000);
const BASE = process.env.OPENSEARCH_URL;
if (BASE === undefined) throw new Error('OPENSEARCH_URL is not set: source deploy/local/env.sh first');
const DIMENSION = 384;

async function call(method: string, path: string, body?: unknown, ndjson = false): Promise<unknown> {
  const response = await fetch(`${BASE}${path}`, {
    method,
    headers: { 'content-type': ndjson ? 'application/x-ndjson' : 'application/json' },
    body: body === undefined ? undefined : ndjson ? (body as string) : JSON.stringify(body),
  });
  const json = (await response.json()) as unknown;
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json).slice(0, 500)}`);
  return json;
}

/** A seeded unit vector, so every layout stores the same numbers. */
function unitVector(seed: number): number[] {
  let state = seed * 2654435761 + 1;
  const v = Array.from({ length: DIMENSION }, () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31 - 0.5;
  });
  const norm = Math.hypot(...v);
  // Through Float32Array, as the product sends its vectors: the JSON carries float32 values.
  return Array.from(Float32Array.from(v.map((x) => x / norm)));
}

const field = (dimension: number) => ({
  type: 'knn_vector',
  dimension,
  method: { name: 'hnsw', engine: 'lucene', space_type: 'cosinesimil', parameters: { m: KNN_M, ef_construction: KNN_EF_CONSTRUCTION } },
});

const LAYOUTS = {
  'one 384-d field (today)': { fields: { e1: field(DIMENSION) }, doc: (a: number[]) => ({ e1: a }) },
  'two 384-d fields': { fields: { e1: field(DIMENSION), e2: field(DIMENSION) }, doc: (a: number[], b: number[]) => ({ e1: a, e2: b }) },
  'one 768-d field (concatenated)': { fields: { e: field(2 * DIMENSION) }, doc: (a: number[], b: number[]) => ({ e: [...a, ...b] }) },
} as const;

const rows: string[] = ['| layout | vectors in `_source` | bytes per drawer | at 1M drawers |', '|---|---|---|---|'];
for (const [name, layout] of Object.entries(LAYOUTS)) {
  for (const inSource of [true, false]) {
    const index = `encoder-disk-probe-${Object.keys(layout.fields).length}-${Object.values(layout.fields)[0]!.dimension}-${inSource ? 'src' : 'nosrc'}`;
    await call('DELETE', `/${index}?ignore_unavailable=true`);
    await call('PUT', `/${index}`, {
      settings: { 'index.knn': true, number_of_shards: 1, number_of_replicas: 0, refresh_interval: -1 },
      mappings: { ...(inSource ? {} : { _source: { excludes: Object.keys(layout.fields) } }), properties: { ...layout.fields, wing: { type: 'keyword' } } },
    });
    try {
      for (let start = 0; start < DRAWERS; start += 250) {
        const lines: string[] = [];
        for (let i = start; i < Math.min(DRAWERS, start + 250); i += 1) {
          lines.push(JSON.stringify({ index: { _id: String(i) } }), JSON.stringify({ wing: 'w', ...layout.doc(unitVector(i), unitVector(i + 1_000_003)) }));
        }
        const result = (await call('POST', `/${index}/_bulk`, `${lines.join('\n')}\n`, true)) as { errors: boolean };
        if (result.errors) throw new Error(`bulk into ${index} had errors`);
      }
      await call('POST', `/${index}/_refresh`);
      await call('POST', `/${index}/_forcemerge?max_num_segments=1`);
      // A refresh and a flush let the merged-away segments go, so the store holds one segment.
      await call('POST', `/${index}/_refresh`);
      await call('POST', `/${index}/_flush`);
      const segments = (await call('GET', `/${index}/_segments`)) as { indices: Record<string, { shards: Record<string, { num_search_segments: number }[]> }> };
      const segmentCount = Object.values(segments.indices[index]!.shards).flat().reduce((s, shard) => s + shard.num_search_segments, 0);
      const stats = (await call('GET', `/${index}/_stats/store`)) as { _all: { primaries: { store: { size_in_bytes: number } } } };
      const bytes = stats._all.primaries.store.size_in_bytes / DRAWERS;
      rows.push(`| ${name} | ${inSource ? 'yes' : 'no'} | ${bytes.toFixed(0)} | ${((bytes * 1e6) / 2 ** 30).toFixed(2)} GiB |`);
      console.error(`${index}: ${bytes.toFixed(0)} bytes per drawer, ${segmentCount} segment(s)`);
    } finally {
      await call('DELETE', `/${index}`);
    }
  }
}
console.log(`${DRAWERS} drawers per index, vectors only (plus a keyword field), one segment.\n\n${rows.join('\n')}`);
