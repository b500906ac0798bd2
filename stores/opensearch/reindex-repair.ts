/**
 * Repair of a cluster palace's OpenSearch indices: everything OpenSearch holds is rebuilt from
 * its own `_source` (vectors included: stored there by mapping version 1, derived from the vector
 * file since version 2, see drawer-mapping.ts), so a repair copies each alias's index into a fresh
 * `…-v<N+1>` built from the current template and swaps the alias (drawer-mapping.ts
 * `reindexTo`). `check` reads the aliases, their indices' document counts and mappings, and
 * reports what differs from the mapping this build creates (an older mapping version, vectors
 * kept in `_source`, other HNSW parameters); the rebuild moves the index onto it.
 */
import type { IndexCheck, IndexFinding, IndexMaintenance } from '../ports/index-maintenance.js';
import type { OpenSearchConnectionOptions } from './connection.js';
import { OpenSearchConnection } from './connection.js';
import { aliasName, aliasTarget, DRAWER_MAPPING_VERSION, drawerIndexLayout, KNN_EF_CONSTRUCTION, KNN_M, reindexTo, storedDimension } from './drawer-mapping.js';
import type { IndexKind } from './drawer-mapping.js';

const KINDS: IndexKind[] = ['drawers', 'file-states'];

function versionOf(index: string): number {
  const m = /-v(\d+)$/.exec(index);
  return m ? Number(m[1]) : 0;
}

async function docCount(conn: OpenSearchConnection, index: string): Promise<number> {
  return conn.call(async (c) => ((await c.count({ index })).body as { count: number }).count);
}

async function check(conn: OpenSearchConnection): Promise<IndexCheck> {
  const findings: IndexFinding[] = [];
  const facts: Record<string, unknown> = {};
  for (const kind of KINDS) {
    const alias = aliasName(conn, kind);
    const target = await aliasTarget(conn, alias);
    if (target === undefined) {
      findings.push({ part: `opensearch:${kind}`, problem: `alias ${alias} points at no index` });
      continue;
    }
    facts[kind] = { alias, index: target, documents: await docCount(conn, target) };
  }
  const target = await aliasTarget(conn, aliasName(conn, 'drawers'));
  if (target !== undefined) {
    const mapping = await conn.call(async (c) =>
      (await c.indices.getMapping({ index: target })).body as Record<string,
        { mappings: { properties: { embedding?: { method?: { parameters?: { m?: number; ef_construction?: number } } } } } }>
    );
    const layout = await drawerIndexLayout(conn, target);
    facts.drawer_mapping_version = layout.mappingVersion;
    if (layout.mappingVersion < DRAWER_MAPPING_VERSION) {
      findings.push({ part: 'opensearch:drawers', problem: `mapping version ${layout.mappingVersion} is older than this build's ${DRAWER_MAPPING_VERSION}` });
    }
    if (layout.vectorsInSource) findings.push({ part: 'opensearch:drawers', problem: 'vectors are stored a second time as JSON in _source' });
    const wanted = conn.indexLayout('drawers');
    facts.drawer_shards = layout.shards;
    facts.drawer_replicas = layout.replicas;
    if (layout.shards !== wanted.number_of_shards || layout.replicas !== wanted.number_of_replicas) {
      findings.push({ part: 'opensearch:drawers',
        problem: `${layout.shards} shards with ${layout.replicas} replicas; configured: ${wanted.number_of_shards} with ${wanted.number_of_replicas}` });
    }
    const params = mapping[target]?.mappings.properties.embedding?.method?.parameters;
    if (params?.m !== KNN_M || params?.ef_construction !== KNN_EF_CONSTRUCTION) {
      findings.push({ part: 'opensearch:drawers',
        problem: `HNSW parameters m ${String(params?.m)} / ef_construction ${
          String(params?.ef_construction)
        } differ from this build's ${KNN_M} / ${KNN_EF_CONSTRUCTION}` });
    }
  }
  return { store: 'opensearch', findings, facts };
}

async function rebuild(conn: OpenSearchConnection): Promise<Record<string, unknown>> {
  const dimension = await storedDimension(conn);
  const out: Record<string, unknown> = {};
  for (const kind of KINDS) {
    const from = await aliasTarget(conn, aliasName(conn, kind));
    if (from === undefined || dimension === undefined) continue;
    const before = await docCount(conn, from);
    const moved = await reindexTo(conn, kind, versionOf(from) + 1, dimension);
    const after = await docCount(conn, moved.to);
    out[kind] = { ...moved, documents_before: before, documents_after: after };
  }
  return out;
}

export function openSearchIndexMaintenance(options: OpenSearchConnectionOptions): IndexMaintenance {
  const conn = new OpenSearchConnection(options);
  return { check: () => check(conn), rebuild: () => rebuild(conn), close: () => conn.close() };
}
