/**
 * The checks every adapter applies to a `DrawerFilter` before turning it into its engine's
 * query, so a filter refused by one profile is refused by the other with the same field and rule.
 */
import { invalidArgument } from '../../../core/errors.js';
import type { DrawerFilter } from '../../ports/drawers/drawer-index.js';

// A metadata key becomes part of a JSON path (SQLite) or a field name (OpenSearch); keep it to characters that need no escaping.
const META_KEY = /^[\p{L}\p{N}_.-]+$/u;

export function checkFilterText(field: string, value: unknown): string {
  if (typeof value !== 'string') throw invalidArgument(field, 'type', `${field} must be a string`);
  return value;
}

export function checkMetaKey(key: string): void {
  if (!META_KEY.test(key))
    throw invalidArgument('filter.meta', 'key_format', `metadata filter key ${JSON.stringify(key)} must contain only letters, digits, '_', '.', '-'`);
}

/** True when no key of the filter restricts the rows. */
export function filterIsEmpty(filter: DrawerFilter | undefined): boolean {
  if (!filter) return true;
  const { wing, room, sourceFile, parentId, since, before, meta } = filter;
  return [wing, room, sourceFile, parentId, since, before].every((v) => v === undefined) && (meta === undefined || Object.keys(meta).length === 0);
}
