/**
 * The audit recorder (issue 28): the runtime one call sees, with every mutating port call
 * recorded in the audit trail. Write-ahead: the record (the call's fields, the ids, the
 * before-state read just now) is appended before the write is made, so no write reaches a store
 * without its record, also when `serve` is killed between the two; the cost is that a write cut
 * short by a crash or refused by the store may leave a record of a write that did not happen,
 * which revert finds as "already as before". A job start is recorded once the engine has
 * accepted it, with its id (a job's own writes are the job's, recorded as its start).
 */
import type { Drawer } from '../core/drawer.js';
import { wingSlug } from '../core/validate.js';
import { pruneWhenDue } from '../palace/audit/retention.js';
import { sessionOf } from '../palace/audit/session.js';
import type { Call } from '../palace/call.js';
import type { Runtime } from '../palace/runtime.js';
import type { AuditDraft } from '../stores/ports/audit-log.js';
import type { DrawerFilter } from '../stores/ports/drawers/drawer-index.js';
import type { GraphStore, KgTriple, TunnelRestore } from '../stores/ports/graph-store.js';
import type { JobEngine } from '../stores/ports/job-engine.js';
import type { DrawerStore, LogstreamStore } from '../stores/ports/palace-stores.js';

type Fields = Pick<AuditDraft, 'op' | 'wings' | 'ids' | 'before' | 'detail'>;
type Record = (fields: Fields) => Promise<void>;

/** `target` with the listed methods replaced; every other member is the target's own, bound to it. */
function overriding<T extends object>(target: T, methods: Partial<T>): T {
  return new Proxy(target, {
    get(t, prop) {
      if (Object.hasOwn(methods, prop)) return (methods as { [k: string | symbol]: unknown })[prop];
      const value = Reflect.get(t, prop, t) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
    },
  });
}

const unique = (values: Iterable<string>): string[] => [...new Set(values)].sort();
const drawerIds = (ids: Iterable<string>) => [...ids].map((id) => `drawer:${id}`);
const wingsOf = (rows: Drawer[]) => rows.map((d) => d.meta.wing);

/** Rows matching a filter (ids and metadata first, then content), for the before-state of a delete by filter. */
async function rowsWhere(drawers: DrawerStore, filter: DrawerFilter): Promise<Drawer[]> {
  const out: Drawer[] = [];
  for (let after: string | undefined;;) {
    const page = await drawers.scanMetadata(filter, after, 500);
    if (page.length === 0) return out;
    out.push(...await drawers.get(page.map((r) => r.id)));
    after = page[page.length - 1]!.id;
  }
}

function auditedDrawers(drawers: DrawerStore, record: Record): DrawerStore {
  return overriding(drawers, {
    async upsert(rows) {
      const before = await drawers.get(rows.map((r) => r.id));
      await record({ op: 'drawers.upsert', wings: unique([...rows.map((r) => r.meta.wing), ...wingsOf(before)]), ids: drawerIds(rows.map((r) => r.id)),
        before: { drawers: before } });
      return drawers.upsert(rows);
    },
    async delete(ids) {
      const before = await drawers.get(ids);
      await record({ op: 'drawers.delete', wings: unique(wingsOf(before)), ids: drawerIds(ids), before: { drawers: before } });
      return drawers.delete(ids);
    },
    async deleteWhere(filter) {
      const before = await rowsWhere(drawers, filter);
      await record({ op: 'drawers.deleteWhere', wings: unique(wingsOf(before)), ids: drawerIds(before.map((d) => d.id)), before: { drawers: before },
        detail: { filter } });
      return drawers.deleteWhere(filter);
    },
  });
}

/** The open (subject, predicate, object) facts, whose validity an invalidation or supersession changes. */
async function openFacts(graph: GraphStore, subjectId: string, predicate: string, objectId: string): Promise<KgTriple[]> {
  const facts = await graph.kgFacts({ entity_id: subjectId, direction: 'outgoing' });
  return facts.filter((f) => f.predicate === predicate && f.object_id === objectId && f.to_key === null).map(({ direction: _, ...t }) => t);
}

async function tunnelsById(graph: GraphStore, ids: string[]): Promise<TunnelRestore[]> {
  const wanted = new Set(ids);
  return (await graph.tunnelList()).filter((t) => wanted.has(t.id))
    .map((t) => ({ ...t, source_wing_key: wingSlug(t.source.wing), target_wing_key: wingSlug(t.target.wing) }));
}

