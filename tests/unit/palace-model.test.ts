/** The palace's model record (palace/drawers/palace-model.ts) on the embedded drawer index. */
import { afterEach, describe, expect, it } from 'vitest';
import type { DrawerWrite } from '../../core/drawer.js';
import { checkPalaceModel, modelBoundDrawers, UNRECORDED_PALACE_MODEL } from '../../palace/drawers/palace-model.js';
import { openSqliteDrawerIndex } from '../../stores/embedded/drawers/sqlite-drawer-index.js';
import type { DrawerStore } from '../../stores/ports/palace-stores.js';
import { rejectionOf } from '../helpers/errors.js';
import { openInTempDir } from '../helpers/tmp.js';

const modelA = { name: 'model-a', dimension: 384, weightsSha256: 'a'.repeat(64) };
const modelB = { name: 'model-b', dimension: 384, weightsSha256: 'b'.repeat(64) };

function row(id: string): DrawerWrite {
  const embedding = new Float32Array(384);
  embedding[id.length % 384] = 1;
  return { id, content: `content of ${id}`, embedding,
    meta: { wing: 'w', room: 'r', source_file: '', chunk_index: 0, added_by: 'test', filed_at: '2026-01-01T00:00:00.000000Z' } };
}

const refusal = (p: Promise<unknown>) => rejectionOf(p);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function freshIndex(): Promise<DrawerStore> {
  const { store, cleanup } = await openInTempDir('palace-model-', openSqliteDrawerIndex);
  cleanups.push(cleanup);
  return store;
}

describe('palace model record', () => {
  it('an empty palace records the first model that opens it, then refuses another', async () => {
    const index = await freshIndex();
    expect(await checkPalaceModel(index, { identity: modelA })).toEqual({ model: modelA });
    expect(await index.readModel()).toEqual({ model: modelA });
    const e = await refusal(checkPalaceModel(index, { identity: modelB }));
    expect(e.toJSON()).toMatchObject({ code: 'invalid_argument', field: 'MEMPALACE_EMBED_MODEL', rule: 'matches_palace_model' });
  });

  it('a palace filled before records existed is taken as the fp32 model', async () => {
    const index = await freshIndex();
    await index.upsert([row('legacy')]);
    await refusal(checkPalaceModel(index, { identity: modelA }));
    expect(await index.readModel()).toEqual({ model: UNRECORDED_PALACE_MODEL });
  });

  it('a re-embed under way is refused to servers, accepted for workers, and blocks writes', async () => {
    const index = await freshIndex();
    const bound = modelBoundDrawers(index, modelA);
    await bound.upsert([row('first')]);
    expect(await index.readModel()).toEqual({ model: modelA });
    const converting = { model: modelA, reembed: { target: modelB, jobId: 'job-1' } };
    expect(await index.writeModel(converting, { model: modelA })).toBe(true);
    expect((await refusal(checkPalaceModel(index, { identity: modelA }))).toJSON()).toMatchObject({ code: 'already_running', rule: 'no_reembed_under_way',
      job_id: 'job-1' });
    expect(await checkPalaceModel(index, { identity: modelA }, 'accept')).toEqual(converting);
    await refusal(bound.upsert([row('second')]));
    // Reads pass through; deletes, which would shift the re-embed's pages, wait for its end.
    expect((await bound.get(['first'])).map((d) => d.id)).toEqual(['first']);
    expect((await refusal(bound.delete(['first']))).code).toBe('already_running');
    // Once the palace records model-b, model-a's writer is refused for good.
    expect(await index.writeModel({ model: modelB }, converting)).toBe(true);
    const e = await refusal(bound.replaceFiles('w', []));
    expect(e.toJSON()).toMatchObject({ code: 'invalid_argument', field: 'MEMPALACE_EMBED_MODEL', rule: 'matches_palace_model' });
    expect(await index.count()).toBe(1);
    await modelBoundDrawers(index, modelB).upsert([row('third')]);
    expect(await index.count()).toBe(2);
    expect(await bound.delete(['third'])).toBe(1);
  });
});
