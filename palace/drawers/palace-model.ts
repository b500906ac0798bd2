/**
 * A palace holds the vectors of one model or one encoder set (embed/encoder-set.ts). Its record
 * (a PalaceModelRecord) is written by the first process that opens the palace with an embedder,
 * and rewritten only by `mempalace reembed`. Opening it with another model or set, or writing
 * drawers while a re-embed runs, is refused, so the vectors of two models or sets are never
 * mixed in one palace.
 */
import { PalaceError, invalidArgument } from '../../core/errors.js';
import type { Embedder } from '../../embed/embedder.js';
import type { ModelIdentity } from '../../embed/model-identity.js';
import { encodersOf, sameModel } from '../../embed/model-identity.js';
import { MINILM_FP32_SHA256, MINILM_MODEL_NAME } from '../../embed/model-locator.js';
import type { DrawerBulk } from '../../stores/ports/drawers/drawer-bulk.js';
import type { DrawerIndex } from '../../stores/ports/drawers/drawer-index.js';
import type { PalaceModelStore } from '../../stores/ports/drawers/palace-model.js';
import type { PalaceModelRecord } from '../../stores/ports/drawers/palace-model.js';

/**
 * Palaces filled before model records existed were all embedded with the fp32 all-MiniLM-L6-v2;
 * that is what such a palace records when it is next opened.
 */
export const UNRECORDED_PALACE_MODEL: ModelIdentity = { name: MINILM_MODEL_NAME, dimension: 384, weightsSha256: MINILM_FP32_SHA256 };

const describe = (m: ModelIdentity) =>
  m.encoders === undefined
    ? `${m.name} (${m.dimension}-d, weights sha256 ${m.weightsSha256.slice(0, 12)}…)`
    : `the encoder set ${m.name} (${m.dimension}-d: ${m.encoders.map((e) => `${e.name} ${e.dimension}-d weight ${e.weight}`).join(', ')})`;

/** The `mempalace reembed` command that converts a palace to `m`. */
export function reembedCommand(m: ModelIdentity): string {
  return m.encoders === undefined ? `mempalace reembed --model ${m.name}` : `mempalace reembed --encoders ${m.name}`;
}

/**
 * The refusal of a palace to a configured model or set other than its own. A palace and a
 * configuration of one model each name MEMPALACE_EMBED_MODEL as before encoder sets existed;
 * once either side is a set of several, MEMPALACE_ENCODERS. Both sets are in `details`.
 */
export function modelMismatch(palace: ModelIdentity, configured: ModelIdentity): PalaceError {
  const sets = palace.encoders !== undefined || configured.encoders !== undefined;
  const variable = sets ? 'MEMPALACE_ENCODERS' : 'MEMPALACE_EMBED_MODEL';
  return invalidArgument(
    variable,
    'matches_palace_model',
    `this palace holds vectors of ${describe(palace)}, but ${variable} selects ${describe(configured)}; ` +
      `set ${variable}=${palace.name}, or convert the palace with \`${reembedCommand(configured)}\``,
    { palace_encoders: encodersOf(palace), configured_encoders: encodersOf(configured), fix: reembedCommand(configured) },
  );
}

export function reembedUnderWay(record: PalaceModelRecord): PalaceError {
  const { target, jobId } = record.reembed!;
  return new PalaceError('already_running',
    `this palace is being re-embedded from ${record.model.name} to ${target.name} (job ${jobId}); it takes no new drawers until that finishes (\`${
      reembedCommand(target)
    }\` resumes it)`, {
    field: 'MEMPALACE_EMBED_MODEL',
    rule: 'no_reembed_under_way',
    details: { job_id: jobId, palace_model: record.model, reembed_target: target },
  });
}

/**
 * The store of the record, its drawer count to tell an empty palace from an unrecorded one, and
 * the vector length it takes (an empty palace takes its first model's).
 */
type ModelRecordHolder = PalaceModelStore & Pick<DrawerIndex, 'count'> & Pick<DrawerBulk, 'resetEmbeddings'>;

/**
 * The palace's record, written first when there is none: the given model for an empty palace
 * (whose store then takes that model's vector length), UNRECORDED_PALACE_MODEL for one that
 * already holds drawers.
 */
export async function palaceModelRecord(drawers: ModelRecordHolder, model: ModelIdentity): Promise<PalaceModelRecord> {
  const stored = await drawers.readModel();
  if (stored !== undefined) return stored;
  const empty = (await drawers.count()) === 0;
  const first: PalaceModelRecord = { model: empty ? model : UNRECORDED_PALACE_MODEL };
  await drawers.writeModel(first, undefined);
  // Whoever won a concurrent first write, the stored record is the one that counts.
  const record = (await drawers.readModel()) ?? first;
  if (empty) await drawers.resetEmbeddings(record.model.dimension);
  return record;
}

