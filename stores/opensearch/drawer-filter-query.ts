/**
 * A `DrawerFilter` as OpenSearch filter clauses (non-scoring), so every query pushes its filters
 * into the engine: into the `knn` query's own `filter` (efficient filtering), the lexical `bool`,
 * counts, aggregations and `_delete_by_query`. Same checks and same meaning as the embedded
 * adapter's SQL filter: exact keyword equality, `filed_at` compared byte-wise as text, metadata
 * matched type-exactly.
 */
import { invalidArgument } from '../../core/errors.js';
import { checkFilterText, checkMetaKey } from '../shared/drawers/filter-rules.js';
import type { DrawerFilter } from '../ports/drawers/drawer-index.js';
import { metaTerm } from './drawer-documents.js';

export type FilterClause = Record<string, unknown>;

/** The filter clauses of `filter` (empty when it restricts nothing). */
export function filterClauses(filter: DrawerFilter | undefined): FilterClause[] {
  const out: FilterClause[] = [];
  if (!filter) return out;
  const exact = (field: string, name: string, value: unknown): void => {
    if (value !== undefined) out.push({ term: { [name]: checkFilterText(field, value) } });
  };
  exact('filter.wing', 'wing', filter.wing);
  exact('filter.room', 'room', filter.room);
  exact('filter.sourceFile', 'source_file', filter.sourceFile);
  if (filter.parentId !== undefined) {
    const parent = checkFilterText('filter.parentId', filter.parentId);
    out.push({ bool: { should: [{ term: { parent_drawer_id: parent } }, { term: { parent_entry_id: parent } }], minimum_should_match: 1 } });
  }
  const range: Record<string, string> = {};
  if (filter.since !== undefined) range.gte = checkFilterText('filter.since', filter.since);
  if (filter.before !== undefined) range.lt = checkFilterText('filter.before', filter.before);
  if (Object.keys(range).length > 0) out.push({ range: { filed_at: range } });
  for (const [key, value] of Object.entries(filter.meta ?? {})) {
    const field = `filter.meta.${key}`;
    checkMetaKey(key);
    const ok = typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
    if (!ok) throw invalidArgument(field, 'type', `${field} must be a string, a finite number or a boolean`);
    out.push({ term: { meta_terms: metaTerm(key, value) } });
  }
  return out;
}

/** A query matching exactly the rows of `filter`. */
export function filterQuery(filter: DrawerFilter | undefined): FilterClause {
  const clauses = filterClauses(filter);
  return clauses.length === 0 ? { match_all: {} } : { bool: { filter: clauses } };
}
