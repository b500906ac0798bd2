/**
 * The nine coordination operations declared once (palace/operation.ts): their input and output
 * schemas, bound by the MCP tools (mcp/tools/coordination.ts), through them by the CLI's
 * `logstream`, `task` and `artifact` commands, and by the OpenAPI document where REST serves the
 * same payloads (the stream's events, `GET /sync/peers`). The schemas check the JSON types; the
 * rules with spec-exact messages that JSON Schema cannot say (blank or control-character routing
 * fields, sizes in code points and bytes, known cursors and artifacts) stay in validate.ts and
 * are listed as each operation's `rules`. `limit` and `timeout_ms` are clamped, never refused
 * for their size (docs/tools.md §9).
 */
import { Type } from 'typebox';
import type { TSchema } from 'typebox';
import { EVENT_STATUSES } from '../../core/validate.js';
import { nullable } from '../../core/schema.js';
import type { MeshEstate } from './estate.js';
import type { LogstreamContext } from './logstream.js';
import { artifactGet, artifactPut, eventAck, eventAppend, eventList, eventWait, meshPeers, patchSubmit, taskCreate } from './logstream.js';
import { ARTIFACT_KINDS } from './validate.js';
import { defineOperation } from '../operation.js';
import type { Runtime } from '../runtime.js';

const s = (description: string) => Type.String({ description });
const object = (description: string) => Type.Unsafe<Record<string, unknown>>({ type: 'object', description });
const anyObject = Type.Unsafe<Record<string, unknown>>({ type: 'object' });
const strings = (description?: string) => Type.Array(Type.String(), description === undefined ? {} : { description });
const strict = <P extends Record<string, TSchema>>(properties: P) => Type.Object(properties, { additionalProperties: false });

const STATUS_HINT = `One of: ${EVENT_STATUSES.join(', ')}.`;

/** The routing and content rules validate.ts checks with the spec's messages. */
const EVENT_RULES = ['non_empty_string', 'control_characters', 'max_length', 'event_type_pattern', 'one_of', 'null_bytes', 'max_bytes', 'json_serializable',
  'list_of_ids', 'known_artifact'];
const CURSOR_RULES = ['control_characters', 'known_event', 'one_of', 'positive_integer', 'non_negative', 'iso_date_or_utc_instant'];

export const EVENT = Type.Object({
  id: Type.String(),
  seq: Type.Integer(),
  origin_replica: Type.String(),
  origin_seq: Type.Integer(),
  hlc: Type.String(),
  type: Type.String(),
  stream: Type.String(),
  room: Type.String(),
  topic: nullable(Type.String()),
  from_agent: Type.String(),
  to_agent: nullable(Type.String()),
  correlation_id: nullable(Type.String()),
  branch: nullable(Type.String()),
  base_commit: nullable(Type.String()),
  status: nullable(Type.String()),
  artifact_ids: strings(),
  body: Type.String(),
  created_at: Type.String(),
  metadata: anyObject,
  body_truncated: Type.Optional(Type.Literal(true, { description: 'The body was shortened to its first 200 characters (preview).' })),
  body_length: Type.Optional(Type.Integer({ description: 'The whole body length in code points, when shortened.' })),
}, { description: 'A logstream event (docs/logstream.md §5).' });

const ARTIFACT_RECORD = Type.Object({
  id: Type.String(),
  kind: Type.String(),
  sha256: Type.String(),
  size_bytes: Type.Integer(),
  created_by: Type.String(),
  created_at: Type.String(),
  origin_replica: nullable(Type.String()),
  warnings: Type.Optional(strings('What a patch may get wrong when applied: CRLF line ends, no final newline.')),
});

const EVENT_PAGE = {
  events: Type.Array(EVENT),
  count: Type.Integer(),
  total: Type.Optional(Type.Integer({ description: 'Events matched before the response cap dropped some.' })),
  truncated: Type.Optional(Type.Literal(true)),
  notice: Type.Optional(Type.String()),
};
const EVENT_WRITE = Type.Object({ success: Type.Literal(true), event: EVENT });

