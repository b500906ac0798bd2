/**
 * Drawers as SQLite rows: checking a write before anything is stored, and converting between
 * the drawer model and the row (metadata as JSON, embeddings as little-endian float32 blobs).
 */
import type { Drawer, DrawerMeta, DrawerWrite } from '../../core/drawer.js';
import { invalidArgument } from '../../core/errors.js';

/** How far an embedding's length may stray from 1 before it is refused (float32 rounding). */
const UNIT_NORM_TOLERANCE = 1e-3;

export interface DrawerRow {
  seq: number;
  id: string;
  content: string;
  meta: string;
}

function requireString(field: string, value: unknown, nonEmpty: boolean): string {
  if (typeof value !== 'string') throw invalidArgument(field, 'type', `${field} must be a string`);
  if (nonEmpty && value === '') throw invalidArgument(field, 'non_empty', `${field} must not be empty`);
  return value;
}

/** Refuses the first invalid field of `drawer` (at `field`, e.g. `drawers[3]`). */
export function checkDrawerWrite(field: string, drawer: DrawerWrite, dimension: number): void {
  if (drawer === null || typeof drawer !== 'object') throw invalidArgument(field, 'type', `${field} must be a drawer object`);
  requireString(`${field}.id`, drawer.id, true);
  requireString(`${field}.content`, drawer.content, false);
  if (drawer.content.includes('\0')) throw invalidArgument(`${field}.content`, 'no_nul', `${field}.content must not contain NUL`);
  const meta = drawer.meta as unknown;
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) throw invalidArgument(`${field}.meta`, 'type', `${field}.meta must be an object`);
  for (const [key, value] of Object.entries(drawer.meta)) {
    if (value === undefined) continue;
    const ok = typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
    if (!ok) throw invalidArgument(`${field}.meta.${key}`, 'type', `${field}.meta.${key} must be a string, a finite number or a boolean`);
  }
  requireString(`${field}.meta.wing`, drawer.meta.wing, true);
  requireString(`${field}.meta.room`, drawer.meta.room, true);
  requireString(`${field}.meta.source_file`, drawer.meta.source_file, false);
  requireString(`${field}.meta.filed_at`, drawer.meta.filed_at, true);
  for (const key of ['parent_drawer_id', 'parent_entry_id'] as const) {
    if (drawer.meta[key] !== undefined) requireString(`${field}.meta.${key}`, drawer.meta[key], true);
  }
  const embedding = drawer.embedding as unknown;
  if (!(embedding instanceof Float32Array)) throw invalidArgument(`${field}.embedding`, 'type', `${field}.embedding must be a Float32Array`);
  if (embedding.length !== dimension) {
    throw invalidArgument(`${field}.embedding`, 'dimension', `${field}.embedding has ${embedding.length} dimensions, the palace uses ${dimension}`);
  }
  let norm = 0;
  for (const x of embedding) {
    if (!Number.isFinite(x)) throw invalidArgument(`${field}.embedding`, 'finite', `${field}.embedding must contain only finite numbers`);
    norm += x * x;
  }
  if (Math.abs(Math.sqrt(norm) - 1) > UNIT_NORM_TOLERANCE) {
    throw invalidArgument(`${field}.embedding`, 'unit_norm', `${field}.embedding must be L2-normalised (length ${Math.sqrt(norm).toFixed(4)})`);
  }
}

/** Refuses a batch with an invalid row or one id twice, before anything is written. */
export function checkDrawerBatch(field: string, drawers: readonly DrawerWrite[], dimension: number): void {
  if (!Array.isArray(drawers)) throw invalidArgument(field, 'type', `${field} must be an array`);
  const seen = new Set<string>();
  drawers.forEach((d, i) => {
    checkDrawerWrite(`${field}[${i}]`, d, dimension);
    if (seen.has(d.id)) throw invalidArgument(`${field}[${i}].id`, 'unique', `${field}[${i}].id ${JSON.stringify(d.id)} appears twice in one batch`);
    seen.add(d.id);
  });
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

export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** Cosine distance of two unit vectors, clamped to the metric's range [0, 2]. */
export function cosineDistance(a: Float32Array, b: Float32Array): number {
  return Math.min(2, Math.max(0, 1 - dot(a, b)));
}

export function rowToDrawer(row: DrawerRow): Drawer {
  return { id: row.id, content: row.content, meta: JSON.parse(row.meta) as DrawerMeta };
}
