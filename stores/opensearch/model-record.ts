/** The palace's model record on OpenSearch: the one document of the palace's meta index, written by compare-and-set. */
import type { PalaceModelRecord, PalaceModelStore } from '../ports/drawers/palace-model.js';
import { modelRecordText } from '../shared/drawers/port-args.js';
import type { OpenSearchDrawerIndices } from './drawer-indices.js';

/** The one document of the palace's meta index: the model record (a PalaceModelRecord), as modelRecordText. */
const MODEL_DOCUMENT = 'model';

export class OpenSearchModelRecord implements PalaceModelStore {
  constructor(private readonly base: OpenSearchDrawerIndices) {}

  /** The model record document with its sequence number and primary term, for compare-and-set. */
  private async modelDocument(): Promise<{ text: string; ifSeqNo: number; ifPrimaryTerm: number } | undefined> {
    return this.base.conn.call(async (c) => {
      const res = await c.get({ index: this.base.meta, id: MODEL_DOCUMENT }, { ignore: [404] });
      const body = res.body as { found?: boolean; _source?: { record: string }; _seq_no: number; _primary_term: number };
      if (res.statusCode === 404 || body.found !== true || body._source === undefined) return undefined;
      return { text: body._source.record, ifSeqNo: body._seq_no, ifPrimaryTerm: body._primary_term };
    });
  }

  async readModel(): Promise<PalaceModelRecord | undefined> {
    const doc = await this.modelDocument();
    return doc === undefined ? undefined : (JSON.parse(doc.text) as PalaceModelRecord);
  }

  async writeModel(next: PalaceModelRecord, expected: PalaceModelRecord | undefined): Promise<boolean> {
    const nextText = modelRecordText(next);
    const expectedText = expected === undefined ? undefined : modelRecordText(expected);
    let guard: Record<string, unknown> = { op_type: 'create' };
    if (expectedText !== undefined) {
      const current = await this.modelDocument();
      if (current === undefined || current.text !== expectedText) return false;
      guard = { if_seq_no: current.ifSeqNo, if_primary_term: current.ifPrimaryTerm };
    } else {
      await this.base.conn.call((c) =>
        c.indices.create({ index: this.base.meta, body: { settings: this.base.conn.indexLayout('small'), mappings: { dynamic: false, properties: {} } },
          wait_for_active_shards: '1' }, {
          ignore: [400],
        })
      );
    }
    // A version conflict (409) means another writer got there first: nothing written.
    const status = await this.base.conn.call(async (c) =>
      (await c.index({ index: this.base.meta, id: MODEL_DOCUMENT, body: { record: nextText }, refresh: true, ...guard }, { ignore: [409] })).statusCode
    );
    return status !== 409;
  }
}
