/**
 * The read-only integrity check of the embedded palace's SQLite files (docs/tools.md §11.3): run on
 * its own connection so it never holds up the stores serving calls.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

const FILES = ['drawers.sqlite3', 'graph.sqlite3', 'logstream.sqlite3'];

export async function sqliteIntegrityCheck(palaceDir: string): Promise<{ sqlite_path: string; errors: string[] }> {
  const errors: string[] = [];
  for (const name of FILES) {
    const file = path.join(palaceDir, name);
    if (!fs.existsSync(file)) continue;
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      for (const row of db.pragma('quick_check') as { quick_check: string }[]) {
        if (row.quick_check !== 'ok') errors.push(`${name}: ${row.quick_check}`);
      }
    } catch (e) {
      errors.push(`${name}: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      db.close();
    }
  }
  return { sqlite_path: path.join(palaceDir, FILES[0]!), errors };
}
