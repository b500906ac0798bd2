/**
 * Registered sources: repositories and directories the palace follows. Each is kept by the
 * RegisteredSources port; a refresh is an incremental mine of it through the JobEngine
 * (unchanged files are skipped by their file state). Git sources are matched to push webhooks by a
 * normalised repository identity, so `https://host/team/repo`, `git@host:team/repo.git` and
 * `ssh://git@host:22/Team/Repo` are the same repository.
 *
 * Who schedules a refresh differs by profile (the `RefreshScheduler` port, stores/ports/refresh-scheduler.ts): the cluster puts it on
 * the BullMQ trigger queue, the embedded profile debounces it in-process; both run
 * `refreshRegisteredSource` per source, which waits for its mine to end so that a push arriving
 * meanwhile gives exactly one more refresh after it.
 */
import path from 'node:path';
import { PalaceError, invalidArgument, isPalaceError } from '../../core/errors.js';
import { hashN } from '../../core/text.js';
import { maskUrlCredentials, splitUrlCredential } from '../../core/url-credentials.js';
import { validateOptionalName } from '../../core/validate.js';
import type { RegisteredSource, RegisteredSources, SourceRefresh } from '../../stores/ports/registered-sources.js';
import type { SourceCredentials } from '../../stores/ports/source-credentials.js';
import type { JobEngine, JobProgress, MineMode, MineSpec } from '../../stores/ports/job-engine.js';
import { MINE_MODES } from '../../stores/ports/job-engine.js';
import { callActor } from '../context.js';
import type { CallActor } from '../context.js';
import type { Runtime } from '../runtime.js';
import type { RootBound, SourcePolicy } from './sources.js';
import { assertGitRef, assertStoredSourceAllowed, resolveGitSource, resolveLocalSource } from './sources.js';

/** `actor`: who registers a source again is its `updated_by`. */
export interface SourcesContext extends CallActor {
  sources: RegisteredSources;
  jobs: JobEngine;
  /** What the caller may register, refresh or remove: the same bounds a mine of the source would have (palace/sources/sources.ts). */
  policy: SourcePolicy;
  /** Where credentials written into repository URLs are kept, apart from the source record. */
  credentials: SourceCredentials;
}

/** The sources operations' context for a call's runtime, bounded by `policy` (the caller's roots). */
export function sourcesContext(rt: Runtime, policy: SourcePolicy): SourcesContext {
  return { sources: rt.stores.sources, jobs: rt.jobs, policy, credentials: rt.stores.credentials, ...callActor(rt) };
}

export interface AddSourceInput {
  location: string;
  ref?: string | undefined;
  wing?: string | undefined;
  mode?: string | undefined;
}

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
/** `[user@]host:path` (scp-like ssh), never `C:\` nor `host://`. */
const SCP_LIKE = /^(?:[^@/\s]+@)?([^:/\s]{2,}):(?!\/\/)(\S+)$/;

function trimRepoPath(p: string): string {
  return p.replace(/\/+$/, '').replace(/\.git$/i, '').replace(/\/+$/, '');
}

/** Whether a location names a git repository by URL (rather than a directory to mine as is). */
export function isRepoUrl(location: string): boolean {
  const s = location.trim();
  return SCHEME.test(s) || (SCP_LIKE.test(s) && !path.isAbsolute(s));
}

/** Ports a repository URL may leave out: they do not tell two servers apart. */
const DEFAULT_PORTS: Readonly<Record<string, string>> = { 'http:': '80', 'https:': '443', 'ssh:': '22', 'git+ssh:': '22', 'git:': '9418' };

/**
 * The identity push payloads are matched on: `host[:port]/path` in lower case without
 * credentials, scheme or `.git` suffix, the port only when it is not the scheme's default (so
 * `https://host:8443/x` and `https://host/x` are different repositories); local repositories
 * (`file://` URLs, absolute paths) are `file:<absolute path>`.
 */
