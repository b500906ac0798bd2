/**
 * The nine coordination operations behind the MCP tools (docs/tools.md §8, docs/logstream.md §5).
 * They take the ports through a context and never touch the drawer store, the embedder or the
 * knowledge graph, so coordination keeps working while the palace index is unavailable (docs/logstream.md §6).
 * Failures are thrown as PalaceErrors carrying the spec's message; the MCP face turns them into
 * its tool-level payloads (mcp/results.ts).
 */
import { randomBytes } from 'node:crypto';
import { PalaceError, invalidArgument, isPalaceError } from '../../core/errors.js';
import { codePointLength, codePointSlice } from '../../core/text.js';
import type { LogstreamStore } from '../../stores/ports/palace-stores.js';
import type { ArtifactRecord, StoredEvent } from '../../stores/ports/logstream/records.js';
import { meshEstate, type MeshOptions } from './estate.js';
import { artifactDraft, eventDraft, listLimit, listOrder, patchWarnings, previewFlag, pyRepr, queryFilters, routingField, slug,
  waitTimeoutMs } from './validate.js';

export interface LogstreamContext {
  /** The local log; `mesh_peers` also reads the replication state of the same store. */
  logstream: LogstreamStore;
  /** Cap on one serialised event_list / event_wait result in characters (docs/logstream.md §5.1); 0 or absent disables it. */
  maxResponseChars?: number | undefined;
  /** What `mesh_peers` reports about this node and its peers. */
  mesh: MeshOptions;
}

export type ToolArgs = Record<string, unknown>;

/** An event as listed, with the preview keys when its body was shortened (docs/logstream.md §5.3). */
export type ListedEvent = StoredEvent & { body_truncated?: true; body_length?: number };

export interface EventPage {
  events: ListedEvent[];
  count: number;
  total?: number;
  truncated?: true;
  notice?: string;
}

export type ArtifactResult = ArtifactRecord & { warnings?: string[] };

export const PREVIEW_CHARS = 200;

function unknownArtifact(e: unknown): unknown {
  if (isPalaceError(e) && e.rule === 'known_artifact') {
    return invalidArgument('artifact_ids', 'known_artifact', `artifact_ids references unknown artifact ${pyRepr(e.details?.artifact_id)}`);
  }
  return e;
}

// --- writes -----------------------------------------------------------------------------------

export async function eventAppend(ctx: LogstreamContext, args: ToolArgs): Promise<{ success: true; event: StoredEvent }> {
  const draft = eventDraft(args);
  try {
    return { success: true, event: await ctx.logstream.append(draft) };
  } catch (e) {
    throw unknownArtifact(e);
  }
}

export async function eventAck(ctx: LogstreamContext, args: ToolArgs): Promise<{ success: true; event: StoredEvent }> {
  const eventId = routingField('event_id', args.event_id, true)!;
  const topicGiven = args.topic !== undefined && args.topic !== null;
  const event = await ctx.logstream.appendFor(eventId, (target) =>
    eventDraft({
      type: 'event.ack',
      stream: target.stream,
      room: target.room,
      topic: topicGiven ? args.topic : target.topic,
      from_agent: args.from_agent,
      to_agent: target.from_agent,
      correlation_id: target.correlation_id ?? target.id,
      branch: null,
      base_commit: null,
      status: args.status,
      body: args.body,
      metadata: { ack_of: target.id },
      artifact_ids: [],
    }));
  if (!event) throw new PalaceError('not_found', `event ${pyRepr(eventId)} not found`, { field: 'event_id', rule: 'known_event', details: { id: eventId } });
  return { success: true, event };
}

export async function artifactPut(ctx: LogstreamContext, args: ToolArgs): Promise<{ success: true; artifact: ArtifactResult }> {
  const draft = artifactDraft({ kind: args.kind, created_by: args.created_by, content: args.content, metadata: args.metadata });
  const stored = await ctx.logstream.putArtifact(draft);
  return { success: true, artifact: withWarnings(stored, draft.kind, draft.content) };
}

