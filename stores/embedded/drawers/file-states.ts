/**
 * Mining's file states on the embedded drawer store: the `file_states` table of
 * drawers.sqlite3, written in the same transaction as the file's drawers.
 */
import type { FileReplacement, FileState, FileStateStore } from '../../ports/drawers/file-states.js';
import type { DrawerWrite } from '../../../core/drawer.js';
import { decodeCursor, encodeCursor, pageWithCursor } from '../../shared/drawers/cursor.js';
import { checkFileReplacements, checkFileState, checkInt, checkNonEmpty, checkStrings } from '../../shared/drawers/port-args.js';
import { PAGE_MAX, type SqliteDrawerDb } from './drawer-db.js';

const FILE_STATE_UPSERT = `INSERT INTO file_states (wing, source_file, size, mtime_ms, content_sha256, drawer_count, mined_at, extra)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (wing, source_file) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms,
    content_sha256 = excluded.content_sha256, drawer_count = excluded.drawer_count, mined_at = excluded.mined_at, extra = excluded.extra`;

/** The FILE_STATE_UPSERT parameters of a state (it was checked to describe its file). */
function stateParams(s: FileState): (string | number | null)[] {
  return [s.wing, s.source_file, s.size, s.mtime_ms, s.content_sha256, s.drawer_count, s.mined_at, s.extra === undefined ? null : JSON.stringify(s.extra)];
}

export class SqliteFileStates implements FileStateStore {
  constructor(private readonly base: SqliteDrawerDb) {}

  async replaceFile(wing: string, sourceFile: string, drawers: DrawerWrite[], state: FileState): Promise<void> {
    return this.replaceFiles(wing, [{ sourceFile, drawers, state }]);
  }

  async replaceFiles(wing: string, files: FileReplacement[]): Promise<void> {
    this.base.run(() => {
      checkFileReplacements(wing, files, this.base.dimension);
      if (files.length === 0) return;
      const deleteStale = this.base.db.prepare(
        'DELETE FROM drawers WHERE wing = ? AND source_file = ? AND id NOT IN (SELECT value FROM json_each(?)) RETURNING seq',
      ).pluck();
      const putState = this.base.db.prepare(FILE_STATE_UPSERT);
      this.base.transact((generation) => {
        const stale: number[] = [];
        for (const { sourceFile, drawers, state } of files) {
          stale.push(...(deleteStale.all(wing, sourceFile, JSON.stringify(drawers.map((d) => d.id))) as number[]));
          this.base.writeRows(drawers, generation);
          putState.run(...stateParams(state));
        }
        return stale;
      });
    });
  }

  async fileStates(wing: string, sourceFiles: string[]): Promise<Map<string, FileState>> {
    return this.base.run(() => {
      checkNonEmpty('wing', wing);
      checkStrings('sourceFiles', sourceFiles);
      const rows = this.base.db
        .prepare('SELECT * FROM file_states WHERE wing = ? AND source_file IN (SELECT value FROM json_each(?))')
        .all(wing, JSON.stringify(sourceFiles)) as FileStateRow[];
      return new Map(rows.map((r) => [r.source_file, rowToFileState(r)]));
    });
  }

  async listFileStates(wing: string | undefined, after: string | undefined, limit: number): Promise<{ items: FileState[]; next?: string }> {
    return this.base.run(() => {
      if (wing !== undefined) checkNonEmpty('wing', wing);
      checkInt('limit', limit, 1, PAGE_MAX);
      const where: string[] = [];
      const params: string[] = [];
      if (wing !== undefined) {
        where.push('wing = ?');
        params.push(wing);
      }
      if (after !== undefined) {
        where.push('(wing, source_file) > (?, ?)');
        params.push(...decodeCursor('after', after));
      }
      const rows = this.base.db
        .prepare(`SELECT * FROM file_states ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY wing, source_file LIMIT ?`)
        .all(...params, limit + 1) as FileStateRow[];
      return pageWithCursor(rows.map(rowToFileState), limit, (s) => encodeCursor(s.wing, s.source_file));
    });
  }

  async deleteFileStates(wing: string, sourceFiles: string[]): Promise<number> {
    return this.base.run(() => {
      checkNonEmpty('wing', wing);
      checkStrings('sourceFiles', sourceFiles);
      return this.base.db.prepare('DELETE FROM file_states WHERE wing = ? AND source_file IN (SELECT value FROM json_each(?))').run(wing,
        JSON.stringify(sourceFiles)).changes;
    });
  }

  async putFileStates(states: FileState[]): Promise<void> {
    this.base.run(() => {
      for (const s of states) checkFileState(s);
      const put = this.base.db.prepare(FILE_STATE_UPSERT);
      this.base.db.transaction(() => {
        for (const s of states) put.run(...stateParams(s));
      }).immediate();
    });
  }
}

/** A `file_states` row: the state with its extra facts as JSON text. */
type FileStateRow = Omit<FileState, 'extra'> & { extra: string | null };

function rowToFileState(r: FileStateRow): FileState {
  const state: FileState = {
    wing: r.wing,
    source_file: r.source_file,
    size: r.size,
    mtime_ms: r.mtime_ms,
    content_sha256: r.content_sha256,
    drawer_count: r.drawer_count,
    mined_at: r.mined_at,
  };
  if (r.extra !== null) state.extra = JSON.parse(r.extra) as FileState['extra'];
  return state;
}
