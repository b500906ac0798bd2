/** The palace's model record on the embedded drawer store: one `palace_meta` row of drawers.sqlite3. */
import type { PalaceModelRecord, PalaceModelStore } from '../../ports/drawers/palace-model.js';
import { modelRecordText } from '../../shared/drawers/port-args.js';
import type { SqliteDrawerDb } from './drawer-db.js';
import { readMeta, writeMeta } from './schema.js';

/** `palace_meta` key of the palace's model record (a PalaceModelRecord), as modelRecordText. */
const MODEL_META_KEY = 'model';

export class SqliteModelRecord implements PalaceModelStore {
  constructor(private readonly base: SqliteDrawerDb) {}

  async readModel(): Promise<PalaceModelRecord | undefined> {
    return this.base.run(() => {
      const text = readMeta(this.base.db, MODEL_META_KEY);
      return text === undefined ? undefined : (JSON.parse(text) as PalaceModelRecord);
    });
  }

  async writeModel(next: PalaceModelRecord, expected: PalaceModelRecord | undefined): Promise<boolean> {
    return this.base.run(() => {
      const nextText = modelRecordText(next);
      const expectedText = expected === undefined ? undefined : modelRecordText(expected);
      return this.base.db.transaction(() => {
        if (readMeta(this.base.db, MODEL_META_KEY) !== expectedText) return false;
        writeMeta(this.base.db, MODEL_META_KEY, nextText);
        return true;
      }).immediate();
    });
  }
}
