/**
 * The mining file states port: what mining remembers about each file of a wing, written together
 * with the file's drawers so that a retried batch converges. Implemented by the drawer stores
 * (`embedded/drawers/`, `opensearch/`).
 */
import type { DrawerWrite } from '../../../core/drawer.js';

/** What mining remembers about one file of one wing (docs/decisions.md palace 2 and 12). */
export interface FileState {
  wing: string;
  source_file: string;
  size: number;
  mtime_ms: number;
  content_sha256: string;
  /** Drawer ids this file produced at its last mine. */
  drawer_count: number;
  mined_at: string;
  /** Extra facts (mined commit, skip reason, normalise version). */
  extra?: Record<string, string | number | boolean>;
}

/** One file's new drawers and state, for `FileStateStore.replaceFiles`. */
export interface FileReplacement {
  sourceFile: string;
  drawers: DrawerWrite[];
  state: FileState;
}

export interface FileStateStore {
  /**
   * Replace everything one file contributed to one wing: delete that file's rows not in
   * `drawers`, upsert `drawers`, then record `state`. Atomic where the engine allows it; always
   * idempotent, so a retried batch converges.
   */
  replaceFile(wing: string, sourceFile: string, drawers: DrawerWrite[], state: FileState): Promise<void>;
  /**
   * `replaceFile` for several files of one wing at once (a mining batch): the same result as
   * replacing them one after another, in one transaction (embedded) or one bulk write, one
   * delete-by-query and one refresh (OpenSearch) instead of one of each per file.
   */
  replaceFiles(wing: string, files: FileReplacement[]): Promise<void>;
  fileStates(wing: string, sourceFiles: string[]): Promise<Map<string, FileState>>;
  /** All file states of a wing (or every wing), ordered by (wing, source_file), by cursor. */
  listFileStates(wing: string | undefined, after: string | undefined, limit: number): Promise<{ items: FileState[]; next?: string }>;
  deleteFileStates(wing: string, sourceFiles: string[]): Promise<number>;
  /** Insert or replace file states by (wing, source_file), leaving drawers untouched (restore). */
  putFileStates(states: FileState[]): Promise<void>;
}