function withWarnings(record: ArtifactRecord, kind: string, content: string): ArtifactResult {
  const warnings = kind === 'patch' ? patchWarnings(content) : [];
  return warnings.length > 0 ? { ...record, warnings } : record;
}

export async function patchSubmit(ctx: LogstreamContext, args: ToolArgs): Promise<{ success: true; artifact: ArtifactResult; event: StoredEvent }> {
  // Both halves are validated before anything is written (docs/logstream.md §13 decision D2).
  const artifact = artifactDraft({ kind: 'patch', created_by: args.from_agent, content: args.content, metadata: args.metadata }, 'from_agent');
  const room = args.room === undefined || args.room === null || args.room === '' ? 'patches' : args.room;
  const event = eventDraft({ ...pick(args, ['stream', 'topic', 'from_agent', 'to_agent', 'correlation_id', 'branch', 'base_commit', 'body', 'metadata']),
    type: 'patch.ready', room, status: 'ready', artifact_ids: [] });
  const stored = await ctx.logstream.submitPatch(artifact, event);
  return { success: true, artifact: withWarnings(stored.artifact, artifact.kind, artifact.content), event: stored.event };
}

function pick(args: ToolArgs, keys: string[]): ToolArgs {
  return Object.fromEntries(keys.filter((k) => k in args).map((k) => [k, args[k]]));
}

const TASK_FIELDS: [field: string, message: string][] = [
  ['project', 'task project must not be empty'],
  ['from_agent', 'task requesting agent must not be empty'],
  ['to_agent', 'task destination agent must not be empty'],
  ['branch', 'task branch must not be empty'],
  ['base_commit', 'task base commit must not be empty'],
  ['goal', 'task goal must not be empty'],
  ['done', 'task definition of done must not be empty'],
];

const COMMIT_ID_RE = /^[0-9a-fA-F]{7,64}$/;

export const TASK_DELIVERY =
  'Close the loop through MemPalace: claim the request, then submit a patch with mempalace_patch_submit or reply with blocked/failed evidence.';

export function taskBody(goal: string, done: string): string {
  return `Goal:\n${goal}\n\nDefinition of done:\n${done}\n\nDelivery:\n${TASK_DELIVERY}`;
}

export function taskHandoff(correlationId: string, toAgent: string): string {
  return `Open MemPalace task ${correlationId} as ${toAgent}. Claim it, follow its exact definition of done, and deliver through the logstream.`;
}

export async function taskCreate(ctx: LogstreamContext, args: ToolArgs): Promise<{ success: true; task: StoredEvent; handoff: string }> {
  for (const [field, message] of TASK_FIELDS) {
    const v = args[field];
    if (typeof v !== 'string' || v.trim() === '') throw invalidArgument(field, 'non_empty_string', message);
  }
  const baseCommit = (args.base_commit as string).trim();
  if (!COMMIT_ID_RE.test(baseCommit)) {
    throw invalidArgument('base_commit', 'git_object_id', 'task base commit must be a hexadecimal Git object id (at least 7 characters), not a branch or tag');
  }
  const project = (args.project as string).trim();
  const goal = args.goal as string;
  const correlationId = `task_${slug(goal, 'work')}_${randomBytes(4).toString('hex')}`;
  const draft = eventDraft({
    type: 'task.request',
    stream: `project/${slug(project, 'project')}`,
    room: 'delegation',
    topic: null,
    from_agent: (args.from_agent as string).trim(),
    to_agent: (args.to_agent as string).trim(),
    correlation_id: correlationId,
    branch: (args.branch as string).trim(),
    base_commit: baseCommit.toLowerCase(),
    status: 'open',
    body: taskBody(goal, args.done as string),
    metadata: {},
    artifact_ids: [],
  });
  const task = await ctx.logstream.append(draft);
  return { success: true, task, handoff: taskHandoff(correlationId, task.to_agent!) };
}

// --- reads ------------------------------------------------------------------------------------

