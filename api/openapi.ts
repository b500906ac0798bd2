/**
 * The OpenAPI 3.1 document of the HTTP API (`GET /v1/openapi.json`), generated from the route rows
 * bound to operations (api/bind.ts: search, taxonomy and the job starts, whose inputs are the
 * objects the MCP tools publish) and the REST-only requests of api/requests.ts. The routes validate with these
 * very objects (api/validate.ts), request bodies and query parameters are derived from them,
 * and the e2e fuzzer checks real responses against the documented ones, so the document cannot
 * drift from what the server does. `/mcp` (JSON-RPC, described by the MCP tools' own schemas)
 * and the static dashboard are not part of it.
 */
import { ERROR_CODES } from '../core/errors.js';
import type { JsonSchema } from '../core/schema.js';
import { DELETE_BY_SOURCE_REQUEST, JOB_REQUEST_RULES, MINE_REQUEST, REVERT_REQUEST, SYNC_REQUEST } from '../jobs/requests.js';
import { JOB_STARTED } from '../jobs/operations.js';
import { JOB_KINDS, JOB_TRIGGERS, MINE_MODES } from '../jobs/job.js';
import { jsonSchemaOf } from '../core/schema.js';
import { routeScope } from '../core/scopes.js';
import { SEARCH_HIT, searchOperation } from '../palace/search/search.js';
import { taxonomyOperation } from '../palace/system/status.js';
import { EVENT, meshPeersOperation } from '../palace/logstream/operations.js';
import type { RouteBinding } from './bind.js';
import { ADD_SOURCE_REQUEST, ADD_SOURCE_RULES, AUDIT_QUERY, LIST_QUERY } from './requests.js';
import { JOB_ROUTES } from './routes/jobs.js';
import { PALACE_ROUTES } from './routes/palace.js';

type Schema = JsonSchema;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const str = (description?: string, extra: Schema = {}): Schema => ({ type: 'string', ...(description ? { description } : {}), ...extra });
const int = (description?: string, extra: Schema = {}): Schema => ({ type: 'integer', ...(description ? { description } : {}), ...extra });
const bool = (description: string): Schema => ({ type: 'boolean', description });
const counts: Schema = { type: 'object', additionalProperties: { type: 'integer' } };

type SchemaName = 'AddSourceRequest' | 'RevertRequest';