const FILTERS = {
  stream: Type.Optional(s('Only this stream, e.g. project/myapp.')),
  room: Type.Optional(s('Only this room, e.g. delegation, patches.')),
  topic: Type.Optional(s('Only this topic.')),
  type: Type.Optional(s('Only this event type, e.g. task.request.')),
  to_agent: Type.Optional(s('Only events for this agent (also matches * broadcasts).')),
  from_agent: Type.Optional(s('Only events written by this agent.')),
  correlation_id: Type.Optional(s('Only events with this correlation id.')),
  status: Type.Optional(s(`Only this status. ${STATUS_HINT}`)),
  since_event_id: Type.Optional(s('Only events after this event id (resume cursor).')),
  since_created_at: Type.Optional(s('Only events created at or after this UTC instant (a window, not a cursor).')),
};
/** Where an event goes beyond its stream and room, as event_append and patch_submit take it. */
const ROUTING = {
  topic: Type.Optional(s('Groups related work under one name.')),
  to_agent: Type.Optional(s('Target agent, or * for broadcast.')),
  correlation_id: Type.Optional(s('Ties request, reply and ack together.')),
  branch: Type.Optional(s('Git branch.')),
  base_commit: Type.Optional(s('Commit the work started from.')),
};
const limit = (description: string) => Type.Optional(Type.Integer({ description, minimum: 1, maximum: 500, default: 50 }));

/** The MeshEstate of estate.ts as published (docs/logstream.md §8.9). */
const MESH_ESTATE = Type.Unsafe<MeshEstate>({
  type: 'object',
  description: 'docs/logstream.md §8.9: this replica, its configured peers with their last sync outcome and lag, and the origins it holds events from.',
  required: ['self', 'peers', 'unnamed_origins', 'origin_profiles', 'sync_interval_s', 'estate_source'],
  properties: {
    self: { type: 'object', required: ['replica_id', 'name', 'public_key', 'version_vector', 'profile'],
      properties: { replica_id: { type: 'string' }, name: { type: 'string' }, public_key: { type: 'string' },
        version_vector: { type: 'object', additionalProperties: { type: 'integer' } }, profile: { type: 'object' } } },
    peers: { type: 'array', items: { type: 'object', required: ['name', 'url'], properties: { name: { type: 'string' }, url: { type: 'string' } } } },
    unnamed_origins: { type: 'array', items: { type: 'string' } },
    origin_profiles: { type: 'object' },
    sync_interval_s: { type: 'number' },
    estate_source: { type: 'object', required: ['in_process', 'published_at', 'writer_alive'],
      properties: { in_process: { type: 'boolean' }, published_at: { anyOf: [{ type: 'string' }, { type: 'null' }] }, writer_alive: { type: 'boolean' } } },
  },
});

/** The logstream as a call sees it; results are capped to the MCP response size, the faces' common bound. */
const logstreamContext = (rt: Runtime): LogstreamContext => ({ ...rt.logstreamContext, maxResponseChars: rt.config.mcp.maxResponseChars });

export const taskCreateOperation = defineOperation({
  name: 'task_create',
  input: strict({
    project: s('Project routing name.'),
    from_agent: s('You, the requesting agent.'),
    to_agent: s('The worker agent.'),
    goal: s('Exact task goal (stored verbatim).'),
    branch: s('Git branch for the work.'),
    base_commit: s('Commit id (7–64 hex) the work starts from; not a branch or tag.'),
    done: s('Exact definition of done (stored verbatim).'),
  }),
  output: Type.Object({ success: Type.Literal(true), task: EVENT, handoff: Type.String() }),
  rules: [...EVENT_RULES, 'git_object_id'],
  context: logstreamContext,
  run: (input, ctx) => taskCreate(ctx, input),
});

export const eventAppendOperation = defineOperation({
  name: 'event_append',
  input: strict({
    type: s('Event type, e.g. task.request, task.reply, patch.ready.'),
    stream: s('Logical stream, e.g. project/myapp.'),
    room: s('Sub-channel: delegation, patches, reviews, status.'),
    topic: ROUTING.topic,
    from_agent: s('You, the writer.'),
    to_agent: ROUTING.to_agent,
    correlation_id: ROUTING.correlation_id,
    branch: ROUTING.branch,
    base_commit: ROUTING.base_commit,
    status: Type.Optional(s(STATUS_HINT)),
    body: Type.Optional(s('Verbatim content (≤ 256 KiB).')),
    metadata: Type.Optional(object('Extra structured fields (≤ 64 KiB as JSON).')),
    artifact_ids: Type.Optional(strings('Ids of stored artifacts this event cites.')),
  }),
  output: EVENT_WRITE,
  rules: EVENT_RULES,
  context: logstreamContext,
  run: (input, ctx) => eventAppend(ctx, input),
});