export function repoMatchKey(location: string): string {
  const s = location.trim();
  if (SCHEME.test(s)) {
    let url: URL;
    try {
      url = new URL(s);
    } catch {
      throw invalidArgument('location', 'git_url', 'the location is not a valid repository URL');
    }
    if (url.protocol === 'file:') return `file:${trimRepoPath(path.resolve(decodeURIComponent(url.pathname)))}`;
    if (!['http:', 'https:', 'ssh:', 'git:', 'git+ssh:'].includes(url.protocol))
      throw invalidArgument('location', 'git_url', `repository URL scheme '${url.protocol}' is not supported (https, ssh, git, file)`);
    const port = url.port !== '' && url.port !== DEFAULT_PORTS[url.protocol] ? `:${url.port}` : '';
    return `${url.hostname.toLowerCase()}${port}/${trimRepoPath(decodeURIComponent(url.pathname).replace(/^\/+/, '')).toLowerCase()}`;
  }
  if (path.isAbsolute(s)) return `file:${trimRepoPath(path.resolve(s))}`;
  const scp = SCP_LIKE.exec(s);
  if (scp) return `${scp[1]!.toLowerCase()}/${trimRepoPath(scp[2]!.replace(/^\/+/, '')).toLowerCase()}`;
  throw invalidArgument('location', 'git_url', `'${location}' is neither a repository URL nor an absolute path`);
}

function sourceIdOf(kind: RegisteredSource['kind'], identity: string, ref: string | undefined): string {
  return `src_${hashN(kind === 'git' ? `${identity}#${ref}` : identity, 16)}`;
}

function mineMode(value: string | undefined): MineMode {
  if (value === undefined) return 'projects';
  if (!(MINE_MODES as readonly string[]).includes(value)) throw invalidArgument('mode', 'one_of', `mode must be one of: ${MINE_MODES.join(', ')}`);
  return value as MineMode;
}

/**
 * Register (or re-register) a source. A URL, or any location with a ref, is a git source (ref
 * `main` when none is given); anything else is a directory that must exist inside the allowed roots.
 */
export async function addSource(ctx: SourcesContext, input: AddSourceInput, addedBy: string): Promise<RegisteredSource> {
  const location = typeof input.location === 'string' ? input.location.trim() : '';
  if (location === '') throw invalidArgument('location', 'non_empty_string', 'location must be a repository URL or a directory');
  const mode = mineMode(input.mode);
  const wing = validateOptionalName('wing', input.wing);
  const ref = input.ref?.trim() || undefined;
  if (ref !== undefined) assertGitRef('ref', ref);
  const now = new Date().toISOString();
  let source: RegisteredSource;
  if (isRepoUrl(location) || ref !== undefined) {
    // A credential in the URL is kept apart; the record, and everything made from it, names the URL without it.
    const { url: bare, credential } = splitUrlCredential('location', location);
    await resolveGitSource('location', bare, ctx.policy);
    const matchKey = repoMatchKey(bare);
    const gitRef = ref ?? 'main';
    if (credential) await ctx.credentials.put(bare, credential);
    source = { source_id: sourceIdOf('git', matchKey, gitRef), kind: 'git', location: bare, match_key: matchKey, ref: gitRef, mode, added_by: addedBy,
      added_at: now };
  } else {
    const abs = await resolveLocalSource('location', location, ctx.policy);
    source = { source_id: sourceIdOf('dir', abs, undefined), kind: 'dir', location: abs, mode, added_by: addedBy, added_at: now };
  }
  if (wing !== undefined) source.wing = wing;
  const existing = await ctx.sources.get(source.source_id);
  if (existing) {
    // Registering again replaces the record: who added it and when stay (the store keeps them), who replaced it and when come beside them (issue 28).
    source.updated_at = now;
    if (ctx.actor !== undefined) source.updated_by = ctx.actor;
  }
  await ctx.sources.put(source);
  return (await ctx.sources.get(source.source_id)) ?? source;
}

export async function getSource(ctx: Pick<SourcesContext, 'sources'>, sourceId: string): Promise<RegisteredSource> {
  const source = await ctx.sources.get(sourceId);
  if (!source) throw new PalaceError('not_found', `no registered source ${sourceId}`, { field: 'source_id', rule: 'registered_source' });
  return source;
}