function auditedGraph(graph: GraphStore, record: Record): GraphStore {
  return overriding(graph, {
    async kgAdd(triple) {
      await record({ op: 'graph.kgAdd', wings: [], ids: [`fact:${triple.id}`],
        detail: { subject: triple.subject.id, predicate: triple.predicate, object: triple.object.id } });
      return graph.kgAdd(triple);
    },
    async kgInvalidate(q) {
      const before = await openFacts(graph, q.subject_id, q.predicate, q.object_id);
      await record({ op: 'graph.kgInvalidate', wings: [], ids: before.map((t) => `fact:${t.id}`), before: { triples: before },
        detail: { subject: q.subject_id, predicate: q.predicate, object: q.object_id, ended: q.ended } });
      return graph.kgInvalidate(q);
    },
    async kgSupersede(q) {
      const s = q.successor;
      const before = await openFacts(graph, s.subject.id, s.predicate, q.old_object.id);
      await record({ op: 'graph.kgSupersede', wings: [], ids: [...before.map((t) => `fact:${t.id}`), `fact:${s.id}`], before: { triples: before },
        detail: { subject: s.subject.id, predicate: s.predicate, old_object: q.old_object.id, object: s.object.id, successor: s.id } });
      return graph.kgSupersede(q);
    },
    async tunnelUpsert(writes) {
      const before = await tunnelsById(graph, writes.map((w) => w.id));
      await record({ op: 'graph.tunnelUpsert', wings: unique(writes.flatMap((w) => [w.source.wing, w.target.wing])), ids: writes.map((w) => `tunnel:${w.id}`),
        before: { tunnels: before } });
      return graph.tunnelUpsert(writes);
    },
    async tunnelDelete(id) {
      const before = await tunnelsById(graph, [id]);
      await record({ op: 'graph.tunnelDelete', wings: unique(before.flatMap((t) => [t.source.wing, t.target.wing])), ids: [`tunnel:${id}`],
        before: { tunnels: before } });
      return graph.tunnelDelete(id);
    },
    async hallwaysReplaceWing(wing, writes) {
      await record({ op: 'graph.hallwaysReplaceWing', wings: [wing], ids: writes.map((w) => `hallway:${w.id}`) });
      return graph.hallwaysReplaceWing(wing, writes);
    },
    async hallwayDelete(id) {
      await record({ op: 'graph.hallwayDelete', wings: [], ids: [`hallway:${id}`] });
      return graph.hallwayDelete(id);
    },
  });
}

/** Logstream writes are append-only: their records name the stream and carry no before-state. */
function auditedLogstream(logstream: LogstreamStore, record: Record): LogstreamStore {
  return overriding(logstream, {
    async append(draft) {
      await record({ op: 'logstream.append', wings: [], ids: [`stream:${draft.stream}`], detail: { type: draft.type, room: draft.room } });
      return logstream.append(draft);
    },
    async appendFor(targetId, build) {
      await record({ op: 'logstream.appendFor', wings: [], ids: [`event:${targetId}`] });
      return logstream.appendFor(targetId, build);
    },
    async putArtifact(draft) {
      await record({ op: 'logstream.putArtifact', wings: [], ids: [`artifact:${draft.sha256}`], detail: { kind: draft.kind } });
      return logstream.putArtifact(draft);
    },
    async submitPatch(artifact, event) {
      await record({ op: 'logstream.submitPatch', wings: [], ids: [`artifact:${artifact.sha256}`, `stream:${event.stream}`] });
      return logstream.submitPatch(artifact, event);
    },
  });
}

function auditedJobs(jobs: JobEngine, record: Record): JobEngine {
  return overriding(jobs, {
    async start(spec) {
      const started = await jobs.start(spec);
      const wing = 'wing' in spec ? spec.wing : undefined;
      const source = spec.kind === 'mine'
        ? spec.source
        : spec.kind === 'delete_by_source'
        ? spec.sourceFile
        : spec.kind === 'sync'
        ? spec.projectDir
        : undefined;
      await record({ op: 'jobs.start', wings: wing ? [wing] : [], ids: [`job:${started.job_id}`],
        detail: { kind: spec.kind, ...(source === undefined ? {} : { source }), ...(wing === undefined ? {} : { wing }),
          ...(spec.kind === 'revert' ? { agent: spec.agent, revert_id: spec.revertId } : {}) } });
      return started;
    },
  });
}

/** Who a call acts as: the token's or OAuth subject's identity, MEMPALACE_AGENT for the local user. */
export function callIdentity(rt: Runtime, call: Call): string {
  return call.caller?.identity ?? rt.config.audit.localAgent;
}

export function auditedRuntime(rt: Runtime, call: Call): Runtime {
  const audit = rt.stores.audit;
  const session = sessionOf(call, rt.config.audit.session);
  const identity = callIdentity(rt, call);
  const record: Record = async (fields) => {
    await audit.append({ at: new Date().toISOString(), identity, transport: call.transport, request_id: call.requestId, action: call.action,
      ...(session === undefined ? {} : { session }), ...fields });
    await pruneWhenDue(audit, rt.config.audit.retentionDays).catch((e: unknown) => rt.log.warn({ err: e }, 'mempalace audit: pruning expired records failed'));
  };
  const drawers = auditedDrawers(rt.stores.drawers, record);
  const graph = auditedGraph(rt.stores.graph, record);
  const logstream = auditedLogstream(rt.stores.logstream, record);
  const view: Runtime = {
    ...rt,
    stores: { ...rt.stores, drawers, graph, logstream },
    jobs: auditedJobs(rt.jobs, record),
    drawerContext: { ...rt.drawerContext, drawers },
    logstreamContext: { ...rt.logstreamContext, logstream },
    forCall: (next) => rt.forCall(next),
  };
  return view;
}
