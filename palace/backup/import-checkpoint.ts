/**
 * The checkpoint of an interrupted import or migration (issue 24, I3). It says "the first N
 * records of this stream are in this palace", so it is only believed when all three still hold:
 *
 * - the stream is the same: a file's size and sha256, or a source palace's figures (migrate);
 * - the palace is the same: profile, palace name and replica id of the store it was written in;
 * - the records are still there: the first and last record applied of each kind (witnesses) are
 *   looked up, so wiping the drawers (or the graph, or the logstream) after a kill voids it.
 *
 * A checkpoint that fails any check is ignored and the import starts from the first record
 * (writes are idempotent, so that costs time, never data); the summary says why.
 */
import type { JobStore } from '../../stores/ports/job-store.js';
import type { PalaceRecord, RecordKind } from './backup-records.js';
import type { PalaceContentStores } from './export.js';

/** Where a checkpoint is kept and what stream it describes. */
export interface CheckpointScope {
  key: string;
  stream: string;
}

interface Witness {
  kind: RecordKind;
  id: string;
  /** The wing (file states, hallways) or subject (KG triples) the id is looked up under. */
  under?: string;
}

interface SavedCheckpoint {
  applied: number;
  stream: string;
  target: string;
  witnesses: Witness[];
}

export type CheckpointStores = PalaceContentStores & { jobs: JobStore };

export async function targetIdentity(stores: PalaceContentStores): Promise<string> {
  return `${stores.profile} ${stores.palace} ${await stores.logstream.replicaId()}`;
}

function witnessOf(record: PalaceRecord): Witness {
  switch (record.kind) {
    case 'drawer':
      return { kind: 'drawer', id: record.id };
    case 'file_state':
      return { kind: 'file_state', id: record.state.source_file, under: record.state.wing };
    case 'kg_triple':
      return { kind: 'kg_triple', id: record.triple.id, under: record.triple.subject_id };
    case 'tunnel':
      return { kind: 'tunnel', id: record.tunnel.id };
    case 'hallway':
      return { kind: 'hallway', id: record.hallway.id, under: record.hallway.wing };
    case 'artifact':
      return { kind: 'artifact', id: record.artifact.id };
    case 'event':
      return { kind: 'event', id: record.event.id };
    case 'audit':
      return { kind: 'audit', id: String(record.record.seq) };
  }
}

async function holds(stores: PalaceContentStores, w: Witness): Promise<boolean> {
  switch (w.kind) {
    case 'drawer':
      return (await stores.drawers.get([w.id])).length > 0;
    case 'file_state':
      return (await stores.drawers.fileStates(w.under!, [w.id])).has(w.id);
    case 'kg_triple':
      return (await stores.graph.kgFacts({ entity_id: w.under!, direction: 'outgoing' })).some((t) => t.id === w.id);
    case 'tunnel':
      return (await stores.graph.tunnelList()).some((t) => t.id === w.id);
    case 'hallway':
      return (await stores.graph.hallwayList(w.under)).some((h) => h.id === w.id);
    case 'artifact':
      return stores.logstream.hasArtifact(w.id);
    case 'event':
      return (await stores.logstream.getEvent(w.id)) !== null;
    case 'audit':
      return (await stores.audit.head()).seq >= Number(w.id);
  }
}

/** The records applied so far, as the checkpoint will record them. */
export class CheckpointTrail {
  private readonly witnesses = new Map<RecordKind, [Witness, Witness]>();

  constructor(saved: Witness[] = []) {
    for (let i = 0; i + 1 < saved.length; i += 2) this.witnesses.set(saved[i]!.kind, [saved[i]!, saved[i + 1]!]);
  }

  /** Records a batch that is now stored. */
  note(batch: PalaceRecord[]): void {
    const last = witnessOf(batch[batch.length - 1]!);
    const known = this.witnesses.get(last.kind);
    this.witnesses.set(last.kind, [known ? known[0] : witnessOf(batch[0]!), last]);
  }

  list(): Witness[] {
    return [...this.witnesses.values()].flat();
  }
}

/** The saved checkpoint when it still describes this stream and this palace, else why not. */
export async function loadCheckpoint(stores: CheckpointStores,
  scope: CheckpointScope): Promise<{ applied: number; trail: CheckpointTrail } | { discarded: string } | undefined> {
  const saved = (await stores.jobs.getBlob(scope.key)) as Partial<SavedCheckpoint> | undefined;
  if (!saved || typeof saved.applied !== 'number') return undefined;
  if (saved.stream !== scope.stream) return { discarded: 'it was written for a different file or source' };
  if (saved.target !== (await targetIdentity(stores))) return { discarded: 'it was written for a different palace' };
  const witnesses = Array.isArray(saved.witnesses) ? saved.witnesses : [];
  for (const w of witnesses) {
    if (!(await holds(stores, w))) return { discarded: `the palace no longer holds ${w.kind} ${JSON.stringify(w.id)} that it recorded as imported` };
  }
  return { applied: saved.applied, trail: new CheckpointTrail(witnesses) };
}

export async function saveCheckpoint(stores: CheckpointStores, scope: CheckpointScope, applied: number, trail: CheckpointTrail): Promise<void> {
  const value: SavedCheckpoint = { applied, stream: scope.stream, target: await targetIdentity(stores), witnesses: trail.list() };
  await stores.jobs.putBlob(scope.key, value);
}

export async function dropCheckpoint(stores: CheckpointStores, scope: CheckpointScope): Promise<void> {
  await stores.jobs.dropArtifacts(scope.key);
}
