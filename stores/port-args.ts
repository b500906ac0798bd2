/**
 * Argument checks every adapter of a port applies the same way, so a bad call gets the same
 * structured error (field and rule) from every profile.
 */
import type { DrawerWrite } from '../core/drawer.js';
import { invalidArgument } from '../core/errors.js';
import type { FileState } from './ports.js';

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
    if (typeof state[key] !== 'number' || !Number.isFinite(state[key]) || state[key] < 0) throw invalidArgument(`state.${key}`, 'range', `state.${key} must be a finite number ≥ 0`);
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
  if (state.wing !== wing || state.source_file !== sourceFile) throw invalidArgument('state', 'matches_file', 'state must describe the same wing and source file');
}