/** Every registered source; a refresh still recorded as running shows its job's current state. */
export async function listSources(ctx: Pick<SourcesContext, 'sources' | 'jobs'>): Promise<RegisteredSource[]> {
  const sources = await ctx.sources.list();
  return Promise.all(sources.map(async (s) => {
    const r = s.last_refresh;
    if (r?.state !== 'running' || r.job_id === undefined) return s;
    const p = await ctx.jobs.progress(r.job_id).catch(() => undefined);
    return p && p.state !== 'running' ? { ...s, last_refresh: refreshOutcome(r, p) } : s;
  }));
}

/**
 * A caller may refresh or remove a source only if it could register it: a directory, or a local
 * repository (`file://`, an absolute path), inside the caller's roots (rule `token_roots`, …).
 * Network repositories are not paths; the hosts allowed are the server's, the same for every caller.
 */
async function assertSourceInBounds(source: RegisteredSource, policy: SourcePolicy): Promise<void> {
  const key = source.kind === 'git' ? (source.match_key ?? repoMatchKey(source.location)) : undefined;
  const local = source.kind === 'dir' ? source.location : key?.startsWith('file:') ? key.slice('file:'.length) : undefined;
  if (local !== undefined) await assertStoredSourceAllowed('source_id', local, policy);
}

export async function removeSource(ctx: Pick<SourcesContext, 'sources' | 'policy' | 'credentials'>, sourceId: string): Promise<{ removed: string }> {
  const source = await getSource(ctx, sourceId);
  await assertSourceInBounds(source, ctx.policy);
  if (!(await ctx.sources.remove(sourceId)))
    throw new PalaceError('not_found', `no registered source ${sourceId}`, { field: 'source_id', rule: 'registered_source' });
  // The credential goes with the last source of its URL.
  if (source.kind === 'git' && !(await ctx.sources.list()).some((s) => s.location === source.location)) await ctx.credentials.remove(source.location);
  return { removed: sourceId };
}

/**
 * The incremental mine a refresh runs: bounded by `bounds` (the caller's, for a refresh asked by a
 * person or agent), and on the worker by the server's roots (MEMPALACE_ALLOWED_ROOTS) in any case.
 * Its job names `trigger`: a push webhook, or a refresh asked for by the source's id.
 */
export function refreshSpec(source: RegisteredSource, trigger: SourceRefresh['trigger'], bounds?: readonly RootBound[]): MineSpec {
  return {
    kind: 'mine',
    source: source.kind === 'git' ? { kind: 'git', url: source.location, ref: source.ref ?? 'main' } : { kind: 'dir', path: source.location },
    mode: source.mode as MineMode,
    wing: source.wing,
    agent: 'mempalace',
    limit: 0,
    dryRun: false,
    extract: 'exchange',
    respectGitignore: true,
    includeIgnored: [],
    ...(bounds && bounds.length > 0 ? { sourceBounds: [...bounds] } : {}),
    trigger: trigger === 'manual' ? 'refresh' : 'webhook',
  };
}

function refreshOutcome(r: SourceRefresh, p: JobProgress): SourceRefresh {
  const commit = (p.result as { commit?: unknown } | undefined)?.commit;
  return {
    ...r,
    job_id: p.job_id,
    state: p.state,
    drawers_written: p.drawers_written,
    ...(p.finished_at ? { finished_at: p.finished_at } : {}),
    ...(typeof commit === 'string' ? { commit } : {}),
    ...(p.error ? { error: p.error } : {}),
  };
}

/** Start a refresh now (CLI, REST): the mine's job; a job already running on the source is an `already_running` error. */
export async function startRefresh(ctx: SourcesContext, sourceId: string): Promise<JobProgress> {
  const source = await getSource(ctx, sourceId);
  await assertSourceInBounds(source, ctx.policy);
  const started = await ctx.jobs.start(refreshSpec(source, 'manual', ctx.policy.bounds));
  await ctx.sources.setRefresh(sourceId, { trigger: 'manual', requested_at: started.started_at, job_id: started.job_id, state: 'running' });
  return started;
}

const WAIT_SLICE_MS = 60_000;

