/**
 * Deterministic identifiers (docs/palace-behaviour.md §3, docs/decisions.md A1 and docs/palace-behaviour.md §18.1): the length-prefixed
 * recipe, tagged `id_recipe = "v4"` on the drawers it produces.
 */
import { hashN, lengthPrefixed } from './text.js';

export const ID_RECIPE = 'v4';

/** add_drawer: same (wing, room, content) → same id. */
export function addDrawerId(wing: string, room: string, content: string): string {
  return `drawer_${wing}_${room}_${hashN(lengthPrefixed([wing, room, content]), 24)}`;
}

/**
 * Mined chunk: position-keyed so re-mining overwrites. Source identity is the absolute directory
 * of a local source or the repository URL of a git source; the path is relative to the source
 * root, so any worker in any workspace computes the same id (docs/decisions.md palace 1).
 */
export function minedChunkId(p: {
  wing: string;
  room: string;
  sourceIdentity: string;
  relativePath: string;
  chunkIndex: number;
  mode: string;
}): string {
  const h = hashN(lengthPrefixed([p.wing, p.sourceIdentity, p.relativePath, p.chunkIndex, p.mode]), 24);
  return `drawer_${p.wing}_${p.room}_${h}`;
}

/** Rows of a logical drawer that was split into chunks. */
export function chunkRowId(logicalId: string, index: number): string {
  return `${logicalId}_chunk_${String(index).padStart(6, '0')}`;
}

/** Explicit tunnel: symmetric in its two `wing/room` endpoints. */
export function tunnelId(a: string, b: string): string {
  const [x, y] = [a, b].sort();
  return hashN(`${x}↔${y}`, 16);
}

export function hallwayId(wing: string, a: string, b: string): string {
  const [x, y] = [a, b].sort() as [string, string];
  return `hallway_${wing}_${x}_${y}_${hashN(`${wing}::${x}::${y}`, 8)}`;
}

export function diaryEntryId(wing: string, at: Date, entry: string): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const stamp = `${at.getUTCFullYear()}${p(at.getUTCMonth() + 1)}${p(at.getUTCDate())}_${p(at.getUTCHours())}${p(at.getUTCMinutes())}${p(at.getUTCSeconds())}${
    p(at.getUTCMilliseconds() * 1000, 6)
  }`;
  return `diary_${wing}_${stamp}_${hashN(entry, 12)}`;
}
