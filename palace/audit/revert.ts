/**
 * Revert (issue 28): undo what one agent's writes did, newest first, from the before-states the
 * audit trail holds. Drawers it added are removed and drawers it updated or deleted come back;
 * facts it added are ended and facts it ended reopen; tunnels likewise; diary entries are
 * drawers. Logstream writes are append-only, so the revert appends one correction event. An item
 * that someone outside the selection wrote later is a conflict: reported, never overwritten.
 *
 * Every reverted record gets a write-ahead record of its own (`reverts`: its seq, `detail.revert_id`,
 * the conflicts it kept), so the trail is the revert's checkpoint: a run started again with the
 * same id skips the records already reverted, except the last one, whose write may have been cut
 * short and is applied again under the record it has (each step sets an item to a given state, so
 * applying it twice is applying it once). The revert job (jobs/revert/) runs it batch by batch.
 */
import type { Drawer } from '../../core/drawer.js';
import { invalidArgument } from '../../core/errors.js';
import type { Embedder } from '../../embed/embedder.js';
import type { AuditDraft, AuditLog, AuditRecord } from '../../stores/ports/audit-log.js';
import type { GraphStore, KgTriple, TunnelRestore } from '../../stores/ports/graph-store.js';
import type { DrawerStore, LogstreamStore } from '../../stores/ports/palace-stores.js';
import { recordedAt } from '../kg/kg.js';
import { eventDraft } from '../logstream/validate.js';
import { auditRecords } from './list.js';

export interface RevertSelection {
  agent: string;
  session?: string | undefined;
  /** Only writes at or after this instant. */
  since?: string | undefined;
  /** Only writes that touched this wing. */
  wing?: string | undefined;
}

/** One item set back: what it becomes and from which record. */
export type RevertStep =
  | { item: string; seq: number; action: 'remove_drawer' }
  | { item: string; seq: number; action: 'restore_drawer'; drawer: Drawer }
  | { item: string; seq: number; action: 'end_fact'; ended: string; subject: string }
  | { item: string; seq: number; action: 'restore_fact'; fact: KgTriple }
  | { item: string; seq: number; action: 'remove_tunnel' }
  | { item: string; seq: number; action: 'restore_tunnel'; tunnel: TunnelRestore };

export interface RevertConflict {
  item: string;
  seq: number;
  /** The later record, by someone outside the selection, that wrote the item. */
  later_seq: number;
  later_identity: string;
  later_action: string;
}

export interface RevertPlan {
  /** Records reverted, newest first. */
  records: number[];
  steps: RevertStep[];
  conflicts: RevertConflict[];
  /** Records whose writes are not undone item by item (job starts, derived hallways, logstream appends), with why. */
  not_reverted: { seq: number; op: string; reason: string }[];
  /** Records reverted by an earlier run of this revert (resume). */
  already_reverted: number[];
  /** The record an earlier run was cut short in: applied again, under the audit record it already has. */
  in_flight?: number;
}

export interface RevertDeps {
  audit: AuditLog;
  drawers: DrawerStore;
  graph: GraphStore;
  logstream: LogstreamStore;
  embedder: Embedder;
  now?: () => Date;
}

/** Who asks for the revert, as its own audit records name them. */
export type RevertCaller = Pick<AuditDraft, 'identity' | 'transport' | 'request_id' | 'action' | 'session' | 'subject'>;

const NOT_ITEMWISE: Record<string, string> = {
  'jobs.start': "a job's writes are recorded as its start; revert them with delete_by_source or sync",
  'graph.hallwaysReplaceWing': 'hallways are derived from the drawers and recomputed by the next mine',
  'graph.hallwayDelete': 'hallways are derived from the drawers and recomputed by the next mine',
  'logstream.append': 'the logstream is append-only: the correction event names this record',
  'logstream.appendFor': 'the logstream is append-only: the correction event names this record',
  'logstream.putArtifact': 'the logstream is append-only: the correction event names this record',
  'logstream.submitPatch': 'the logstream is append-only: the correction event names this record',
};

/** The record a run of a revert appends when it has ended: nothing of the revert is in flight after it. */
const FINISHED = 'revert.finish';

