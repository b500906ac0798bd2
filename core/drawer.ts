/**
 * The drawer model (docs/palace-behaviour.md §2.2, docs/tools.md §0.4): one verbatim text with flat metadata.
 * Metadata values are strings, numbers or booleans only; lists are `;`-joined strings.
 */
export type MetaValue = string | number | boolean;

export interface DrawerMeta {
  wing: string;
  room: string;
  /** Full stored location: absolute path, `<url>:<relative path>` for git sources, or "". */
  source_file: string;
  chunk_index: number;
  added_by: string;
  /** UTC instant, `YYYY-MM-DDTHH:MM:SS.ffffffZ` (docs/decisions.md palace 9). */
  filed_at: string;
  /** Who last changed the drawer after it was filed (absent: never changed), and when, shaped as filed_at. */
  updated_by?: string;
  updated_at?: string;
  id_recipe?: string;
  hall?: string;
  parent_drawer_id?: string;
  parent_entry_id?: string;
  [key: string]: MetaValue | undefined;
}

export interface Drawer {
  id: string;
  content: string;
  meta: DrawerMeta;
}

/** A drawer to write, with its embedding (384 floats, L2-normalised). */
export interface DrawerWrite extends Drawer {
  embedding: Float32Array;
}

/** `filed_at` for "now": microsecond-shaped UTC instant, sortable as text. */
export function filedAtNow(now: Date = new Date()): string {
  return now.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** The logical id a hit belongs to (docs/palace-behaviour.md §8.7 `drawer_id`). */
export function logicalDrawerId(d: Drawer): string {
  return d.meta.parent_drawer_id ?? d.meta.parent_entry_id ?? d.id;
}
