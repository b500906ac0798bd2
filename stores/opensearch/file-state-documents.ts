/**
 * Per-file mining state (DECISIONS, palace behaviour 12) as documents of the palace's second
 * index, `<prefix>-file-states`: one document per (wing, source_file), keyword fields for lookups
 * and ordering, the state itself kept whole and unindexed so its `extra` facts round-trip with
 * their types.
 */
import { createHash } from 'node:crypto';
import { invalidArgument } from '../../core/errors.js';
import type { FileState } from '../ports.js';

export interface FileStateDocument {
  wing: string;
  source_file: string;
  state: FileState;
}

/** The `_id` of a file state: a hash, since paths can be longer than an `_id` may be. */
export function fileStateId(wing: string, sourceFile: string): string {
  return createHash('sha256').update(JSON.stringify([wing, sourceFile]), 'utf8').digest('hex');
}

export function toFileStateDocument(state: FileState): FileStateDocument {
  return { wing: state.wing, source_file: state.source_file, state };
}

function checkNonEmpty(field: string, value: unknown): void {
  if (typeof value !== 'string' || value === '') throw invalidArgument(field, 'non_empty', `${field} must be a non-empty string`);
}

/** The checks the embedded adapter applies to a file state, with the same fields and rules. */
export function checkFileState(state: FileState): void {
  if (state === null || typeof state !== 'object') throw invalidArgument('state', 'type', 'state must be a file state object');
  checkNonEmpty('state.wing', state.wing);
  checkNonEmpty('state.source_file', state.source_file);
  for (const key of ['size', 'mtime_ms', 'drawer_count'] as const) {
    if (typeof state[key] !== 'number' || !Number.isFinite(state[key]) || state[key] < 0) throw invalidArgument(`state.${key}`, 'range', `state.${key} must be a finite number ≥ 0`);
  }
  if (typeof state.content_sha256 !== 'string') throw invalidArgument('state.content_sha256', 'type', 'state.content_sha256 must be a string');
  checkNonEmpty('state.mined_at', state.mined_at);
  for (const [key, value] of Object.entries(state.extra ?? {})) {
    const ok = typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
    if (!ok) throw invalidArgument(`state.extra.${key}`, 'type', `state.extra.${key} must be a string, a finite number or a boolean`);
  }
}

/** The stored state with only the port's fields, in the port's shape. */
export function fromFileStateSource(source: FileStateDocument): FileState {
  const s = source.state;
  const state: FileState = {
    wing: s.wing,
    source_file: s.source_file,
    size: s.size,
    mtime_ms: s.mtime_ms,
    content_sha256: s.content_sha256,
    drawer_count: s.drawer_count,
    mined_at: s.mined_at,
  };
  if (s.extra !== undefined) state.extra = s.extra;
  return state;
}
