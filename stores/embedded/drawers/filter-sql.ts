/**
 * A `DrawerFilter` as a SQL condition over the `drawers` table, so every query pushes its
 * filters into SQLite. Metadata keys match type-exactly: the string "1" never matches the number 1.
 */
import { invalidArgument } from '../../../core/errors.js';
import type { DrawerFilter } from '../../ports/drawers/drawer-index.js';

export interface SqlCondition {
  /** A boolean SQL expression (`1` when the filter is empty). */
  sql: string;
  params: (string | number)[];
}

// A metadata key becomes part of a JSON path; keep it to characters that need no escaping there.
const META_KEY = /^[\p{L}\p{N}_.-]+$/u;

function checkText(field: string, value: unknown): string {
  if (typeof value !== 'string') throw invalidArgument(field, 'type', `${field} must be a string`);
  return value;
}

/** True when at least one key of the filter restricts the rows. */
export function filterIsEmpty(filter: DrawerFilter | undefined): boolean {
  if (!filter) return true;
  const { wing, room, sourceFile, parentId, since, before, meta } = filter;
  return [wing, room, sourceFile, parentId, since, before].every((v) => v === undefined) && (meta === undefined || Object.keys(meta).length === 0);
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
    params.push(checkText(field, value));
  };
  exact('filter.wing', 'wing', filter.wing);
  exact('filter.room', 'room', filter.room);
  exact('filter.sourceFile', 'source_file', filter.sourceFile);
  if (filter.parentId !== undefined) {
    const parent = checkText('filter.parentId', filter.parentId);
    parts.push(`(${column('parent_drawer_id')} = ? OR ${column('parent_entry_id')} = ?)`);
    params.push(parent, parent);
  }
  if (filter.since !== undefined) {
    parts.push(`${column('filed_at')} >= ?`);
    params.push(checkText('filter.since', filter.since));
  }
  if (filter.before !== undefined) {
    parts.push(`${column('filed_at')} < ?`);
    params.push(checkText('filter.before', filter.before));
  }
  for (const [key, value] of Object.entries(filter.meta ?? {})) {
    const field = `filter.meta.${key}`;
    if (!META_KEY.test(key)) throw invalidArgument('filter.meta', 'key_format', `metadata filter key ${JSON.stringify(key)} must contain only letters, digits, '_', '.', '-'`);
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