async function cursorSeq(ctx: LogstreamContext, field: 'since_event_id' | 'before_event_id', value: unknown): Promise<number | undefined> {
  const id = value === '' ? null : routingField(field, value, false);
  if (id === null) return undefined;
  const seq = await ctx.logstream.seqOf(id);
  if (seq === null) throw new PalaceError('not_found', `${field} ${pyRepr(id)} not found`, { field, rule: 'known_event', details: { id } });
  return seq;
}

function previewed(event: StoredEvent): ListedEvent {
  const length = codePointLength(event.body);
  if (length <= PREVIEW_CHARS) return event;
  return { ...event, body: codePointSlice(event.body, 0, PREVIEW_CHARS), body_truncated: true, body_length: length };
}

/** docs/logstream.md §5.1 response cap: drop whole events from the end, never below one. */
function capped<T extends { events: ListedEvent[]; count: number }>(payload: T, maxChars: number | undefined): T & EventPage {
  if (!maxChars || maxChars <= 0) return payload;
  const size = (p: unknown) => codePointLength(JSON.stringify(p, null, 2));
  if (size(payload) <= maxChars) return payload;
  const total = payload.events.length;
  const events = [...payload.events];
  const notice = (kept: number) =>
    `response truncated to ${kept} of ${total} events to stay under ${maxChars} characters; continue from the last event returned`;
  let result: T & EventPage = { ...payload, events, count: events.length, total, truncated: true, notice: notice(events.length) };
  while (events.length > 1 && size(result) > maxChars) {
    events.pop();
    result = { ...payload, events, count: events.length, total, truncated: true, notice: notice(events.length) };
  }
  return result;
}

export async function eventList(ctx: LogstreamContext, args: ToolArgs): Promise<EventPage> {
  const filters = queryFilters(args);
  const afterSeq = await cursorSeq(ctx, 'since_event_id', args.since_event_id);
  const beforeSeq = await cursorSeq(ctx, 'before_event_id', args.before_event_id);
  const order = listOrder(args.order);
  const limit = listLimit(args.limit);
  const preview = previewFlag(args.preview);
  const events = await ctx.logstream.list({ ...filters, afterSeq, beforeSeq, order, limit });
  const listed = preview ? events.map(previewed) : events;
  return capped({ events: listed, count: listed.length }, ctx.maxResponseChars);
}

export type WaitResult = { timed_out: boolean } & EventPage;

export async function eventWait(ctx: LogstreamContext, args: ToolArgs, signal?: AbortSignal): Promise<WaitResult> {
  const filters = queryFilters(args);
  const afterSeq = await cursorSeq(ctx, 'since_event_id', args.since_event_id);
  const timeoutMs = waitTimeoutMs(args.timeout_ms);
  const limit = listLimit(args.limit);
  const events = await ctx.logstream.waitForEvents({ ...filters, afterSeq, limit }, timeoutMs, signal);
  if (events.length === 0) return { timed_out: true, events: [], count: 0 };
  return capped({ timed_out: false, events, count: events.length }, ctx.maxResponseChars);
}

export async function artifactGet(ctx: LogstreamContext, args: ToolArgs): Promise<
  {
    artifact: { id: string; kind: string; sha256: string; size_bytes: number; content: string; created_by: string; created_at: string;
      origin_replica: string | null; metadata: Record<string, unknown> };
  }
> {
  const id = routingField('artifact_id', args.artifact_id, true)!;
  const a = await ctx.logstream.getArtifact(id);
  if (!a) throw new PalaceError('not_found', `artifact ${pyRepr(id)} not found`, { field: 'artifact_id', rule: 'known_artifact', details: { id } });
  return {
    artifact: { id: a.id, kind: a.kind, sha256: a.sha256, size_bytes: a.size_bytes, content: a.content, created_by: a.created_by, created_at: a.created_at,
      origin_replica: a.origin_replica, metadata: a.metadata },
  };
}

export async function meshPeers(ctx: LogstreamContext): Promise<Awaited<ReturnType<typeof meshEstate>>> {
  return meshEstate(ctx.logstream, ctx.mesh);
}