const SCHEMAS: Record<string, Schema> = {
  MineRequest: jsonSchemaOf(MINE_REQUEST),
  SyncRequest: jsonSchemaOf(SYNC_REQUEST),
  DeleteBySourceRequest: jsonSchemaOf(DELETE_BY_SOURCE_REQUEST),
  SearchRequest: jsonSchemaOf(searchOperation.input),
  AddSourceRequest: ADD_SOURCE_REQUEST,
  RevertRequest: jsonSchemaOf(REVERT_REQUEST),
  Error: {
    type: 'object',
    description: 'Every error: a message, a machine code, and for bad input the field and the rule it broke.',
    required: ['error'],
    properties: {
      error: str('Human-readable message.'),
      code: str('Machine code (core/errors.ts).', { enum: [...ERROR_CODES] }),
      field: str('The input field at fault.'),
      rule: str('The rule the field broke.'),
      retryable: bool('Whether the same request may succeed later; Retry-After is sent exactly when true.'),
      job_id: str('already_running: the running job.'),
    },
  },
  JobProgress: {
    type: 'object',
    required: ['job_id', 'kind', 'lock_key', 'state', 'started_at', 'updated_at', 'files_total', 'files_seen', 'files_skipped', 'files_mined',
      'drawers_written', 'errors', 'rate', 'eta_s', 'recent_errors'],
    properties: {
      job_id: str(),
      kind: str(undefined, { enum: [...JOB_KINDS] }),
      lock_key: str(),
      source: str(
        'What the job works on: the directory or git URL mined, the project directory of a sync, the source_file of a delete (absent on records older than this field).',
      ),
      ref: str('The git ref mined.'),
      wing: str('The wing the job was given.'),
      mode: str('The mine mode.', { enum: [...MINE_MODES] }),
      agent: str('Whose writes a revert undoes.'),
      session: str('The session whose writes a revert undoes.'),
      since: str('A revert undoes the writes at or after this instant.', { format: 'date-time' }),
      trigger: str('What started the job: a user (CLI, REST, MCP), a push webhook, or a refresh of a registered source.', { enum: [...JOB_TRIGGERS] }),
      state: str(undefined, { enum: ['running', 'completed', 'failed', 'cancelled'] }),
      started_at: str(undefined, { format: 'date-time' }),
      updated_at: str(undefined, { format: 'date-time' }),
      finished_at: str(undefined, { format: 'date-time' }),
      files_total: int(),
      files_seen: int(),
      files_skipped: int(),
      files_mined: int(),
      drawers_written: int(),
      errors: int(),
      rate: { type: 'number', description: 'Files per second since the start.' },
      eta_s: { type: ['number', 'null'], description: 'Seconds to completion at the current rate.' },
      last_file: str(),
      recent_errors: { type: 'array', items: { type: 'object', required: ['file', 'error'], properties: { file: str(), error: str() } } },
      result: { type: 'object', description: "The finished job's summary (only on GET /v1/jobs/{id})." },
      error: str(),
    },
  },
  JobList: { type: 'object', required: ['jobs'], properties: { jobs: { type: 'array', items: ref('JobProgress') } } },
  JobStarted: {
    type: 'object',
    required: ['job_id', 'progress'],
    properties: { job_id: str(), progress: ref('JobProgress'), events_url: str("SSE stream of this job's progress.") },
  },
  SearchHit: jsonSchemaOf(SEARCH_HIT),
  SearchResult: jsonSchemaOf(searchOperation.output),
  Status: {
    type: 'object',
    required: ['palace', 'profile', 'total_drawers', 'wings', 'rooms', 'backend', 'jobs_running'],
    properties: { palace: str(), profile: str(), total_drawers: int(), wings: counts, rooms: counts, backend: str(), jobs_running: int() },
  },
  Taxonomy: jsonSchemaOf(taxonomyOperation.output),
  EngineHealth: {
    type: 'object',
    required: ['status', 'engine', 'latency_ms'],
    properties: { status: str(undefined, { enum: ['up', 'down'] }), engine: str(), latency_ms: int(), error: str() },
  },
  Health: {
    type: 'object',
    required: ['status', 'profile', 'engines', 'checked_at'],
    properties: { status: str(undefined, { enum: ['ok', 'down'] }), profile: str(), engines: { type: 'object', additionalProperties: ref('EngineHealth') },
      checked_at: str() },
  },
  SourceRefresh: {
    type: 'object',
    required: ['trigger', 'requested_at', 'state'],
    properties: {
      trigger: str(undefined, { enum: ['webhook', 'manual'] }),
      requested_at: str(undefined, { format: 'date-time' }),
      job_id: str(),
      state: str(undefined, { enum: ['waiting', 'running', 'completed', 'failed', 'cancelled'] }),
      finished_at: str(undefined, { format: 'date-time' }),
      commit: str('Commit mined (git).'),
      drawers_written: int(),
      error: str(),
    },
  },
  RegisteredSource: {
    type: 'object',
    required: ['source_id', 'kind', 'location', 'mode', 'added_by', 'added_at'],
    properties: {
      source_id: str(),
      kind: str(undefined, { enum: ['git', 'dir'] }),
      location: str(),
      match_key: str('Normalised repository identity push payloads are matched on.'),
      ref: str(),
      wing: str(),
      mode: str(),
      added_by: str(),
      added_at: str(undefined, { format: 'date-time' }),
      updated_by: str('Who last registered the source again (absent while unchanged or when unknown).'),
      updated_at: str('When the source was last registered again.', { format: 'date-time' }),
      last_refresh: ref('SourceRefresh'),
    },
  },
  SourceList: { type: 'object', required: ['sources'], properties: { sources: { type: 'array', items: ref('RegisteredSource') } } },
  HookAccepted: {
    type: 'object',
    required: ['provider', 'event', 'sources'],
    properties: {
      provider: str(undefined, { enum: ['github', 'gitlab'] }),
      event: str(),
      ref: str(),
      after: { type: ['string', 'null'] },
      ignored: str('Why nothing was scheduled.'),
      sources: { type: 'array', items: { type: 'object', required: ['source_id', 'request_id'], properties: { source_id: str(), request_id: str() } } },
    },
  },
  Notifications: {
    type: 'object',
    required: ['deliveries', 'dead_letters'],
    properties: {
      deliveries: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'job_id', 'kind', 'state', 'status', 'attempts', 'delivered'],
          properties: { id: str(), job_id: str(), kind: str(), state: str(), status: str(undefined, { enum: ['delivered', 'pending', 'dead'] }),
            attempts: int(), delivered: { type: 'array', items: str() }, error: str(), updated_at: str() },
        },
      },
      dead_letters: {
        type: 'array',
        items: { type: 'object', required: ['queue', 'id', 'name', 'failedReason', 'attemptsMade'],
          properties: { queue: str(), id: str(), name: str(), data: {}, failedReason: str(), attemptsMade: int(), finishedOn: int() } },
      },
    },
  },
  MeshEstate: jsonSchemaOf(meshPeersOperation.output),
};

