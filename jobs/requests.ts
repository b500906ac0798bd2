/**
 * One request model per job kind: the TypeBox schema of what a caller may send to start a mine, a
 * sync, a delete by source, a re-embed or a revert (it validates and gives the type), and the functions
 * that turn a checked request into the job's spec. The job operations (jobs/operations.ts) take
 * these as their input, so the MCP tools (restricted to the fields a tool offers) and the REST
 * routes publish and check the same schema; the CLI's own commands use `parseJobRequest`.
 * Validation is core/validate-input.ts, so a bad field gets the same message over each; sources
 * are resolved here, by palace/sources/sources.ts, and nowhere else.
 */
import { hashN, stripLoneSurrogates } from '../core/text.js';
import type { Static } from 'typebox';
import { Type } from 'typebox';
import { INPUT_FORMATS, jsonSchemaOf, NON_BLANK } from '../core/schema.js';
import { invalidArgument } from '../core/errors.js';
import { encoderSetText, parseEncoderSet } from '../core/encoder-set.js';
import { splitUrlCredential } from '../core/url-credentials.js';
import type { SourceCredentials } from '../stores/ports/source-credentials.js';
import { parseInput } from '../core/validate-input.js';
import { NAME_RULES, validateOptionalName } from '../core/validate.js';
import type { RevertCaller } from '../stores/ports/job-engine.js';
import type { DeleteBySourceSpec, JobKind, JobSpec, MineSpec, ReembedSpec, RevertSpec, SyncSpec } from './job.js';
import { MINE_MODES } from './job.js';
import { auditInstant } from '../palace/audit/list.js';
import type { SourcePolicy } from '../palace/sources/sources.js';
import { SOURCE_RULES, assertStoredSourceAllowed, resolveLocalSource, resolveMineSource } from '../palace/sources/sources.js';

/** The most files one mine may be limited to (0 = all). */
const MAX_MINE_LIMIT = 10_000_000;

/** A string that is not blank (the job requests' required texts). */
const text = (description: string) => Type.String({ description, pattern: NON_BLANK });
/** A string restricted to a list, published as a plain `enum` so a violation names the rule `enum`. */
const oneOf = <T extends string>(values: readonly T[], description: string, defaultValue: T) =>
  Type.Unsafe<T>({ type: 'string', description, enum: [...values], default: defaultValue });

export const MINE_REQUEST = Type.Object({
  source: text('Directory to mine (~ expanded); with mode "convos" also a single conversation file; with ref (REST, CLI) a git URL.'),
  ref: Type.Optional(text('Mine a git repository at this ref; source is then its URL.')),
  mode: Type.Optional(oneOf(MINE_MODES, 'What the source holds.', 'projects')),
  wing: Type.Optional(Type.String({ description: 'Target wing (default: derived from the source directory name).', format: INPUT_FORMATS.name })),
  agent: Type.Optional(Type.String({ description: 'Recorded on every drawer (default "mempalace"; over HTTP the token\'s identity unless admin).' })),
  limit: Type.Optional(Type.Integer({ description: 'Maximum files to process; 0 = all.', minimum: 0, maximum: MAX_MINE_LIMIT, default: 0 })),
  dry_run: Type.Optional(Type.Boolean({ description: 'Walk and chunk, report, write nothing.' })),
  extract: Type.Optional(oneOf(['exchange', 'general'] as const, 'Conversation extraction strategy (convos mode only).', 'exchange')),
  respect_gitignore: Type.Optional(Type.Boolean({ description: 'Apply .gitignore files (default true).' })),
  include_ignored: Type.Optional(Type.Array(text('A path to mine even if ignored.'), { description: 'Paths to mine even if ignored.' })),
}, { additionalProperties: false });

/** What the MCP tool offers of a mine request: a local source, no git ref and no gitignore overrides. */
export const MINE_TOOL_FIELDS = ['source', 'mode', 'wing', 'agent', 'limit', 'dry_run', 'extract'] as const;

export const SYNC_REQUEST = Type.Object({
  project_dir: Type.Optional(Type.String({ description: 'Project root scoping the sync (default: detected from drawer metadata; blank = absent).' })),
  wing: Type.Optional(Type.String({ description: 'Only this wing (blank = absent).', format: INPUT_FORMATS.name })),
  apply: Type.Optional(Type.Boolean({ description: 'Actually delete (default false: report only); needs wing or project_dir.' })),
  force: Type.Optional(Type.Boolean({
    description:
      "Apply even when the sync guard stops it: a source root that is not the filesystem it was mined from (an unmounted volume), or most of a source's drawers to delete (default false).",
  })),
}, { additionalProperties: false });

