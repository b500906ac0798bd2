/**
 * The three long-running operations (docs/tools.md §3.4–§3.6, docs/decisions.md "Long-running
 * tools"), declared once over the request models of jobs/requests.ts. Each kind has two
 * declarations with the same input: the tool's, which starts the job and waits a bounded time
 * (MCP, the CLI), and the route's, which starts it and answers at once with the job's handle
 * (`POST /v1/jobs/<kind>`, 202). Bad input is refused by the schema or by the spec's rules
 * before the job engine is asked for anything, so a refused request writes no job record.
 */
import type { Static, TObject, TSchema } from 'typebox';
import { Type } from 'typebox';
import type { Config } from '../core/config.js';
import type { OperationCall } from '../palace/operation-call.js';
import { defineOperation } from '../palace/operation.js';
import type { Runtime } from '../palace/runtime.js';
import { sourcePolicy } from '../palace/sources/sources.js';
import type { SourceCredentials } from '../stores/ports/source-credentials.js';
import type { JobEngine, JobProgress, JobSpec } from './job.js';
import type { RequestCaller } from './requests.js';
import { DELETE_BY_SOURCE_REQUEST, deleteBySourceSpec, JOB_REQUEST_ENUM_MESSAGES, JOB_REQUEST_RULES, MINE_REQUEST, mineSpec, SYNC_REQUEST,
  syncSpec } from './requests.js';
import { progressView } from './job.js';
import { runJob } from './wait-for-job.js';

/** What a job operation works with: the engine, the call (its caller, roots, cancellation, progress listener), the source rules. */
export interface JobContext {
  jobs: JobEngine;
  call: OperationCall;
  /** How long the tool waits for the job before answering with a `running` handle. */
  waitMs: number;
  config: Pick<Config, 'allowedRoots' | 'sources'>;
  credentials: Pick<SourceCredentials, 'put'>;
}

function jobContext(rt: Runtime, call: OperationCall): JobContext {
  return { jobs: rt.jobs, call, waitMs: rt.config.mcp.jobWaitSeconds * 1000, config: rt.config, credentials: rt.stores.credentials };
}

/**
 * Who sends the request: sources within the server's roots, the token's roots and the MCP
 * client's roots; a mine that names no agent files under an HTTP caller's identity unless the
 * token is admin.
 */
async function requestCaller(ctx: JobContext): Promise<RequestCaller> {
  const { caller } = ctx.call;
  return {
    policy: sourcePolicy(ctx.config, { tokenRoots: caller?.roots, clientRoots: await ctx.call.clientRoots() }),
    agent: caller && !caller.scopes.includes('admin') ? caller.identity : undefined,
    credentials: ctx.credentials,
  };
}

const OBJECT = Type.Unsafe<Record<string, unknown>>({ type: 'object' });
const COUNTS = Type.Unsafe<Record<string, number>>({ type: 'object', additionalProperties: { type: 'integer' } });

/** Still running after the bounded wait: call again for the same source to see its progress. */
const JOB_RUNNING = Type.Object({ success: Type.Literal(true), status: Type.Literal('running'), job_id: Type.String(), progress: OBJECT });
/** Another job holds the source, or the job failed or was cancelled. */
const JOB_FAILED = Type.Object({
  success: Type.Literal(false),
  error: Type.String(),
  error_class: Type.Optional(Type.String()),
  job_id: Type.Optional(Type.String()),
  progress: Type.Optional(OBJECT),
  hint: Type.Optional(Type.String()),
});

/**
 * A tool's result: the finished job's summary (one of `finished`), a running handle or a failure.
 * Typed as the record the job engine hands back: the summary is the job kind's own result.
 */
const toolResult = (...finished: TSchema[]) => Type.Unsafe<Record<string, unknown>>(Type.Union([...finished, JOB_RUNNING, JOB_FAILED]));

/** The answer of a route that starts a job (api/openapi.ts documents it as `JobStarted`). */
export const JOB_STARTED = Type.Object({
  job_id: Type.String(),
  progress: Type.Unsafe<Omit<JobProgress, 'result'>>({ type: 'object' }),
  events_url: Type.String({ description: "SSE stream of this job's progress." }),
});

