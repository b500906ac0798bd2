/**
 * The embedded profile's registered sources: a `sources` table in `<palace>/jobs.sqlite3` (where
 * earlier versions kept it beside the job records, so palaces written by them keep their
 * sources), the latest refresh in its own column so re-registering a source keeps it.
 */
import type Database from 'better-sqlite3';
import type { RegisteredSource, RegisteredSources, SourceRefresh } from '../ports/registered-sources.js';
import { openStoreSqlite } from './sqlite-open.js';

const SCHEMA = 'CREATE TABLE IF NOT EXISTS sources (source_id TEXT PRIMARY KEY, record TEXT NOT NULL, last_refresh TEXT);';

interface SourceRow {
  record: string;
  last_refresh: string | null;
}

function toSource(r: SourceRow): RegisteredSource {
  const source = JSON.parse(r.record) as RegisteredSource;
  return r.last_refresh === null ? source : { ...source, last_refresh: JSON.parse(r.last_refresh) as SourceRefresh };
}

export class SqliteRegisteredSources implements RegisteredSources {
  private readonly db: Database.Database;

  constructor(file: string) {
    this.db = openStoreSqlite(file, { busyTimeoutMs: 5_000, synchronous: 'FULL', setup: (db) => db.exec(SCHEMA) });
  }

  async put(source: RegisteredSource): Promise<void> {
    const { last_refresh: refresh, ...record } = source;
    this.db.prepare(
      `INSERT INTO sources (source_id, record, last_refresh) VALUES (?, ?, ?) ON CONFLICT (source_id) DO UPDATE SET
        record = json_set(excluded.record, '$.added_by', json_extract(sources.record, '$.added_by'), '$.added_at', json_extract(sources.record, '$.added_at')),
        last_refresh = coalesce(excluded.last_refresh, sources.last_refresh)`,
    )
      .run(source.source_id, JSON.stringify(record), refresh ? JSON.stringify(refresh) : null);
  }

  async get(sourceId: string): Promise<RegisteredSource | undefined> {
    const r = this.db.prepare('SELECT record, last_refresh FROM sources WHERE source_id = ?').get(sourceId) as SourceRow | undefined;
    return r ? toSource(r) : undefined;
  }

  async list(): Promise<RegisteredSource[]> {
    return (this.db.prepare('SELECT record, last_refresh FROM sources ORDER BY source_id').all() as SourceRow[]).map(toSource);
  }

  async remove(sourceId: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM sources WHERE source_id = ?').run(sourceId).changes > 0;
  }

  async setRefresh(sourceId: string, refresh: SourceRefresh): Promise<boolean> {
    return this.db.prepare('UPDATE sources SET last_refresh = ? WHERE source_id = ?').run(JSON.stringify(refresh), sourceId).changes > 0;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
