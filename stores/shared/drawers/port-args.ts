/**
 * Argument checks every adapter of a port applies the same way, so a bad call gets the same
 * structured error (field and rule) from every profile.
 */
import type { DrawerWrite } from '../../../core/drawer.js';
import { invalidArgument } from '../../../core/errors.js';
import type { FileReplacement, FileState } from '../../ports/drawers/file-states.js';
import type { PalaceModelRecord } from '../../ports/drawers/palace-model.js';

export function checkInt(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidArgument(field, 'range', `${field} must be an integer from ${min} to ${max}`);
  }
  return value;
}

export function checkStrings(field: string, values: unknown): string[] {
  if (!Array.isArray(values) || values.some((v) => typeof v !== 'string')) throw invalidArgument(field, 'type', `${field} must be an array of strings`);
  return values as string[];
}

export function checkNonEmpty(field: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw invalidArgument(field, 'non_empty', `${field} must be a non-empty string`);
  return value;
}

/** A file state as `DrawerIndex.replaceFile` and the file-state calls accept it. */
export function checkFileState(state: FileState): void {
  if (state === null || typeof state !== 'object') throw invalidArgument('state', 'type', 'state must be a file state object');
  checkNonEmpty('state.wing', state.wing);
  checkNonEmpty('state.source_file', state.source_file);
  for (const key of ['size', 'mtime_ms', 'drawer_count'] as const) {
    if (typeof state[key] !== 'number' || !Number.isFinite(state[key]) || state[key] < 0)
      throw invalidArgument(`state.${key}`, 'range', `state.${key} must be a finite number ≥ 0`);
  }
  if (typeof state.content_sha256 !== 'string') throw invalidArgument('state.content_sha256', 'type', 'state.content_sha256 must be a string');
  checkNonEmpty('state.mined_at', state.mined_at);
  for (const [key, value] of Object.entries(state.extra ?? {})) {
    const ok = typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
    if (!ok) throw invalidArgument(`state.extra.${key}`, 'type', `state.extra.${key} must be a string, a finite number or a boolean`);
  }
}

/** `replaceFile`: every drawer and the state must belong to the one (wing, source file) replaced. */
export function checkReplaceFileTarget(wing: string, sourceFile: string, drawers: readonly DrawerWrite[], state: FileState): void {
  drawers.forEach((d, i) => {
    if (d.meta.wing !== wing) throw invalidArgument(`drawers[${i}].meta.wing`, 'matches_file', `drawers[${i}].meta.wing must be ${JSON.stringify(wing)}`);
    if (d.meta.source_file !== sourceFile) {
      throw invalidArgument(`drawers[${i}].meta.source_file`, 'matches_file', `drawers[${i}].meta.source_file must be ${JSON.stringify(sourceFile)}`);
    }
  });
  checkFileState(state);
  if (state.wing !== wing || state.source_file !== sourceFile)
    throw invalidArgument('state', 'matches_file', 'state must describe the same wing and source file');
}

/** How far an embedding's length may stray from 1 before it is refused (float32 rounding). */
const UNIT_NORM_TOLERANCE = 1e-3;

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
  checkEmbedding(`${field}.embedding`, drawer.embedding, dimension);
}

/** A unit-length Float32Array of the palace's dimension. */
export function checkEmbedding(field: string, embedding: unknown, dimension: number): void {
  if (!(embedding instanceof Float32Array)) throw invalidArgument(field, 'type', `${field} must be a Float32Array`);
  if (embedding.length !== dimension) {
    throw invalidArgument(field, 'dimension', `${field} has ${embedding.length} dimensions, the palace uses ${dimension}`);
  }
  let norm = 0;
  for (const x of embedding) {
    if (!Number.isFinite(x)) throw invalidArgument(field, 'finite', `${field} must contain only finite numbers`);
    norm += x * x;
  }
  if (Math.abs(Math.sqrt(norm) - 1) > UNIT_NORM_TOLERANCE) {
    throw invalidArgument(field, 'unit_norm', `${field} must be L2-normalised (length ${Math.sqrt(norm).toFixed(4)})`);
  }
}

/** `replaceEmbeddings`: a Map from non-empty ids to valid embeddings. */
export function checkEmbeddingMap(vectors: unknown, dimension: number): Map<string, Float32Array> {
  if (!(vectors instanceof Map)) throw invalidArgument('vectors', 'type', 'vectors must be a Map from drawer id to embedding');
  for (const [id, vector] of vectors as Map<unknown, unknown>) {
    requireString('vectors.id', id, true);
    checkEmbedding(`vectors[${JSON.stringify(id)}]`, vector, dimension);
  }
  return vectors as Map<string, Float32Array>;
}

/** A model record in its one stored text form (fixed key order), so adapters compare it as text. */
export function modelRecordText(record: PalaceModelRecord): string {
  const identity = (m: PalaceModelRecord['model']) => {
    requireString('model.name', m?.name, true);
    checkInt('model.dimension', m.dimension, 1, 65_536);
    requireString('model.weightsSha256', m.weightsSha256, true);
    const encoders = m.encoders === undefined
      ? {}
      : { encoders: m.encoders.map((e) => ({ name: e.name, dimension: e.dimension, weight: e.weight, weightsSha256: e.weightsSha256 })) };
    return { name: m.name, dimension: m.dimension, weightsSha256: m.weightsSha256, ...encoders };
  };
  const reembed = record.reembed === undefined
    ? {}
    : { reembed: { target: identity(record.reembed.target), jobId: checkNonEmpty('reembed.jobId', record.reembed.jobId) } };
  return JSON.stringify({ model: identity(record.model), ...reembed });
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

/**
 * `replaceFiles`: each file is a valid `replaceFile` target in `wing`, no file appears twice and
 * no drawer id twice across the files. Returns every drawer of the batch, in file order.
 */
export function checkFileReplacements(wing: string, files: readonly FileReplacement[], dimension: number): DrawerWrite[] {
  checkNonEmpty('wing', wing);
  if (!Array.isArray(files)) throw invalidArgument('files', 'type', 'files must be an array');
  const sources = new Set<string>();
  const ids = new Set<string>();
  files.forEach((f, i) => {
    if (f === null || typeof f !== 'object') throw invalidArgument(`files[${i}]`, 'type', `files[${i}] must be a file replacement object`);
    checkNonEmpty(`files[${i}].sourceFile`, f.sourceFile);
    if (sources.has(f.sourceFile))
      throw invalidArgument(`files[${i}].sourceFile`, 'unique', `files[${i}].sourceFile ${JSON.stringify(f.sourceFile)} appears twice in one batch`);
    sources.add(f.sourceFile);
    checkDrawerBatch(`files[${i}].drawers`, f.drawers, dimension);
    checkReplaceFileTarget(wing, f.sourceFile, f.drawers, f.state);
    f.drawers.forEach((d: DrawerWrite, j: number) => {
      if (ids.has(d.id))
        throw invalidArgument(`files[${i}].drawers[${j}].id`, 'unique', `files[${i}].drawers[${j}].id ${JSON.stringify(d.id)} appears twice in one batch`);
      ids.add(d.id);
    });
  });
  return files.flatMap((f) => f.drawers);
}
