/**
 * A `DrawerFilter` as OpenSearch filter clauses (non-scoring), so every query pushes its filters
 * into the engine: into the `knn` query's own `filter` (efficient filtering), the lexical `bool`,
 * counts, aggregations and `_delete_by_query`. Same checks and same meaning as the embedded
 * adapter's SQL filter: exact keyword equality, `filed_at` compared byte-wise as text, metadata
 * matched type-exactly.
 */
import { invalidArgument } from '../../core/errors.js';
import type { DrawerFilter } from '../ports/drawers/drawer-index.js';
import { metaTerm } from './drawer-documents.js';

export type FilterClause = Record<string, unknown>;

// Same key rule as the embedded adapter, so a filter refused there is refused here.
const META_KEY = /^[\p{L}\p{N}_.-]+$/u;

function checkText(field: string, value: unknown): string {
  if (typeof value !== 'string') throw invalidArgument(field, 'type', `${field} must be a string`);
  return value;
}

/** True when no key of the filter restricts the rows. */
export function filterIsEmpty(filter: DrawerFilter | undefined): boolean {
  if (!filter) return true;
  const { wing, room, sourceFile, parentId, since, before, meta } = filter;
  return [wing, room, sourceFile, parentId, since, before].every((v) => v === undefined) && (meta === undefined || Object.keys(meta).length === 0);
}

/** The filter clauses of `filter` (empty when it restricts nothing). */
export function filterClauses(filter: DrawerFilter | undefined): FilterClause[] {
  const out: FilterClause[] = [];
  if (!filter) return out;
  const exact = (field: string, name: string, value: unknown): void => {
    if (value !== undefined) out.push({ term: { [name]: checkText(field, value) } });
  };
  exact('filter.wing', 'wing', filter.wing);
  exact('filter.room', 'room', filter.room);
  exact('filter.sourceFile', 'source_file', filter.sourceFile);
  if (filter.parentId !== undefined) {
    const parent = checkText('filter.parentId', filter.parentId);
    out.push({ bool: { should: [{ term: { parent_drawer_id: parent } }, { term: { parent_entry_id: parent } }], minimum_should_match: 1 } });
  }
  const range: Record<string, string> = {};
  if (filter.since !== undefined) range.gte = checkText('filter.since', filter.since);
  if (filter.before !== undefined) range.lt = checkText('filter.before', filter.before);
  if (Object.keys(range).length > 0) out.push({ range: { filed_at: range } });
  for (const [key, value] of Object.entries(filter.meta ?? {})) {
    const field = `filter.meta.${key}`;
    if (!META_KEY.test(key)) throw invalidArgument('filter.meta', 'key_format', `metadata filter key ${JSON.stringify(key)} must contain only letters, digits, '_', '.', '-'`);
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