export const DELETE_BY_SOURCE_REQUEST = Type.Object({
  source_file: text("The exact stored source_file value, e.g. the full mined path (a search hit's source_path)."),
  dry_run: Type.Optional(Type.Boolean({ description: 'Preview only (default true); false deletes.' })),
}, { additionalProperties: false });

export const REEMBED_REQUEST = Type.Object({
  model: text('The model or encoder set to convert to: a MEMPALACE_EMBED_MODEL value, or a MEMPALACE_ENCODERS value (name:weight,name:weight).'),
}, { additionalProperties: false });

/** `mempalace revert` and `POST /v1/revert`: whose writes to undo, narrowed by session, instant and wing. */
export const REVERT_REQUEST = Type.Object({
  agent: text('The agent whose writes to undo.'),
  session: Type.Optional(text('Only the writes of this session.')),
  since: Type.Optional(text('Only the writes at or after this ISO 8601 date or instant.')),
  wing: Type.Optional(Type.String({ description: 'Only the writes that touched this wing.', format: INPUT_FORMATS.name })),
  dry_run: Type.Optional(Type.Boolean({ description: 'List what would change and change nothing (default false); answered at once, without a job.' })),
  revert_id: Type.Optional(text(
    'Go on with the revert of this id (default: the id of this selection, so the same request goes on where an interrupted one stopped).',
  )),
}, { additionalProperties: false });

export type MineRequest = Static<typeof MINE_REQUEST>;
export type SyncRequest = Static<typeof SYNC_REQUEST>;
export type DeleteBySourceRequest = Static<typeof DELETE_BY_SOURCE_REQUEST>;
type ReembedRequest = Static<typeof REEMBED_REQUEST>;
type RevertRequest = Static<typeof REVERT_REQUEST>;

/** Spec-exact enum messages of the request models, by field (docs/tools.md §3.4). */
export const JOB_REQUEST_ENUM_MESSAGES: Readonly<Record<JobKind, Record<string, (value: unknown) => string>>> = {
  mine: { mode: (v) => `invalid mode '${String(v)}'; expected one of: ${MINE_MODES.join(', ')}` },
  sync: {},
  delete_by_source: {},
  reembed: {},
  revert: {},
};

/** The rules beyond the schema by which `parseJobRequest` may refuse a request of each kind. */
export const JOB_REQUEST_RULES: Readonly<Record<JobKind, readonly string[]>> = {
  mine: [...NAME_RULES, ...SOURCE_RULES],
  sync: [...NAME_RULES, ...SOURCE_RULES, 'scope_required'],
  delete_by_source: SOURCE_RULES,
  reembed: ['encoder_set'],
  revert: [...NAME_RULES, 'iso_date_or_utc_instant'],
};

/** Who sends a request: what they may read, and who files drawers when the request names no agent. */
export interface RequestCaller {
  policy: SourcePolicy;
  /** The default `agent` of a mine (default "mempalace"). */
  agent?: string | undefined;
  /** Where a credential written into a git source URL is kept (the spec carries the URL without it). */
  credentials?: Pick<SourceCredentials, 'put'> | undefined;
}

function present(value: string | undefined): string | undefined {
  const t = value?.trim();
  return t ? t : undefined;
}

/** The spec of a mine whose request has passed MINE_REQUEST: its source resolved against the caller's policy. */
export async function mineSpec(r: MineRequest, caller: RequestCaller): Promise<MineSpec> {
  // The drawer tools' name rule, checked first: a credential is kept below, and nothing may be written for a refused request.
  const wing = validateOptionalName('wing', r.wing);
  const mode = r.mode ?? 'projects';
  const split = present(r.ref) === undefined ? { url: r.source } : splitUrlCredential('source', r.source.trim());
  if (split.credential && !caller.credentials)
    throw invalidArgument('source', 'git_credential_store', 'source carries a credential, and this entry point has no credential store to keep it apart');
  const source = await resolveMineSource({ source: split.url, ref: r.ref, allowFile: mode === 'convos' }, caller.policy);
  if (split.credential && source.kind === 'git') await caller.credentials!.put(source.url, split.credential);
  return {
    kind: 'mine',
    source,
    mode,
    wing,
    sourceBounds: caller.policy.bounds,
    agent: present(r.agent) ?? caller.agent ?? 'mempalace',
    limit: r.limit ?? 0,
    dryRun: r.dry_run === true,
    extract: r.extract ?? 'exchange',
    respectGitignore: r.respect_gitignore !== false,
    includeIgnored: (r.include_ignored ?? []).map((s) => s.trim()),
  };
}

