/**
 * Drawers as SQLite rows: converting between the drawer model and the row (metadata as JSON,
 * embeddings as little-endian float32 blobs).
 */
import type { Drawer, DrawerMeta } from '../../../core/drawer.js';

/** The columns of a DrawerRow, from `drawers d`. */
export const DRAWER_COLUMNS = 'd.seq AS seq, d.id AS id, d.content AS content, d.meta AS meta';

export interface DrawerRow {
  seq: number;
  id: string;
  content: string;
  meta: string;
}

export function encodeVector(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

export function decodeVector(blob: Buffer): Float32Array {
  // Copy: a blob's byte offset need not be 4-aligned.
  const bytes = new Uint8Array(blob.byteLength);
  bytes.set(blob);
  return new Float32Array(bytes.buffer);
}

export function rowToDrawer(row: DrawerRow): Drawer {
  return { id: row.id, content: row.content, meta: JSON.parse(row.meta) as DrawerMeta };
}
