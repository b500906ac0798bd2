/**
 * Coordination tools over the logstream (docs/tools.md §8): tasks, events, waits, acks, artifacts,
 * patches and the mesh estate. They never touch the drawer index, so they keep working while it
 * is unavailable.
 */
import { EVENT_STATUSES } from '../../core/validate.js';
import type { LogstreamContext } from '../../palace/logstream/logstream.js';
import { artifactGet, artifactPut, eventAck, eventAppend, eventList, eventWait, meshPeers, patchSubmit, taskCreate } from '../../palace/logstream/logstream.js';
import { ARTIFACT_KINDS } from '../../palace/logstream/validate.js';
import { ARTIFACT_RECORD, EVENT, arrayOf, bool, input, int, obj, output, shape, str, types } from '../schema.js';
import type { JsonSchema } from '../schema.js';
import type { ToolContext, ToolDef } from '../types.js';

const { S, I, B, O, SN } = types;

/**
 * The runtime's logstream context under MCP's response cap. Its `mesh` is the runtime's own
 * object, shared with REST, so the mesh profile cache (keyed by it) hits across calls.
 */
export function toolLogstreamContext(ctx: ToolContext): LogstreamContext {
  return { ...ctx.runtime.logstreamContext, maxResponseChars: ctx.runtime.config.mcp.maxResponseChars };
}

const STATUS_HINT = `One of: ${EVENT_STATUSES.join(', ')}.`;
const FILTERS: Record<string, JsonSchema> = {
  stream: str('Only this stream, e.g. project/myapp.'),
  room: str('Only this room, e.g. delegation, patches.'),
  topic: str('Only this topic.'),
  type: str('Only this event type, e.g. task.request.'),
  to_agent: str('Only events for this agent (also matches * broadcasts).'),
  from_agent: str('Only events written by this agent.'),
  correlation_id: str('Only events with this correlation id.'),
  status: str(`Only this status. ${STATUS_HINT}`),
  since_event_id: str('Only events after this event id (resume cursor).'),
  since_created_at: str('Only events created at or after this UTC instant (a window, not a cursor).'),
};
const EVENT_PAGE = shape({ events: arrayOf(EVENT), count: I });
const EVENT_WRITE = shape({ success: { const: true }, event: EVENT });

/** A logstream write: refused read-only, allowed to peer writers, stamped with the caller in `agentField`. */
function logstreamWrite(agentField: string): Pick<ToolDef, 'guards' | 'errorShape' | 'agentFields'> {
  return { guards: { mutating: true, peerWriterExempt: true, integritySafe: true, readOnlyRefused: true }, errorShape: 'success_false',
    agentFields: [agentField] };
}
const LOGSTREAM_READ: Pick<ToolDef, 'guards' | 'errorShape'> = { guards: { integritySafe: true }, errorShape: 'error' };