/** A frame a stream sends instead of its data when a read failed; the stream goes on. */
const STREAM_ERROR: Schema = { type: 'object', required: ['error', 'code', 'retryable'],
  properties: { error: str(), code: str(), retryable: { type: 'boolean' } } };
const orStreamError = (schema: Schema): Schema => ({ anyOf: [schema, STREAM_ERROR] });
/** A logstream event (docs/logstream.md §5); on the dashboard with preview keys when its body was shortened. */
const LOGSTREAM_EVENT: Schema = jsonSchemaOf(EVENT);

/** A job row of the dashboard (api/dashboard-jobs.ts): its progress, the rate series of a job seen running, the Temporal UI link. */
const DASHBOARD_JOB: Schema = {
  allOf: [ref('JobProgress'), {
    type: 'object',
    properties: {
      rate_series: { type: 'array', description: 'Files per second between consecutive progress records, oldest first.',
        items: { type: 'object', required: ['at', 'rate'], properties: { at: str(undefined, { format: 'date-time' }), rate: { type: 'number' } } } },
      workflow_url: str("The job's workflow in the Temporal UI (cluster profile, MEMPALACE_TEMPORAL_UI_URL set)."),
    },
  }],
};
const nullableMs: Schema = { type: ['number', 'null'], description: 'Milliseconds; null in a minute without calls.' };
const MINUTE_SUMMARY: Schema = { type: 'object', required: ['count', 'errors', 'p50_ms', 'p95_ms'],
  properties: { count: int(), errors: int(), p50_ms: nullableMs, p95_ms: nullableMs } };
/** The last hour of this server's latencies and errors (api/metrics-history.ts), oldest minute first. */
const DASHBOARD_METRICS: Schema = {
  type: 'object',
  required: ['minutes'],
  properties: {
    minutes: { type: 'array',
      items: { type: 'object', required: ['at', 'search', 'tools', 'http'],
        properties: { at: str(undefined, { format: 'date-time' }), search: MINUTE_SUMMARY, tools: MINUTE_SUMMARY, http: MINUTE_SUMMARY } } },
  },
};

/** The events of the dashboard stream, by name: the data each frame carries (api/routes/dashboard.ts sends exactly these). */
export const DASHBOARD_EVENTS = {
  jobs: orStreamError({ type: 'object', required: ['jobs'], properties: { jobs: { type: 'array', items: DASHBOARD_JOB } } }),
  stats: orStreamError({
    type: 'object',
    required: ['palace', 'profile', 'total_drawers', 'wings', 'rooms', 'backend', 'sse_clients', 'sse_max_clients'],
    properties: { palace: str(), profile: str(), total_drawers: int(), wings: counts, rooms: counts, backend: str(), sse_clients: int(),
      sse_max_clients: int() },
  }),
  sources: orStreamError(ref('SourceList')),
  notifications: orStreamError(ref('Notifications')),
  metrics: DASHBOARD_METRICS,
  health: orStreamError(ref('Health')),
  queues: orStreamError({ type: 'object', required: ['queues'], properties: { queues: counts } }),
  logstream: LOGSTREAM_EVENT,
} satisfies Record<string, Schema>;
export type DashboardEvent = keyof typeof DASHBOARD_EVENTS;