/**
 * Checks a palace against the embedder that is about to serve it. `whileReembedding`: `refuse`
 * (servers, the CLI) or `accept` (a job worker, which must run the re-embed itself; its drawer
 * writes stay refused until the re-embed ends, see `modelBoundDrawers`).
 */
export async function checkPalaceModel(drawers: ModelRecordHolder, embedder: Pick<Embedder, 'identity'>,
  whileReembedding: 'refuse' | 'accept' = 'refuse'): Promise<PalaceModelRecord> {
  const record = await palaceModelRecord(drawers, embedder.identity);
  if (record.reembed !== undefined) {
    if (whileReembedding === 'refuse') throw reembedUnderWay(record);
    return record;
  }
  if (!sameModel(record.model, embedder.identity)) throw modelMismatch(record.model, embedder.identity);
  return record;
}

/**
 * The refusal of a query vector of `model` by a palace whose vectors are now another model's or
 * set's: a server opened before a `mempalace reembed` started (in another process) would compare
 * its queries with vectors of another length, or of the same length from another model. The
 * palace's vectors are the re-embed's target from its start (it drops the old ones first when
 * the length changes), so the server is told to restart with that model or set.
 */
function queryModelMismatch(record: PalaceModelRecord, model: ModelIdentity): PalaceError {
  const held = record.reembed?.target ?? record.model;
  const sets = held.encoders !== undefined || model.encoders !== undefined;
  const variable = sets ? 'MEMPALACE_ENCODERS' : 'MEMPALACE_EMBED_MODEL';
  const since = record.reembed === undefined
    ? `this palace now holds vectors of ${describe(held)}`
    : `this palace is being re-embedded to ${describe(held)} (job ${record.reembed.jobId}), whose vectors replace the old ones`;
  return invalidArgument(variable, 'matches_palace_model',
    `${since}, but this process embeds queries with ${describe(model)}, the model it was started with; restart it with ${variable}=${held.name}${
      record.reembed === undefined ? '' : ' (it can search again once the re-embed ends)'
    }`, { palace_encoders: encodersOf(held), configured_encoders: encodersOf(model), fix: `${variable}=${held.name}`,
    ...(record.reembed === undefined ? {} : { reembed_job_id: record.reembed.jobId }) });
}

/** The reads that compare a query vector with the stored ones: each checks the palace's record beside the read. */
const VECTOR_READS = new Set<PropertyKey>(['knn', 'candidatePool']);
/** The writes that add vectors: each checks the palace's record first. */
const VECTOR_WRITES = new Set<PropertyKey>(['upsert', 'replaceFile', 'replaceFiles']);
/** Deletes add no vectors but would shift the pages a re-embed walks by offset: refused meanwhile. */
const DELETES = new Set<PropertyKey>(['delete', 'deleteWhere', 'deleteFileStates']);

/**
 * The drawer index as the palace's writers and searchers use it: every write that adds vectors
 * first re-reads the palace's record and is refused unless the palace holds `model`'s vectors and
 * no re-embed runs (another process may have re-embedded the palace since this one opened it);
 * deletes are refused while a re-embed runs. A nearest-neighbour read re-reads the record at the
 * same time (so it costs no added latency) and is refused with queryModelMismatch once the
 * palace's vectors are no longer `model`'s: without that, a search during a re-embed to another
 * length fails on the store's raw vector-length check (OpenSearch) or compares vectors of two
 * lengths (SQLite), and one to the same length mixes two models' scores.
 */
export function modelBoundDrawers<T extends ModelRecordHolder>(inner: T, model: ModelIdentity): T {
  const check = async (adds: boolean) => {
    const record = await palaceModelRecord(inner, model);
    if (record.reembed !== undefined) throw reembedUnderWay(record);
    if (adds && !sameModel(record.model, model)) throw modelMismatch(record.model, model);
  };
  return new Proxy(inner, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (VECTOR_READS.has(property)) {
        return async (...args: unknown[]) => {
          const [record, read] = await Promise.allSettled([palaceModelRecord(inner, model), method.apply(target, args)]);
          if (record.status === 'fulfilled') {
            const held = record.value.reembed?.target ?? record.value.model;
            if (!sameModel(held, model)) throw queryModelMismatch(record.value, model);
            // A re-embed to this very model: the palace's vectors are only partly written yet.
            if (record.value.reembed !== undefined) throw reembedUnderWay(record.value);
          }
          if (read.status === 'rejected') throw read.reason;
          if (record.status === 'rejected') throw record.reason;
          return read.value;
        };
      }
      const adds = VECTOR_WRITES.has(property);
      if (!adds && !DELETES.has(property)) return method.bind(target);
      return async (...args: unknown[]) => {
        await check(adds);
        return method.apply(target, args);
      };
    },
  });
}