export const coordinationTools: ToolDef[] = [
  {
    name: 'mempalace_task_create',
    description:
      'Delegate work to another agent: creates one complete task.request (goal, definition of done, branch, base commit) in stream project/<project> and returns the stored event plus a one-line handoff to give the worker. Show the exact task to the user first; events are immutable.',
    inputSchema: input({
      project: str('Project routing name.'),
      from_agent: str('You, the requesting agent.'),
      to_agent: str('The worker agent.'),
      goal: str('Exact task goal (stored verbatim).'),
      branch: str('Git branch for the work.'),
      base_commit: str('Commit id (7–64 hex) the work starts from; not a branch or tag.'),
      done: str('Exact definition of done (stored verbatim).'),
    }, ['project', 'from_agent', 'to_agent', 'goal', 'branch', 'base_commit', 'done']),
    outputSchema: output(shape({ success: { const: true }, task: EVENT, handoff: S })),
    ...logstreamWrite('from_agent'),
    handler: (args, ctx) => taskCreate(toolLogstreamContext(ctx), args),
  },
  {
    name: 'mempalace_event_append',
    description:
      'Append one immutable coordination event (task.reply, patch.ready, status …) to a stream and room, optionally addressed to an agent (or * for all) and tied to a correlation id. Returns the stored event with its id and seq.',
    inputSchema: input({
      type: str('Event type, e.g. task.request, task.reply, patch.ready.'),
      stream: str('Logical stream, e.g. project/myapp.'),
      room: str('Sub-channel: delegation, patches, reviews, status.'),
      topic: str('Groups related work under one name.'),
      from_agent: str('You, the writer.'),
      to_agent: str('Target agent, or * for broadcast.'),
      correlation_id: str('Ties request, reply and ack together.'),
      branch: str('Git branch.'),
      base_commit: str('Commit the work started from.'),
      status: str(STATUS_HINT),
      body: str('Verbatim content (≤ 256 KiB).'),
      metadata: obj('Extra structured fields (≤ 64 KiB as JSON).'),
      artifact_ids: { type: 'array', items: { type: 'string' }, description: 'Ids of stored artifacts this event cites.' },
    }, ['type', 'stream', 'room', 'from_agent']),
    outputSchema: output(EVENT_WRITE),
    ...logstreamWrite('from_agent'),
    handler: (args, ctx) => eventAppend(toolLogstreamContext(ctx), args),
  },
  {
    name: 'mempalace_event_list',
    description:
      'List events with filters (all combined with AND), oldest first by default — the inbox sweep and history tool. Resume with since_event_id = the last id you processed; page backwards with before_event_id and order desc. preview true shortens long bodies.',
    inputSchema: input({
      ...FILTERS,
      before_event_id: str('Only events before this event id.'),
      order: str('asc (default) or desc.'),
      limit: int('Maximum events (default 50, capped at 500).', { minimum: 1, maximum: 500, default: 50 }),
      preview: bool('Shorten bodies longer than 200 characters.'),
    }),
    outputSchema: output(EVENT_PAGE),
    ...LOGSTREAM_READ,
    advisory: ['limit'],
    handler: (args, ctx) => eventList(toolLogstreamContext(ctx), args),
  },
  {
    name: 'mempalace_event_wait',
    description:
      'Wait (up to timeout_ms, default 60 s, max 5 min) until at least one matching event exists, then return the matches oldest first. A timeout is a normal result (timed_out: true): call again with since_event_id advanced, never in a tight loop.',
    inputSchema: input({
      ...FILTERS,
      timeout_ms: int('How long to wait in milliseconds (clamped to 300000).', { minimum: 0, maximum: 300000, default: 60000 }),
      limit: int('Maximum events returned (default 50, capped at 500).', { minimum: 1, maximum: 500, default: 50 }),
    }),
    outputSchema: output(shape({ timed_out: B, events: arrayOf(EVENT), count: I })),
    ...LOGSTREAM_READ,
    advisory: ['limit', 'timeout_ms'],
    handler: (args, ctx) => eventWait(toolLogstreamContext(ctx), args, ctx.signal),
  },
  {
    name: 'mempalace_event_ack',
    description:
      'Acknowledge an event (claimed, applied, failed …) by appending an event.ack routed back to its writer with the same correlation id; the original is never modified.',
    inputSchema: input({
      event_id: str('Event to acknowledge.'),
      from_agent: str('You, the acknowledging agent.'),
      status: str(STATUS_HINT),
      body: str('Verbatim notes.'),
      topic: str("Topic override (default: the target's topic)."),
    }, ['event_id', 'from_agent']),
    outputSchema: output(EVENT_WRITE),
    ...logstreamWrite('from_agent'),
    handler: (args, ctx) => eventAck(toolLogstreamContext(ctx), args),
  },
  {
    name: 'mempalace_artifact_put',
    description:
      "Store exact content (a patch, file, log, JSON or note, up to 4 MiB) for a handoff and get its id and sha256; cite the id in an event's artifact_ids. For a patch plus its patch.ready event in one call use mempalace_patch_submit.",
    inputSchema: input({
      kind: str('Artifact kind.', { enum: [...ARTIFACT_KINDS] }),
      content: str('Exact content (UTF-8 text, ≤ 4 MiB).'),
      created_by: str('You, the writer.'),
      metadata: obj('Extra fields, e.g. branch, base_commit.'),
    }, ['kind', 'content', 'created_by']),
    outputSchema: output(shape({ success: { const: true }, artifact: ARTIFACT_RECORD })),
    ...logstreamWrite('created_by'),
    enumMessages: { kind: (v) => `kind=${JSON.stringify(v)} is not one of: ${ARTIFACT_KINDS.join(', ')}` },
    handler: (args, ctx) => artifactPut(toolLogstreamContext(ctx), args),
  },
  {
    name: 'mempalace_artifact_get',
    description: "Fetch an artifact's exact content and metadata by id. Verify the content against its sha256 before applying it.",
    inputSchema: input({ artifact_id: str('Artifact id.') }, ['artifact_id']),
    outputSchema: output(
      shape({ artifact: shape({ id: S, kind: S, sha256: S, size_bytes: I, content: S, created_by: S, created_at: S, origin_replica: SN, metadata: O }) }),
    ),
    ...LOGSTREAM_READ,
    handler: (args, ctx) => artifactGet(toolLogstreamContext(ctx), args),
  },
  {
    name: 'mempalace_patch_submit',
    description:
      'Deliver a unified diff: stores it as a patch artifact and appends its patch.ready event (status ready, room patches by default) in one call. Tie it to the task with correlation_id.',
    inputSchema: input({
      content: str('Unified diff, byte-exact, ending with a newline.'),
      from_agent: str('You, the submitting agent.'),
      stream: str('Logical stream.'),
      room: str('Sub-channel (default patches).'),
      topic: str('Topic name.'),
      to_agent: str('Target agent or *.'),
      correlation_id: str("The task's correlation id."),
      branch: str('Git branch.'),
      base_commit: str('Commit the patch applies to.'),
      body: str('Verbatim notes.'),
      metadata: obj('Stored on both the artifact and the event.'),
    }, ['content', 'from_agent', 'stream']),
    outputSchema: output(shape({ success: { const: true }, artifact: ARTIFACT_RECORD, event: EVENT })),
    ...logstreamWrite('from_agent'),
    handler: (args, ctx) => patchSubmit(toolLogstreamContext(ctx), args),
  },
  {
    name: 'mempalace_mesh_peers',
    description:
      'The mesh as this replica sees it: its replica id, version vector and profile, the configured peers with their last sync outcome and lag (lag_events, lag_s), and origins it holds events from. Never includes tokens.',
    inputSchema: input(),
    outputSchema: output(shape({
      self: shape({ replica_id: S, name: S, version_vector: types.counts, profile: O }),
      peers: arrayOf(shape({ name: S, url: S })),
      unnamed_origins: arrayOf(S),
      origin_profiles: O,
      sync_interval_s: { type: 'number' },
    })),
    ...LOGSTREAM_READ,
    handler: (_args, ctx) => meshPeers(toolLogstreamContext(ctx)),
  },
];
