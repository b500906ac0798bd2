/**
 * Repair of an embedded palace's derived indexes: the FTS5 table and the HNSW graph file are
 * both built from `drawers` and `drawer_embeddings`, which stay the system of record.
 *
 * `check` opens the database read-only and loads the graph file without writing anything (the
 * drawer index itself would rebuild a missing or corrupt graph as it opens), and reports FTS
 * rows missing or orphaned, the graph file missing or failing its recorded checksum, rows the
 * persisted graph should hold but does not, and drawers without an embedding. `rebuild`
 * rewrites every FTS row and builds the graph afresh.
 */
import { existsSync } from 'node:fs';
import { SQLITE_STORE } from '../sqlite-open.js';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { IndexCheck, IndexFinding, IndexMaintenance } from '../../ports/index-maintenance.js';
import { fileSha256, HnswGraph } from './ann-hnsw-index.js';
import { readMeta } from './schema.js';
import { DEFAULT_DIMENSION, DRAWER_ANN_FILE, DRAWER_DB_FILE } from './drawer-db.js';
import { openSqliteDrawerIndex } from './sqlite-drawer-index.js';

const SAMPLE = 10;

function checkAnn(db: Database.Database, annPath: string, dimension: number, findings: IndexFinding[], facts: Record<string, unknown>): void {
  const recorded = readMeta(db, 'ann_file_sha256');
  if (!existsSync(annPath)) {
    findings.push({ part: 'ann', problem: 'graph file missing' });
    return;
  }
  if (recorded === undefined || fileSha256(annPath) !== recorded) {
    findings.push({ part: 'ann', problem: 'graph file does not match its recorded checksum' });
    return;
  }
  const rows = db.prepare('SELECT seq, gen FROM drawer_embeddings').raw().all() as [number, number][];
  const gens = new Map(rows);
  let graph: HnswGraph;
  try {
    graph = HnswGraph.load(dimension, annPath, (label) => gens.has(label));
  } catch (e) {
    findings.push({ part: 'ann', problem: `graph file unreadable: ${e instanceof Error ? e.message : String(e)}` });
    return;
  }
  const fileGeneration = Number(readMeta(db, 'ann_file_generation') ?? -1);
  // Rows written after the file was persisted are added on open; older rows must be in it.
  const newer = rows.filter(([, gen]) => gen > fileGeneration).length;
  const missing = rows.filter(([seq, gen]) => gen <= fileGeneration && !graph.live.has(seq)).map(([seq]) => seq);
  facts.ann_labels = graph.live.size;
  facts.ann_rows_newer_than_file = newer;
  if (missing.length > 0)
    findings.push({ part: 'ann', problem: 'rows missing from the persisted graph', count: missing.length, sample: missing.slice(0, SAMPLE) });
}

/** The read-only check of one embedded palace. */
export function checkEmbeddedIndexes(palaceDir: string): IndexCheck {
  const file = join(palaceDir, DRAWER_DB_FILE);
  if (!existsSync(file)) return { store: SQLITE_STORE, findings: [], facts: { drawers: 0, note: 'no palace at this directory' } };
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const findings: IndexFinding[] = [];
    const facts: Record<string, unknown> = { drawers: db.prepare('SELECT count(*) FROM drawers').pluck().get() };
    const missingFts = db.prepare('SELECT d.id FROM drawers d WHERE NOT EXISTS (SELECT 1 FROM drawer_fts f WHERE f.rowid = d.seq) ORDER BY d.seq').pluck()
      .all() as string[];
    if (missingFts.length > 0)
      findings.push({ part: 'fts', problem: 'drawers without a lexical (FTS) row', count: missingFts.length, sample: missingFts.slice(0, SAMPLE) });
    const orphanFts = db.prepare('SELECT f.rowid FROM drawer_fts f WHERE NOT EXISTS (SELECT 1 FROM drawers d WHERE d.seq = f.rowid)').pluck().all() as number[];
    if (orphanFts.length > 0) findings.push({ part: 'fts', problem: 'FTS rows of no drawer', count: orphanFts.length, sample: orphanFts.slice(0, SAMPLE) });
    const noVector = db.prepare('SELECT d.id FROM drawers d WHERE NOT EXISTS (SELECT 1 FROM drawer_embeddings e WHERE e.seq = d.seq)').pluck()
      .all() as string[];
    if (noVector.length > 0)
      findings.push({ part: 'embeddings', problem: 'drawers without an embedding (not rebuildable here: re-mine or re-embed them)', count: noVector.length,
        sample: noVector.slice(0, SAMPLE) });
    checkAnn(db, join(palaceDir, DRAWER_ANN_FILE), Number(readMeta(db, 'dimension') ?? DEFAULT_DIMENSION), findings, facts);
    return { store: SQLITE_STORE, findings, facts };
  } finally {
    db.close();
  }
}

export function embeddedIndexMaintenance(palaceDir: string): IndexMaintenance {
  return {
    check: async () => checkEmbeddedIndexes(palaceDir),
    async rebuild() {
      const index = await openSqliteDrawerIndex(palaceDir);
      try {
        return { ann_on_open: index.annStatus, ...index.rebuildDerived() };
      } finally {
        await index.close();
      }
    },
    close: async () => undefined,
  };
}