export const eventListOperation = defineOperation({
  name: 'event_list',
  input: strict({
    ...FILTERS,
    before_event_id: Type.Optional(s('Only events before this event id.')),
    order: Type.Optional(s('asc (default) or desc.')),
    limit: limit('Maximum events (default 50, capped at 500).'),
    preview: Type.Optional(Type.Boolean({ description: 'Shorten bodies longer than 200 characters.' })),
  }),
  output: Type.Object(EVENT_PAGE),
  clamped: ['limit'],
  rules: CURSOR_RULES,
  context: logstreamContext,
  run: (input, ctx) => eventList(ctx, input),
});

export const eventWaitOperation = defineOperation({
  name: 'event_wait',
  input: strict({
    ...FILTERS,
    timeout_ms: Type.Optional(
      Type.Integer({ description: 'How long to wait in milliseconds (clamped to 300000).', minimum: 0, maximum: 300000, default: 60000 }),
    ),
    limit: limit('Maximum events returned (default 50, capped at 500).'),
  }),
  output: Type.Object({ timed_out: Type.Boolean(), ...EVENT_PAGE }),
  clamped: ['limit', 'timeout_ms'],
  rules: CURSOR_RULES,
  context: (rt, call) => ({ ...logstreamContext(rt), signal: call.signal }),
  run: (input, { signal, ...ctx }) => eventWait(ctx, input, signal),
});

export const eventAckOperation = defineOperation({
  name: 'event_ack',
  input: strict({
    event_id: s('Event to acknowledge.'),
    from_agent: s('You, the acknowledging agent.'),
    status: Type.Optional(s(STATUS_HINT)),
    body: Type.Optional(s('Verbatim notes.')),
    topic: Type.Optional(s("Topic override (default: the target's topic).")),
  }),
  output: EVENT_WRITE,
  rules: [...EVENT_RULES, 'known_event'],
  context: logstreamContext,
  run: (input, ctx) => eventAck(ctx, input),
});

export const artifactPutOperation = defineOperation({
  name: 'artifact_put',
  input: strict({
    kind: Type.Unsafe<string>({ type: 'string', description: 'Artifact kind.', enum: [...ARTIFACT_KINDS] }),
    content: s('Exact content (UTF-8 text, ≤ 4 MiB).'),
    created_by: s('You, the writer.'),
    metadata: Type.Optional(object('Extra fields, e.g. branch, base_commit.')),
  }),
  output: Type.Object({ success: Type.Literal(true), artifact: ARTIFACT_RECORD }),
  enumMessages: { kind: (v) => `kind=${JSON.stringify(v)} is not one of: ${ARTIFACT_KINDS.join(', ')}` },
  rules: ['one_of', 'non_empty_string', 'control_characters', 'null_bytes', 'max_bytes', 'json_serializable'],
  context: logstreamContext,
  run: (input, ctx) => artifactPut(ctx, input),
});

export const artifactGetOperation = defineOperation({
  name: 'artifact_get',
  input: strict({ artifact_id: s('Artifact id.') }),
  output: Type.Object({
    artifact: Type.Object({
      id: Type.String(),
      kind: Type.String(),
      sha256: Type.String(),
      size_bytes: Type.Integer(),
      content: Type.String(),
      created_by: Type.String(),
      created_at: Type.String(),
      origin_replica: nullable(Type.String()),
      metadata: anyObject,
    }),
  }),
  rules: ['non_empty_string', 'control_characters', 'known_artifact'],
  context: logstreamContext,
  run: (input, ctx) => artifactGet(ctx, input),
});

export const patchSubmitOperation = defineOperation({
  name: 'patch_submit',
  input: strict({
    content: s('Unified diff, byte-exact, ending with a newline.'),
    from_agent: s('You, the submitting agent.'),
    stream: s('Logical stream.'),
    room: Type.Optional(s('Sub-channel (default patches).')),
    ...ROUTING,
    correlation_id: Type.Optional(s("The task's correlation id.")),
    base_commit: Type.Optional(s('Commit the patch applies to.')),
    body: Type.Optional(s('Verbatim notes.')),
    metadata: Type.Optional(object('Stored on both the artifact and the event.')),
  }),
  output: Type.Object({ success: Type.Literal(true), artifact: ARTIFACT_RECORD, event: EVENT }),
  rules: EVENT_RULES,
  context: logstreamContext,
  run: (input, ctx) => patchSubmit(ctx, input),
});

export const meshPeersOperation = defineOperation({
  name: 'mesh_peers',
  input: strict({}),
  output: MESH_ESTATE,
  context: logstreamContext,
  run: (_input, ctx) => meshPeers(ctx),
});