function selected(r: AuditRecord, s: RevertSelection): boolean {
  return r.reverts === undefined && r.op !== FINISHED && r.identity === s.agent && (s.session === undefined || r.session === s.session)
    && (s.since === undefined || r.at >= s.since) && (s.wing === undefined || r.wings.includes(s.wing));
}

/** The steps that set back what record `r` changed, in the order to apply them. */
function stepsOf(r: AuditRecord, ended: string): RevertStep[] {
  const drawersBefore = new Map((r.before?.drawers ?? []).map((d) => [d.id, d]));
  const factsBefore = new Map((r.before?.triples ?? []).map((t) => [t.id, t]));
  const tunnelsBefore = new Map((r.before?.tunnels ?? []).map((t) => [t.id, t]));
  const steps: RevertStep[] = [];
  for (const item of r.ids) {
    const [kind, id] = [item.slice(0, item.indexOf(':')), item.slice(item.indexOf(':') + 1)];
    if (kind === 'drawer') {
      const before = drawersBefore.get(id);
      steps.push(before ? { item, seq: r.seq, action: 'restore_drawer', drawer: before } : { item, seq: r.seq, action: 'remove_drawer' });
    } else if (kind === 'fact') {
      const before = factsBefore.get(id);
      const subject = String(r.detail?.subject ?? '');
      steps.push(before ? { item, seq: r.seq, action: 'restore_fact', fact: before } : { item, seq: r.seq, action: 'end_fact', ended, subject });
    } else if (kind === 'tunnel') {
      const before = tunnelsBefore.get(id);
      steps.push(before ? { item, seq: r.seq, action: 'restore_tunnel', tunnel: before } : { item, seq: r.seq, action: 'remove_tunnel' });
    }
  }
  return steps;
}

/** Where a run of a revert stands, as the job carries it: the last record of the trail it undoes, the last record it knows finished. */
export interface RevertBounds {
  /** Only records up to this seq are selected (the trail's head when the revert job began); later ones are only conflicts. */
  upTo?: number | undefined;
  /** The reverted record whose steps this run has seen finish: it is done, not in flight. */
  confirmed?: number | undefined;
}

/** Every record of the trail, in seq order. */
async function wholeTrail(audit: AuditLog): Promise<AuditRecord[]> {
  const all: AuditRecord[] = [];
  for await (const r of auditRecords(audit)) all.push(r);
  return all;
}

/** The records of revert `revertId`, in the order it wrote them. */
const revertRecordsOf = (all: AuditRecord[], revertId: string) => all.filter((r) => r.reverts !== undefined && r.detail?.revert_id === revertId);

