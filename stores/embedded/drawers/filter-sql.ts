/**
 * A `DrawerFilter` as a SQL condition over the `drawers` table, so every query pushes its
 * filters into SQLite. Metadata keys match type-exactly: the string "1" never matches the number 1.
 */
import { invalidArgument } from '../../../core/errors.js';
import { checkFilterText, checkMetaKey } from '../../shared/drawers/filter-rules.js';
import type { DrawerFilter } from '../../ports/drawers/drawer-index.js';

export interface SqlCondition {
  /** A boolean SQL expression (`1` when the filter is empty). */
  sql: string;
  params: (string | number)[];
}

/** The condition for `filter` over the drawers table aliased as `alias`. */
export function filterCondition(filter: DrawerFilter | undefined, alias = 'd'): SqlCondition {
  const parts: string[] = [];
  const params: (string | number)[] = [];
  if (!filter) return { sql: '1', params };
  const column = (name: string): string => `${alias}.${name}`;
  const exact = (field: string, name: string, value: unknown): void => {
    if (value === undefined) return;
    parts.push(`${column(name)} = ?`);
    params.push(checkFilterText(field, value));
  };
  exact('filter.wing', 'wing', filter.wing);
  exact('filter.room', 'room', filter.room);
  exact('filter.sourceFile', 'source_file', filter.sourceFile);
  if (filter.parentId !== undefined) {
    const parent = checkFilterText('filter.parentId', filter.parentId);
    parts.push(`(${column('parent_drawer_id')} = ? OR ${column('parent_entry_id')} = ?)`);
    params.push(parent, parent);
  }
  if (filter.since !== undefined) {
    parts.push(`${column('filed_at')} >= ?`);
    params.push(checkFilterText('filter.since', filter.since));
  }
  if (filter.before !== undefined) {
    parts.push(`${column('filed_at')} < ?`);
    params.push(checkFilterText('filter.before', filter.before));
  }
  for (const [key, value] of Object.entries(filter.meta ?? {})) {
    const field = `filter.meta.${key}`;
    checkMetaKey(key);
    const path = `'$."${key}"'`;
    const meta = column('meta');
    if (typeof value === 'string') {
      parts.push(`(json_type(${meta}, ${path}) = 'text' AND json_extract(${meta}, ${path}) = ?)`);
      params.push(value);
    } else if (typeof value === 'number' && Number.isFinite(value)) {
      parts.push(`(json_type(${meta}, ${path}) IN ('integer', 'real') AND json_extract(${meta}, ${path}) = ?)`);
      params.push(value);
    } else if (typeof value === 'boolean') {
      parts.push(`json_type(${meta}, ${path}) = '${value ? 'true' : 'false'}'`);
    } else {
      throw invalidArgument(field, 'type', `${field} must be a string, a finite number or a boolean`);
    }
  }
  return { sql: parts.length === 0 ? '1' : parts.join(' AND '), params };
}