async function waitForEnd(jobs: JobEngine, jobId: string): Promise<JobProgress> {
  for (;;) {
    const p = await jobs.wait(jobId, WAIT_SLICE_MS);
    if (p.state !== 'running') return p;
  }
}

/**
 * Run one scheduled refresh to its end: a job already mining the source is waited for first (it
 * may have scanned before the push), then the mine starts and is waited for; the outcome is
 * recorded on the source. A source removed meanwhile is not refreshed (undefined).
 */
export async function refreshRegisteredSource(ctx: Pick<SourcesContext, 'sources' | 'jobs'>, sourceId: string,
  trigger: SourceRefresh['trigger'] = 'webhook'): Promise<SourceRefresh | undefined> {
  const requested = new Date().toISOString();
  let started: JobProgress | undefined;
  while (!started) {
    const source = await ctx.sources.get(sourceId);
    if (!source) return undefined;
    try {
      started = await ctx.jobs.start(refreshSpec(source, trigger));
    } catch (e) {
      if (!isPalaceError(e) || e.code !== 'already_running') throw e;
      await ctx.sources.setRefresh(sourceId, { trigger, requested_at: requested, state: 'waiting' });
      const running = (e.details as { job_id?: unknown } | undefined)?.job_id;
      if (typeof running === 'string') await waitForEnd(ctx.jobs, running);
      else await new Promise((r) => setTimeout(r, 1_000));
    }
  }
  const base: SourceRefresh = { trigger, requested_at: requested, job_id: started.job_id, state: 'running' };
  if (!(await ctx.sources.setRefresh(sourceId, base))) return undefined;
  const outcome = refreshOutcome(base, await waitForEnd(ctx.jobs, started.job_id));
  await ctx.sources.setRefresh(sourceId, outcome);
  return outcome;
}

/** A push as the webhook parsed it: every URL the payload names for the repository, and the ref. */
export interface GitPush {
  provider: 'github' | 'gitlab';
  repoUrls: string[];
  /** `refs/heads/<branch>` or `refs/tags/<tag>`. */
  ref: string;
  /** Commit the ref points to after the push. */
  after: string | undefined;
}

/** The registered git sources a push concerns: same repository, and the ref pushed is theirs. */
export function sourcesForPush(sources: readonly RegisteredSource[], push: GitPush): RegisteredSource[] {
  const keys = new Set(push.repoUrls.flatMap((u) => {
    try {
      return [repoMatchKey(u)];
    } catch {
      return [];
    }
  }));
  return sources.filter((s) =>
    s.kind === 'git' && s.match_key !== undefined && keys.has(s.match_key)
    && (push.ref === `refs/heads/${s.ref}` || push.ref === `refs/tags/${s.ref}` || push.ref === s.ref)
  );
}

/**
 * Bring sources registered by older versions up to date, once per open (idempotent): a
 * credential written into a repository URL moves to the credential store and leaves the record
 * (and the recorded refresh error); the match key and id are recomputed, so a repository on a
 * non-default port gets the id that tells it apart from the same path on the default port (the
 * record moves to that id; the old id, which two repositories could share, is gone).
 */
export async function migrateRegisteredSources(ctx: Pick<SourcesContext, 'sources' | 'credentials'>): Promise<number> {
  let changed = 0;
  for (const source of await ctx.sources.list()) {
    if (source.kind !== 'git') continue;
    const { url: bare, credential } = splitUrlCredential('location', source.location);
    const matchKey = repoMatchKey(bare);
    const id = sourceIdOf('git', matchKey, source.ref);
    const error = source.last_refresh?.error;
    const masked = error === undefined ? undefined : maskUrlCredentials(error);
    if (bare === source.location && matchKey === source.match_key && id === source.source_id && masked === error) continue;
    if (credential) await ctx.credentials.put(bare, credential);
    const lastRefresh = source.last_refresh && { ...source.last_refresh, ...(masked === undefined ? {} : { error: masked }) };
    await ctx.sources.put({ ...source, source_id: id, location: bare, match_key: matchKey, ...(lastRefresh ? { last_refresh: lastRefresh } : {}) });
    if (id !== source.source_id) await ctx.sources.remove(source.source_id);
    changed++;
  }
  return changed;
}
