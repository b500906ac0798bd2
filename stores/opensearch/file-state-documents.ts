/**
 * Per-file mining state (docs/decisions.md palace 12) as documents of the palace's second
 * index, `<prefix>-file-states`: one document per (wing, source_file), keyword fields for lookups
 * and ordering, the state itself kept whole and unindexed so its `extra` facts round-trip with
 * their types.
 */
import { createHash } from 'node:crypto';
import type { FileState } from '../ports/drawers/file-states.js';

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