const JOB_EVENTS = { progress: ref('JobProgress'), end: ref('JobProgress'), error: STREAM_ERROR };
const LOGSTREAM_EVENTS = { logstream: LOGSTREAM_EVENT, error: STREAM_ERROR };

const json = (schema: Schema, description: string) => ({ description, content: { 'application/json': { schema } } });
/** An SSE response; `x-sse-events` gives, per event name, the schema of its JSON `data`. */
const sse = (description: string, events: Record<string, Schema>) => ({ description, content: { 'text/event-stream': { schema: { type: 'string' } } },
  'x-sse-events': events });
const err = (description: string) => json(ref('Error'), description);
const AUTH_ERRORS = { 401: err('Missing or unknown bearer token.'),
  403: err('The token lacks the scope (core/scopes.ts), the server is read-only (code read_only) and the route writes, or the Host/Origin is not allowed.'),
  429: err('Rate limit of this token exceeded; see Retry-After.') };
/** Bad input; `x-rules` lists the rules beyond the request schema by which the route may refuse a schema-valid request. */
const badInput = (rules: readonly string[] = []) => ({ ...err('Bad input: the field and rule are named.'), 'x-rules': [...rules] });
const WRITE_ERRORS = { ...AUTH_ERRORS, 413: err('Request body too large.') };
const q = (name: string, schema: Schema, description?: string) => ({ name, in: 'query', required: false, schema, ...(description ? { description } : {}) });
const jobId = { name: 'id', in: 'path', required: true, schema: str() };
const lastEventId = (description: string) => ({ name: 'Last-Event-ID', in: 'header', required: false, schema: str(), description });

const LOGSTREAM_FILTERS = ['stream', 'room', 'topic', 'type', 'to_agent', 'from_agent', 'correlation_id', 'status'];

/** A JSON request body of a component; required exactly when the model has required fields (a missing body is `{}`). */
const body = (name: SchemaName) => ({
  required: ((SCHEMAS[name]!.required ?? []) as string[]).length > 0,
  content: { 'application/json': { schema: ref(name) } },
});

/** The query parameters of a request model, one per property. */
function queryParams(model: Schema) {
  const required = (model.required ?? []) as string[];
  return Object.entries(model.properties as Record<string, Schema>).map(([name, schema]) => {
    const { description, ...rest } = schema;
    return { name, in: 'query', required: required.includes(name), schema: rest, ...(description ? { description } : {}) };
  });
}

/** Components that name an operation's schemas; other schemas of a bound route are inlined. */
const COMPONENT_OF = new Map<object, string>([
  [searchOperation.input, 'SearchRequest'],
  [searchOperation.output, 'SearchResult'],
  [taxonomyOperation.output, 'Taxonomy'],
  [MINE_REQUEST, 'MineRequest'],
  [SYNC_REQUEST, 'SyncRequest'],
  [DELETE_BY_SOURCE_REQUEST, 'DeleteBySourceRequest'],
  [JOB_STARTED, 'JobStarted'],
]);
const schemaOf = (schema: object): Schema => (COMPONENT_OF.has(schema) ? ref(COMPONENT_OF.get(schema)!) : jsonSchemaOf(schema as never));

/** The documented operation of a bound route (api/bind.ts): its input, its output, its rules beyond the schema. */
function boundRoute(row: RouteBinding) {
  const op = row.operation;
  const input = jsonSchemaOf(op.input);
  const takesInput = Object.keys(input.properties as object).length > 0;
  const success = row.accepted
    ? { 202: json(schemaOf(op.output), 'Started; poll GET /v1/jobs/{id} or follow its events.'), 409: err(row.accepted.conflict) }
    : { 200: json(schemaOf(op.output), "The operation's result.") };
  return {
    summary: row.summary,
    tags: [row.tag ?? 'palace'],
    'x-scope': routeScope(row.method, row.path),
    // Inputs whose published bounds are clamped to, never refused (docs/tools.md §2.5).
    ...(op.clamped && op.clamped.length > 0 ? { 'x-clamped': [...op.clamped] } : {}),
    ...(row.from === 'query'
      ? (takesInput ? { parameters: queryParams(input) } : {})
      : { requestBody: { required: ((input.required ?? []) as string[]).length > 0, content: { 'application/json': { schema: schemaOf(op.input) } } } }),
    responses: {
      ...success,
      ...(takesInput ? { 400: badInput(op.rules) } : {}),
      ...(row.from === 'body' ? { 413: err('Body too large.') } : {}),
      ...AUTH_ERRORS,
    },
  };
}