/** The spec of a sync whose request has passed SYNC_REQUEST. */
export async function syncSpec(r: SyncRequest, caller: RequestCaller): Promise<SyncSpec> {
  const wing = validateOptionalName('wing', r.wing);
  const dir = present(r.project_dir);
  const projectDir = dir === undefined ? undefined : await resolveLocalSource('project_dir', dir, caller.policy);
  const apply = r.apply === true;
  if (apply && !wing && !projectDir)
    throw invalidArgument('apply', 'scope_required', 'apply: true needs wing or project_dir, so one call never prunes every wing of the palace');
  return { kind: 'sync', wing, projectDir, apply, ...(r.force === true ? { force: true } : {}), sourceBounds: caller.policy.bounds };
}

/** The spec of a delete by source whose request has passed DELETE_BY_SOURCE_REQUEST. */
export async function deleteBySourceSpec(r: DeleteBySourceRequest, caller: RequestCaller): Promise<DeleteBySourceSpec> {
  // Matched exactly as given: lone surrogates stripped (they cannot be stored), never trimmed.
  const sourceFile = stripLoneSurrogates(r.source_file);
  await assertStoredSourceAllowed('source_file', sourceFile, caller.policy);
  return { kind: 'delete_by_source', sourceFile, dryRun: r.dry_run !== false, sourceBounds: caller.policy.bounds };
}

/**
 * The spec of a revert from a request of any transport (checked like the other kinds', nothing
 * written when refused) and whether it is a dry run. `by`: who asks, as the revert's audit
 * records name them. Without `revert_id` the id is the selection's own, so asking again for the
 * same selection goes on with the same revert.
 */
export function parseRevertRequest(request: unknown, by: RevertCaller): { spec: RevertSpec; dryRun: boolean } {
  const r = parseInput<RevertRequest>(jsonSchemaOf(REVERT_REQUEST), request, { where: 'body', enumMessages: JOB_REQUEST_ENUM_MESSAGES.revert });
  const wing = validateOptionalName('wing', r.wing);
  const since = auditInstant('since', r.since);
  const selection = { agent: r.agent.trim(), session: present(r.session), since, wing };
  const revertId = present(r.revert_id) ?? `revert_${hashN(JSON.stringify(Object.values(selection).map((v) => v ?? null)), 16)}`;
  return { spec: { kind: 'revert', revertId, ...selection, by }, dryRun: r.dry_run === true };
}

/**
 * The spec of a job from a request of any transport: validated against the kind's model, its
 * source resolved against the caller's policy. Bad input is an `invalid_argument` error naming
 * the field and the rule; nothing has started.
 */
export async function parseJobRequest<K extends SourceJobKind>(kind: K, request: unknown, caller: RequestCaller): Promise<Extract<JobSpec, { kind: K }>> {
  return (await specOf(kind, request, caller)) as Extract<JobSpec, { kind: K }>;
}

/** The kinds whose request `parseJobRequest` reads: a revert names its caller instead (`parseRevertRequest`). */
type SourceJobKind = Exclude<JobKind, 'revert'>;

async function specOf(kind: SourceJobKind, request: unknown, caller: RequestCaller): Promise<JobSpec> {
  const opts = { where: 'body', enumMessages: JOB_REQUEST_ENUM_MESSAGES[kind] };
  switch (kind) {
    case 'mine':
      return mineSpec(parseInput<MineRequest>(jsonSchemaOf(MINE_REQUEST), request, opts), caller);
    case 'sync':
      return syncSpec(parseInput<SyncRequest>(jsonSchemaOf(SYNC_REQUEST), request, opts), caller);
    case 'delete_by_source':
      return deleteBySourceSpec(parseInput<DeleteBySourceRequest>(jsonSchemaOf(DELETE_BY_SOURCE_REQUEST), request, opts), caller);
    case 'reembed': {
      const r = parseInput<ReembedRequest>(jsonSchemaOf(REEMBED_REQUEST), request, opts);
      // One canonical text per set, so a resumed re-embed is found whatever scale its weights were written in.
      return { kind: 'reembed', model: encoderSetText(parseEncoderSet(r.model, 'model')) } satisfies ReembedSpec;
    }
  }
}