/** The revert of `selection` as run `revertId` would apply it now (also what the dry run shows). */
export async function planRevert(deps: Pick<RevertDeps, 'audit' | 'now'>, selection: RevertSelection, revertId: string,
  bounds: RevertBounds = {}): Promise<RevertPlan> {
  if (selection.agent.trim() === '') throw invalidArgument('agent', 'non_empty_string', 'agent must name the agent whose writes to revert');
  const all = await wholeTrail(deps.audit);
  const chosen = all.filter((r) => selected(r, selection) && (bounds.upTo === undefined || r.seq <= bounds.upTo));
  const chosenSeqs = new Set(chosen.map((r) => r.seq));
  const ours = revertRecordsOf(all, revertId);
  const done = new Set(ours.map((r) => r.reverts!));
  // The last record this revert wrote may precede a write that never happened: apply it again,
  // unless a run ended after it or this run knows its steps finished.
  const lastMark = all.findLast((r) => r.detail?.revert_id === revertId && (r.op === 'revert.record' || r.op === FINISHED));
  const last = lastMark?.op === FINISHED ? undefined : lastMark?.reverts;
  const inFlight = last === bounds.confirmed ? undefined : last;
  const ended = (deps.now ? deps.now() : new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const plan: RevertPlan = { records: [], steps: [], conflicts: [], not_reverted: [], already_reverted: [] };
  // Items each record touched later by writes outside the selection (this revert's own writes excluded).
  const outsiders = all.filter((r) => !chosenSeqs.has(r.seq) && !(r.reverts !== undefined && chosenSeqs.has(r.reverts)));
  for (const r of [...chosen].reverse()) {
    if (done.has(r.seq) && r.seq !== inFlight) {
      plan.already_reverted.push(r.seq);
      continue;
    }
    const reason = NOT_ITEMWISE[r.op];
    if (reason !== undefined) {
      plan.not_reverted.push({ seq: r.seq, op: r.op, reason });
      continue;
    }
    if (r.seq === inFlight) plan.in_flight = r.seq;
    plan.records.push(r.seq);
    for (const step of stepsOf(r, ended)) {
      const later = outsiders.find((o) => o.seq > r.seq && o.ids.includes(step.item));
      if (later) {
        plan.conflicts.push({ item: step.item, seq: r.seq, later_seq: later.seq, later_identity: later.identity, later_action: later.action });
      } else plan.steps.push(step);
    }
  }
  return plan;
}

/** `by`: who asks for the revert, the changer of a fact it ends; a restored item gets its before-state's ownership verbatim. */
async function applyStep(deps: RevertDeps, step: RevertStep, by: string): Promise<void> {
  const id = step.item.slice(step.item.indexOf(':') + 1);
  switch (step.action) {
    case 'remove_drawer':
      await deps.drawers.delete([id]);
      return;
    case 'restore_drawer': {
      const [embedding] = await deps.embedder.embed([step.drawer.content]);
      await deps.drawers.upsert([{ ...step.drawer, embedding: embedding! }]);
      return;
    }
    case 'end_fact': {
      // Only a fact still open is ended: one this write found already there was never its own.
      const facts = await deps.graph.kgFacts({ entity_id: step.subject, direction: 'outgoing' });
      if (facts.some((t) => t.id === id && t.to_key === null)) {
        await deps.graph.kgSetEnd({ id, valid_to: step.ended, to_key: step.ended, updated_by: by, updated_at: recordedAt(deps.now ? deps.now() : new Date()) });
      }
      return;
    }
    case 'restore_fact':
      // Before-states recorded before facts had ownership fields name none: unchanged.
      await deps.graph.kgSetEnd({ id, valid_to: step.fact.valid_to, to_key: step.fact.to_key, updated_by: step.fact.updated_by ?? null,
        updated_at: step.fact.updated_at ?? null });
      return;
    case 'remove_tunnel':
      await deps.graph.tunnelDelete(id);
      return;
    case 'restore_tunnel':
      await deps.graph.tunnelRestore([step.tunnel]);
      return;
  }
}

/** The selection as a stored record holds it: the faces pass absent filters as undefined. */
const storedSelection = (selection: RevertSelection) => Object.fromEntries(Object.entries(selection).filter(([, v]) => v !== undefined));

/** What one batch of a revert did: the records it reverted (newest first) and how many are left. */
export interface RevertBatch {
  reverted: number[];
  /** Items set back. */
  items: number;
  /** Items kept because someone outside the selection wrote them later. */
  conflicts: number;
  remaining: number;
}

/**
 * Plans the revert and applies up to `count` of its records, each behind its own write-ahead audit
 * record (the record in flight, already behind one, is applied again without another); `signal`
 * stops it between two records. The plan is made again for every batch: the trail is the
 * checkpoint, and a write made meanwhile by someone outside the selection turns into a conflict
 * instead of being overwritten.
 */
export async function revertBatch(deps: RevertDeps, selection: RevertSelection,
  opts: { revertId: string; caller: RevertCaller; count: number; signal?: AbortSignal | undefined } & RevertBounds): Promise<RevertBatch> {
  const plan = await planRevert(deps, selection, opts.revertId, opts);
  const bySeq = new Map<number, RevertStep[]>();
  for (const step of plan.steps) bySeq.set(step.seq, [...(bySeq.get(step.seq) ?? []), step]);
  const batch: RevertBatch = { reverted: [], items: 0, conflicts: 0, remaining: plan.records.length };
  for (const seq of plan.records.slice(0, opts.count)) {
    // Stopped (a cancelled job, a worker shutting down): between two records, each whole.
    if (opts.signal?.aborted) break;
    const steps = bySeq.get(seq) ?? [];
    const conflicts = plan.conflicts.filter((c) => c.seq === seq).map(({ seq: _, ...c }) => c);
    if (seq !== plan.in_flight) {
      const drawerIds = steps.filter((s) => s.item.startsWith('drawer:')).map((s) => s.item.slice('drawer:'.length));
      const current = drawerIds.length > 0 ? await deps.drawers.get(drawerIds) : [];
      await deps.audit.append({ ...opts.caller, at: new Date().toISOString(), op: 'revert.record', reverts: seq, wings: [...new Set([...current.map((d) =>
        d.meta.wing
      ), ...steps.flatMap((s) => (s.action === 'restore_drawer' ? [s.drawer.meta.wing] : []))])].sort(), ids: steps.map((s) => s.item),
        before: { drawers: current }, detail: { revert_id: opts.revertId, selection: storedSelection(selection), steps: steps.map((s) =>
          s.action
        ), ...(conflicts.length > 0 ? { conflicts } : {}) } });
    }
    for (const step of steps) await applyStep(deps, step, opts.caller.identity);
    batch.reverted.push(seq);
    batch.items += steps.length;
    batch.conflicts += conflicts.length;
    batch.remaining--;
  }
  return batch;
}

/** What a revert did over all its runs, as its audit records tell it. */
export interface RevertOutcome {
  revert_id: string;
  /** Records reverted, newest first. */
  reverted: number[];
  items: number;
  conflicts: RevertConflict[];
  not_reverted: RevertPlan['not_reverted'];
  /** The correction event appended to the logstream (not when this run reverted nothing). */
  correction_event_id?: string;
}

/**
 * The end of a run of a revert: its outcome read back from the trail, a `revert.finish` audit
 * record (after it, a run of the same id has nothing in flight) and, when this run reverted
 * anything, one correction event on the logstream (append-only, so it names the records instead).
 */
export async function finishRevert(deps: RevertDeps, selection: RevertSelection,
  opts: { revertId: string; caller: RevertCaller; upTo?: number | undefined; announce: boolean }): Promise<RevertOutcome> {
  const all = await wholeTrail(deps.audit);
  const ours = revertRecordsOf(all, opts.revertId);
  const outcome: RevertOutcome = {
    revert_id: opts.revertId,
    reverted: [...new Set(ours.map((r) => r.reverts!))],
    items: ours.reduce((n, r) => n + r.ids.length, 0),
    conflicts: ours.flatMap((r) => ((r.detail?.conflicts ?? []) as Omit<RevertConflict, 'seq'>[]).map((c) => ({ ...c, seq: r.reverts! }))),
    not_reverted: all.filter((r) => selected(r, selection) && (opts.upTo === undefined || r.seq <= opts.upTo) && NOT_ITEMWISE[r.op] !== undefined)
      .reverse().map((r) => ({ seq: r.seq, op: r.op, reason: NOT_ITEMWISE[r.op]! })),
  };
  await deps.audit.append({ ...opts.caller, at: new Date().toISOString(), op: FINISHED, wings: [], ids: [],
    detail: { revert_id: opts.revertId, selection: storedSelection(selection), reverted: outcome.reverted.length, conflicts: outcome.conflicts.length } });
  if (!opts.announce || outcome.reverted.length === 0) return outcome;
  const event = await deps.logstream.append(eventDraft({
    type: 'audit.revert',
    stream: 'audit',
    room: 'revert',
    from_agent: opts.caller.identity,
    body: `revert ${opts.revertId}: the writes of ${selection.agent}${selection.session ? ` in session ${selection.session}` : ''} were undone `
      + `(${outcome.reverted.length} records, ${outcome.conflicts.length} conflicts)`,
    metadata: { revert_id: opts.revertId, selection: storedSelection(selection), reverted: outcome.reverted, conflicts: outcome.conflicts.map((c) => c.item),
      not_reverted: outcome.not_reverted.map((n) => n.seq) },
  }));
  return { ...outcome, correction_event_id: event.id };
}