/** The handle a route answers with once its job has started. */
export function jobStarted(started: JobProgress): Static<typeof JOB_STARTED> {
  return { job_id: started.job_id, progress: progressView(started), events_url: `/v1/jobs/${started.job_id}/events` };
}

async function startJob(ctx: JobContext, spec: JobSpec): Promise<Static<typeof JOB_STARTED>> {
  return jobStarted(await ctx.jobs.start(spec));
}

/**
 * The two declarations of one job kind over one input: the tool's (start, then wait a bounded
 * time; `busy` is its answer when another job holds the source) and the route's (start, answer
 * with the handle).
 */
function jobOperations<In extends TObject>(kind: {
  name: string;
  input: In;
  finished: TSchema[];
  rules: readonly string[];
  enumMessages?: Readonly<Record<string, (value: unknown) => string>>;
  spec(input: Static<In>, caller: RequestCaller): Promise<JobSpec>;
  busy: string;
}) {
  const { name, input, rules, enumMessages, spec } = kind;
  const shared = { name, input, rules, ...(enumMessages ? { enumMessages } : {}), context: jobContext };
  return {
    tool: defineOperation({ ...shared, output: toolResult(...kind.finished),
      run: async (i: Static<In>, ctx: JobContext) => runJob(ctx, await spec(i, await requestCaller(ctx)), kind.busy) }),
    route: defineOperation({ ...shared, output: JOB_STARTED,
      run: async (i: Static<In>, ctx: JobContext) => startJob(ctx, await spec(i, await requestCaller(ctx))) }),
  };
}

const MINE_FINISHED = Type.Object({
  success: Type.Literal(true),
  mode: Type.String(),
  dry_run: Type.Boolean(),
  output: Type.String(),
  output_truncated: Type.Optional(Type.Boolean()),
});

const SYNC_FINISHED = Type.Object({
  success: Type.Literal(true),
  scanned: Type.Integer(),
  kept: Type.Integer(),
  gitignored: Type.Integer(),
  missing: Type.Integer(),
  unresolved: Type.Integer(),
  removed_drawers: Type.Integer(),
  dry_run: Type.Boolean(),
  by_source: COUNTS,
  unresolved_by_source: COUNTS,
  guard: Type.Object({ needs_force: Type.Boolean(), forced: Type.Boolean(), stopped: Type.Boolean(), reasons: Type.Array(OBJECT), message: Type.String() }),
});

const DELETE_BY_SOURCE_FINISHED = [
  Type.Object({
    success: Type.Literal(true),
    dry_run: Type.Literal(true),
    source_file: Type.String(),
    match_count: Type.Integer(),
    closet_match_count: Type.Integer(),
    sample: Type.Array(Type.Object({ wing: Type.String(), room: Type.String() })),
    hint: Type.String(),
  }),
  Type.Object({
    success: Type.Literal(true),
    dry_run: Type.Literal(false),
    source_file: Type.String(),
    deleted: Type.Integer(),
    closets_deleted: Type.Optional(Type.Integer()),
  }),
];

export const { tool: mineOperation, route: startMineOperation } = jobOperations({ name: 'mine', input: MINE_REQUEST, finished: [MINE_FINISHED],
  rules: JOB_REQUEST_RULES.mine, enumMessages: JOB_REQUEST_ENUM_MESSAGES.mine, spec: mineSpec, busy: 'another mine is in progress' });

export const { tool: syncOperation, route: startSyncOperation } = jobOperations({ name: 'sync', input: SYNC_REQUEST, finished: [SYNC_FINISHED],
  rules: JOB_REQUEST_RULES.sync, spec: syncSpec, busy: 'another mine is in progress' });

export const { tool: deleteBySourceOperation, route: startDeleteBySourceOperation } = jobOperations({ name: 'delete_by_source', input: DELETE_BY_SOURCE_REQUEST,
  finished: DELETE_BY_SOURCE_FINISHED, rules: JOB_REQUEST_RULES.delete_by_source, spec: deleteBySourceSpec, busy: 'another delete is in progress' });
