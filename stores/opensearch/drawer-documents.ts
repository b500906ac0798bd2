/**
 * Drawers as OpenSearch documents and back (layout: drawer-mapping.ts). Embeddings travel as JSON
 * arrays of the float32 values widened to doubles, which OpenSearch keeps verbatim in `_source`,
 * so reading one back gives the identical Float32Array.
 */
import { createHash } from 'node:crypto';
import type { Drawer, DrawerMeta, DrawerWrite, MetaValue } from '../../core/drawer.js';
import { logicalDrawerId } from '../../core/drawer.js';
import { lexicalTokens } from '../../core/lexical.js';

/** OpenSearch refuses `_id`s longer than 512 bytes; longer drawer ids are hashed. */
const MAX_DOC_ID_BYTES = 512;

export interface DrawerDocument {
  id: string;
  logical_id: string;
  wing: string;
  room: string;
  source_file: string;
  parent_drawer_id?: string;
  parent_entry_id?: string;
  filed_at: string;
  chunk_index?: number;
  meta_terms: string[];
  meta: DrawerMeta;
  content: string;
  lexical: string;
  lexical_length: number;
  embedding: number[];
}

/** The `_id` of a drawer's document: the drawer id itself when it fits, else its SHA-256. */
export function documentId(drawerId: string): string {
  return Buffer.byteLength(drawerId, 'utf8') <= MAX_DOC_ID_BYTES ? drawerId : `sha256:${createHash('sha256').update(drawerId, 'utf8').digest('hex')}`;
}

/** One metadata entry as a type-tagged keyword: the filter matches it type-exactly. */
export function metaTerm(key: string, value: MetaValue): string {
  if (typeof value === 'string') return `${key}\u0000s:${value}`;
  if (typeof value === 'boolean') return `${key}\u0000b:${value}`;
  // String(n) is the one spelling of a number, so 3 and 3.0 (the same JS number) meet.
  return `${key}\u0000n:${String(value)}`;
}

export function toDocument(d: DrawerWrite): DrawerDocument {
  const m = d.meta;
  const meta = Object.fromEntries(Object.entries(m).filter(([, v]) => v !== undefined)) as DrawerMeta;
  const tokens = lexicalTokens(d.content);
  return {
    id: d.id,
    logical_id: logicalDrawerId(d),
    wing: m.wing,
    room: m.room,
    source_file: m.source_file,
    ...(m.parent_drawer_id === undefined ? {} : { parent_drawer_id: m.parent_drawer_id }),
    ...(m.parent_entry_id === undefined ? {} : { parent_entry_id: m.parent_entry_id }),
    filed_at: m.filed_at,
    ...(typeof m.chunk_index === 'number' ? { chunk_index: m.chunk_index } : {}),
    meta_terms: Object.entries(meta).map(([k, v]) => metaTerm(k, v as MetaValue)),
    meta,
    content: d.content,
    lexical: tokens.join(' '),
    lexical_length: tokens.length,
    embedding: Array.from(d.embedding),
  };
}

/** `_source` fields a drawer read needs (vectors and token streams stay on the server). */
export const DRAWER_SOURCE = ['id', 'content', 'meta'];

export function fromSource(source: { id: string; content: string; meta: DrawerMeta }): Drawer {
  return { id: source.id, content: source.content, meta: source.meta };
}

export function vectorFromSource(source: { embedding: number[] }): Float32Array {
  return Float32Array.from(source.embedding);
}