/** The paths of the bound routes, one item per path with a member per method. */
function boundPaths(rows: readonly RouteBinding[]) {
  const paths: Record<string, Record<string, ReturnType<typeof boundRoute>>> = {};
  for (const row of rows) (paths[row.path] ??= {})[row.method] = boundRoute(row);
  return paths;
}

export const OPENAPI_DOCUMENT = {
  openapi: '3.1.0',
  info: {
    title: 'MemPalace HTTP API',
    version: '1',
    description:
      'Jobs (mine, sync, delete_by_source), palace status, taxonomy and search, the logstream live tail, the mesh estate, health and metrics. Every route needs `Authorization: Bearer <token>` (except /healthz); `x-scope` says which scope. Agents use MCP at /mcp with the same tokens.',
  },
  servers: [{ url: '/' }],
  security: [{ bearer: [] }],
  tags: [{ name: 'jobs' }, { name: 'palace' }, { name: 'sources' }, { name: 'logstream' }, { name: 'ops' }],
  paths: {
    '/v1/openapi.json': {
      get: { summary: 'This document.', tags: ['ops'], security: [], responses: { 200: json({ type: 'object' }, 'OpenAPI 3.1 document.') } },
    },
    '/v1/status': {
      get: { summary: 'Drawer counts per wing and room, running jobs.', tags: ['palace'], 'x-scope': 'read',
        responses: { 200: json(ref('Status'), 'Palace status.'), ...AUTH_ERRORS } },
    },
    ...boundPaths(PALACE_ROUTES),
    '/v1/jobs': {
      get: { summary: 'Recent jobs, newest first.', tags: ['jobs'], 'x-scope': 'read', parameters: queryParams(LIST_QUERY),
        responses: { 200: json(ref('JobList'), 'Jobs.'), 400: badInput(), ...AUTH_ERRORS } },
    },
    ...boundPaths(JOB_ROUTES),
    '/v1/jobs/{id}': {
      get: { summary: "One job's progress (and result when finished).", tags: ['jobs'], 'x-scope': 'read', parameters: [jobId],
        responses: { 200: json(ref('JobProgress'), 'Progress.'), 404: err('No such job.'), ...AUTH_ERRORS } },
    },
    '/v1/jobs/{id}/cancel': {
      post: { summary: 'Cancel a running job (a finished one is returned as is).', tags: ['jobs'], 'x-scope': 'write', parameters: [jobId],
        responses: { 200: json(ref('JobProgress'), 'Progress after the cancel request.'), 404: err('No such job.'), ...AUTH_ERRORS } },
    },
    '/v1/jobs/{id}/events': {
      get: {
        summary: 'Progress snapshots as Server-Sent Events (`event: progress`, `id` = snapshot sequence); ends with `event: end` once the job finished.',
        tags: ['jobs'],
        'x-scope': 'read',
        parameters: [jobId, lastEventId('Resume after this snapshot sequence.')],
        responses: { 200: sse('Progress stream.', JOB_EVENTS), 400: err('Bad Last-Event-ID.'), 404: err('No such job.'),
          503: { description: 'Too many open streams; see Retry-After.' }, ...AUTH_ERRORS },
      },
    },
    '/v1/sources': {
      get: { summary: 'Registered sources with their latest refresh.', tags: ['sources'], 'x-scope': 'read',
        responses: { 200: json(ref('SourceList'), 'Sources.'), ...AUTH_ERRORS } },
      post: {
        summary: 'Register (or re-register) a git repository or directory the palace follows.',
        tags: ['sources'],
        'x-scope': 'write',
        requestBody: body('AddSourceRequest'),
        responses: { 201: json(ref('RegisteredSource'), 'Registered.'), 400: badInput(ADD_SOURCE_RULES), ...WRITE_ERRORS },
      },
    },
    '/v1/sources/{id}': {
      get: { summary: 'One registered source.', tags: ['sources'], 'x-scope': 'read', parameters: [jobId],
        responses: { 200: json(ref('RegisteredSource'), 'Source.'), 404: err('No such source.'), ...AUTH_ERRORS } },
      delete: { summary: 'Stop following a source (its drawers stay).', tags: ['sources'], 'x-scope': 'write', parameters: [jobId],
        responses: { 200: json({ type: 'object', required: ['removed'], properties: { removed: str() } }, 'Removed.'), 404: err('No such source.'),
          ...AUTH_ERRORS } },
    },
    '/v1/sources/{id}/refresh': {
      post: { summary: 'Refresh a source now: an incremental mine.', tags: ['sources'], 'x-scope': 'write', parameters: [jobId],
        responses: { 202: json(ref('JobStarted'), 'Started.'), 404: err('No such source.'), 409: err('A job already runs on this source; job_id names it.'),
          ...AUTH_ERRORS } },
    },
    '/v1/hooks/git': {
      post: {
        summary:
          'GitHub / GitLab push webhook: refreshes the registered sources of the pushed repository and ref (debounced per source). Authenticated by MEMPALACE_WEBHOOK_SECRET (X-Hub-Signature-256 or X-Gitlab-Token), not a bearer token.',
        tags: ['sources'],
        security: [],
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
        responses: {
          202: json(ref('HookAccepted'), 'Accepted; refreshes requested for the matched sources.'),
          400: err(
            'Not a GitHub/GitLab delivery, no delivery id (X-GitHub-Delivery, X-Gitlab-Event-UUID), a malformed payload, or a signed GitHub push older than 24 h (webhook_stale).',
          ),
          401: err('Signature or token does not match; nothing was scheduled.'),
          409: err('A replayed delivery (same delivery id or same body within 24 h, rule webhook_replay); nothing was scheduled.'),
          413: err('Request body over 25 MiB.'),
        },
      },
    },
    '/v1/notifications': {
      get: { summary: 'Recent job-end notification deliveries and the dead letters of the short-job queues.', tags: ['ops'], 'x-scope': 'read',
        parameters: queryParams(LIST_QUERY), responses: { 200: json(ref('Notifications'), 'Deliveries.'), 400: badInput(), ...AUTH_ERRORS } },
    },
    '/v1/dead-letters/{queue}/{id}/retry': {
      post: {
        summary: 'Put a dead letter back in its queue with a fresh set of attempts.',
        tags: ['ops'],
        'x-scope': 'write',
        parameters: [{ name: 'queue', in: 'path', required: true, schema: str(undefined, { enum: ['trigger', 'notification'] }) }, jobId],
        responses: { 200: json({ type: 'object', required: ['retried', 'queue'], properties: { retried: str(), queue: str() } }, 'Retried.'),
          400: err('No such dead letter.'), ...AUTH_ERRORS },
      },
    },
    '/v1/audit': {
      get: { summary: 'The audit trail of writes, newest first, filtered by identity, wing, tool, session and time.', tags: ['ops'], 'x-scope': 'admin',
        parameters: queryParams(AUDIT_QUERY),
        responses: { 200: json({ type: 'object', required: ['records'], properties: { records: { type: 'array', items: { type: 'object' } } } }, 'Records.'),
          400: badInput(['iso_date_or_utc_instant']), ...AUTH_ERRORS } },
    },
    '/v1/revert': {
      post: {
        summary: "Start a revert job: undo one agent's writes (by session, time, wing), newest first; later writes by others are reported as "
          + 'conflicts and kept. The same request (or revert_id) goes on with an interrupted revert; a dry run answers at once with the plan.',
        tags: ['ops'],
        'x-scope': 'admin',
        requestBody: body('RevertRequest'),
        responses: {
          200: json({ type: 'object' }, 'Dry run: what would be changed, and the conflicts.'),
          202: json({ allOf: [ref('JobStarted'), { type: 'object', required: ['revert_id'], properties: { revert_id: str() } }] }, 'Started.'),
          400: badInput(JOB_REQUEST_RULES.revert),
          409: err("A revert of this agent's writes already runs; job_id names it."),
          ...WRITE_ERRORS,
        },
      },
    },
    '/v1/dashboard/stream': {
      get: {
        summary: `Everything the ops dashboard shows, multiplexed as Server-Sent Events: ${
          Object.keys(DASHBOARD_EVENTS).map((e) => `\`${e}\``).join(', ')
        } (\`queues\` where the profile has queues).`,
        tags: ['ops'],
        'x-scope': 'read',
        responses: { 200: sse('Dashboard stream.', DASHBOARD_EVENTS), 503: { description: 'Too many open streams; see Retry-After.' }, ...AUTH_ERRORS },
      },
    },
    '/logstream/stream': {
      get: {
        summary: 'Live tail of the logstream (docs/logstream.md §7.2): replay after the cursor, then live events (`event: logstream`).',
        tags: ['logstream'],
        'x-scope': 'read',
        parameters: [...LOGSTREAM_FILTERS.map((n) => q(n, str())),
          q('since_event_id', str(), 'Cursor; else the Last-Event-ID header; else start at the newest event.'), lastEventId('Resume after this event id.')],
        responses: { 200: sse('Event stream.', LOGSTREAM_EVENTS), 400: err('Bad filter or unknown cursor.'),
          503: { description: 'Too many open streams; Retry-After: 5.' }, ...AUTH_ERRORS },
      },
    },
    '/sync/peers': {
      get: { summary: 'The mesh estate (docs/logstream.md §8.9).', tags: ['logstream'], 'x-scope': 'read',
        responses: { 200: json(ref('MeshEstate'), 'Estate.'), ...AUTH_ERRORS } },
    },
    '/sync/version_vector': {
      get: {
        summary: "Replication (docs/logstream.md §7.3): this replica's id, version vector { origin: highest origin_seq }, profile and known profiles.",
        tags: ['logstream'],
        'x-scope': 'replicate',
        responses: {
          200: json({ type: 'object', required: ['replica_id', 'public_key', 'version_vector', 'profile', 'profiles'],
            properties: { replica_id: str(), public_key: str(), version_vector: { type: 'object', additionalProperties: int() }, profile: { type: 'object' },
              profiles: { type: 'object' } } }, 'Version vector.'),
          ...AUTH_ERRORS,
        },
      },
    },
    '/sync/ops': {
      get: {
        summary: 'Replication (docs/logstream.md §7.3): full events authored by `origin` with origin_seq > `after`, ascending origin_seq.',
        tags: ['logstream'],
        'x-scope': 'replicate',
        parameters: [{ ...q('origin', str()), required: true }, q('after', int(), 'Default 0.'), q('limit', int(), 'Default and maximum 500.')],
        responses: {
          200: json({ type: 'object', required: ['origin', 'events', 'count'],
            properties: { origin: str(), events: { type: 'array', items: { type: 'object' } }, count: int() } }, 'One page of ops.'),
          400: err('Bad parameter.'),
          ...AUTH_ERRORS,
        },
      },
    },
    '/sync/artifact': {
      get: {
        summary: 'Replication (docs/logstream.md §7.3): one artifact with its content.',
        tags: ['logstream'],
        'x-scope': 'replicate',
        parameters: [{ ...q('id', str()), required: true }],
        responses: {
          200: json({ type: 'object', required: ['artifact'],
            properties: { artifact: { type: 'object', required: ['id', 'kind', 'sha256', 'size_bytes', 'content', 'created_by', 'created_at'] } } },
            'The artifact.'),
          400: err('Empty id.'),
          404: err('Unknown artifact.'),
          ...AUTH_ERRORS,
        },
      },
    },
    '/healthz': {
      get: { summary: 'Per-engine health; 503 when any engine is down.', tags: ['ops'], security: [],
        responses: { 200: json(ref('Health'), 'All engines up.'), 503: json(ref('Health'), 'At least one engine down.') } },
    },
    '/metrics': {
      get: { summary: 'Prometheus metrics.', tags: ['ops'], 'x-scope': 'read',
        responses: { 200: { description: 'Prometheus text format.', content: { 'text/plain': { schema: { type: 'string' } } } }, ...AUTH_ERRORS } },
    },
  },
  components: {
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer', description: 'A token from MEMPALACE_TOKENS_FILE or MEMPALACE_API_TOKENS; scopes read ⊂ write ⊂ admin.' },
    },
    schemas: SCHEMAS,
  },
} as const;
