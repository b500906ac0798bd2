/**
 * The index maintenance port: checking and rebuilding what the drawer store derives from its
 * rows. Implemented by `embedded/` (FTS table, ANN graph) and `opensearch/` (the index behind the
 * alias).
 */

/** One way a derived index differs from the drawers it is built from. */
export interface IndexFinding {
  /** `fts`, `ann`, `embeddings`, `opensearch:drawers`, ... */
  part: string;
  problem: string;
  count?: number;
  /** A few affected row ids or labels. */
  sample?: Array<string | number>;
}

export interface IndexCheck {
  store: string;
  findings: IndexFinding[];
  /** Sizes and versions seen (rows, labels, index names), for the report. */
  facts: Record<string, unknown>;
}

/**
 * Maintenance of what the drawer store derives from its rows (embedded: the FTS table and the
 * ANN graph; OpenSearch: the index behind the alias). `check` changes nothing; `rebuild`
 * rebuilds from the system of record and says what it did.
 */
export interface IndexMaintenance {
  check(): Promise<IndexCheck>;
  rebuild(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}
