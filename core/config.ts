/**
 * The one place that turns the environment into configuration. Everything else receives a
 * `Config` value, so tests and embedders can build one without touching `process.env`; what the
 * environment leaves to the machine (home directory, host name, cores) comes in as `HostFacts`,
 * read by app/config.ts.
 */
import path from 'node:path';
import { z } from 'zod';
import type { EncoderWeight } from './encoder-set.js';
import { parseEncoderSet } from './encoder-set.js';
import type { PalaceError } from './errors.js';
import { invalidArgument } from './errors.js';
import type { LogFormat, LogLevel } from './log.js';
import { LOG_FORMATS, LOG_LEVELS } from './log.js';

const TRUTHY = new Set(['1', 'true', 'yes', 'on']);

/** Spec rule (docs/tools.md §11): truthy values are 1/true/yes/on, case-insensitive and trimmed. */
export function isTruthy(value: string | undefined): boolean {
  return value !== undefined && TRUTHY.has(value.trim().toLowerCase());
}

/**
 * Each variable is parsed by a zod schema at startup. A bad value stops the process with an
 * `invalid_argument` error whose field is the variable and whose rule is the check that failed;
 * blank or unset means the default.
 */
const count = z.stringFormat('non_negative_integer', /^\d+$/, { error: 'must be a non-negative integer' }).transform(Number);
const positiveInteger = z.stringFormat('positive_integer', /^0*[1-9]\d*$/, { error: 'must be a positive integer' }).transform(Number);
/** OpenSearch's ceiling for a knn query's `k`. */
const efSearch = positiveInteger.pipe(z.number().max(10_000, { error: 'must be at most 10000' }));
const atLeast = (min: number) => count.pipe(z.number().min(min, { error: `must be at least ${min}` }));
const nonNegativeNumber = z.stringFormat('non_negative_number', /^(?:\d+\.?\d*|\.\d+)$/, { error: 'must be a non-negative number' }).transform(Number);
const positiveNumber = nonNegativeNumber.pipe(z.number().gt(0, { error: 'must be greater than 0' }));
const signedNumber = z.stringFormat('number', /^[+-]?(?:\d+\.?\d*|\.\d+)$/, { error: 'must be a number' }).transform(Number);
const url = z.url({ error: 'must be a URL' });
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values, { error: `must be one of ${values.join(', ')}` });

/** A variable whose value failed its schema: the rule is the format or the bound it broke. */
function badValue(name: string, raw: string, error: z.ZodError): PalaceError {
  const issue = error.issues[0]!;
  const rule = issue.code === 'invalid_format' ?
    issue.format
    : issue.code === 'too_small' ?
    'minimum'
    : issue.code === 'too_big' ?
    'maximum'
    : issue.code === 'invalid_value'
    ? 'one_of'
    : issue.code;
  return invalidArgument(name, rule, `${name} ${issue.message}, got '${raw}'`);
}

/** A settings value the spec says to replace by its default when unparseable; kept, and told to the operator. */
export interface ConfigWarning {
  variable: string;
  rule: string;
  message: string;
}

class EnvReader {
  readonly warnings: ConfigWarning[] = [];
  constructor(private readonly env: NodeJS.ProcessEnv) {}

  /** The trimmed value of `name`, or undefined when unset or blank. */
  raw(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  }

  /** `name` parsed by `schema`; a bad value is a startup error. */
  get<T>(name: string, schema: z.ZodType<T, string>, fallback: T): T {
    const raw = this.raw(name);
    if (raw === undefined) return fallback;
    const parsed = schema.safeParse(raw);
    if (!parsed.success) throw badValue(name, raw, parsed.error);
    return parsed.data;
  }

  /** Like `get`, for the variables whose spec rule is "unparseable means the default": warned, not refused. */
  lenient<T>(name: string, schema: z.ZodType<T, string>, fallback: T): T {
    try {
      return this.get(name, schema, fallback);
    } catch (e) {
      const err = e as PalaceError;
      this.warnings.push({ variable: name, rule: err.rule ?? 'invalid', message: `${err.message}; the default applies` });
      return fallback;
    }
  }

  /** A comma-separated list, trimmed, empty items dropped. */
  list(name: string, fallback = ''): string[] {
    return (this.env[name] ?? fallback).split(',').map((item) => item.trim()).filter((item) => item.length > 0);
  }
}

export const DEFAULT_EMBED_MODEL = 'all-MiniLM-L6-v2';

export const PROFILES = ['embedded', 'cluster'] as const;
export type Profile = (typeof PROFILES)[number];

export interface Config {
  profile: Profile;
  /** Palace directory (embedded profile); also the palace name's home in the cluster profile. */
  palaceDir: string;
  /** Name used to namespace cluster-side keys and indices. */
  palaceName: string;
  modelDir: string;
  /**
   * The embedding model (MEMPALACE_EMBED_MODEL, checked by embed/) and its onnxruntime threads;
   * `encoders`, when MEMPALACE_ENCODERS is set, the encoder set that replaces the one model
   * (core/encoder-set.ts; the names are checked by embed/).
   */
  embed: { model: string; threads: number; encoders?: EncoderWeight[] };
  /** Absolute directories a mine/sync source must live in; empty means no restriction. */
  allowedRoots: string[];
  /** Source policy beyond the roots (palace/sources/sources.ts). */
  sources: {
    /** Refuse local sources while no allowed roots are set (`serve` without --allow-any-source). */
    requireAllowedRoots: boolean;
    /** `host[:port]` patterns network git sources may use (`MEMPALACE_GIT_ALLOWED_HOSTS`); none = no network git. */
    gitAllowedHosts: string[];
    /** A clone or fetch running longer is killed (`MEMPALACE_GIT_TIMEOUT_S`, default 600). */
    gitTimeoutMs: number;
    /** A clone growing larger is killed and removed (`MEMPALACE_GIT_MAX_MB`, default 2048). */
    gitMaxBytes: number;
  };
  /** `uiUrl`: the Temporal Web UI the dashboard links each job's workflow to (`MEMPALACE_TEMPORAL_UI_URL`); unset, no links. */
  temporal: { address: string; namespace: string; taskQueue: string; uiUrl?: string };
  /**
   * `shards`: primary shards of a new drawers index (`MEMPALACE_OPENSEARCH_SHARDS`, default 1); `replicas`: copies of every
   * shard of every palace index (`MEMPALACE_OPENSEARCH_REPLICAS`, default 0). An existing palace moves to new values with `repair`.
   * `efSearch`: HNSW candidates of an approximate knn search (`MEMPALACE_OPENSEARCH_EF_SEARCH`, at most 10 000; unset, the
   * adapter's measured default): more is slower and finds more of the true nearest rows.
   */
  opensearch: { url: string; shards: number; replicas: number; efSearch?: number };
  neo4j: { uri: string; user: string; password: string };
  redis: { url: string };
  mcp: {
    readOnly: boolean;
    allowStaleLibrary: boolean;
    jobWaitSeconds: number;
    /** Hours without a request before a stdio server exits; 0 disables. */
    idleHours: number;
    /** Seconds a vector-index write may run before a warning / an exit with code 75; 0 disables. */
    writeStallWarnSeconds: number;
    writeStallExitSeconds: number;
    httpToken: string | undefined;
    maxResponseChars: number;
  };
  logstream: { durable: boolean; sseMaxClients: number };
  /** The logstream mesh (docs/logstream.md §8.6, §8.10): sync loop interval (0 = off), peer HTTP timeout, peers file, transport. */
  sync: { intervalS: number; httpTimeoutS: number; peersFile: string; transport: string };
  /** The HTTP API (`mempalace serve`): tokens, CORS, Host pin, per-token rate limit. */
  api: {
    tokensFile: string | undefined;
    tokens: string | undefined;
    allowInsecureNoToken: boolean;
    corsOrigins: string[];
    allowedHosts: string[];
    ratePerSecond: number;
    rateBurst: number;
    /** OAuth 2.1 resource server (api/oauth.ts): on when MEMPALACE_OAUTH_ISSUER is set. */
    oauth: OAuthSettings | undefined;
  };
  /** Registered sources and job ends: git push webhooks in, job-end notifications out. */
  hooks: {
    /** Shared secret of `POST /v1/hooks/git` (GitHub HMAC key, GitLab token); unset refuses every push. */
    webhookSecret: string | undefined;
    /** Quiet period after a push before its source is refreshed; later pushes restart it. */
    refreshDebounceMs: number;
    /** Longest a refresh waits after the first push it has not processed, however many pushes follow. */
    refreshMaxWaitMs: number;
    /** Where job ends are POSTed (comma-separated URLs). */
    notifyUrls: string[];
    /** HMAC-SHA256 key of the notification signature; defaults to the webhook secret. */
    notifySecret: string | undefined;
    /** Delivery attempts before a notification becomes a dead letter, and the first retry delay (doubled per attempt). */
    notifyAttempts: number;
    notifyBackoffMs: number;
  };
  /** The entity registry (`known_entities.json`) whose names entity detection knows. */
  entityRegistryFile: string;
  /** Topics two wings must share for topic tunnels after a mine (MEMPALACE_TOPIC_TUNNEL_MIN_COUNT; below 1 means 1). */
  topicTunnelMinCount: number;
  /** Locales of entity detection (`MEMPALACE_ENTITY_LANGUAGES`, comma-separated). */
  entityLanguages: string[];
  replicaName: string;
  /** Lease of a running job on its source; a crashed runner's job resumes after it expires. */
  jobLeaseMs: number;
  /** The audit trail (issue 28): days records are kept (`MEMPALACE_AUDIT_RETENTION_DAYS`, 0 = forever) this process's session name (`MEMPALACE_SESSION`) and the identity local writes are recorded under (`MEMPALACE_AGENT`, default `local`). */
  audit: { retentionDays: number; session: string | undefined; localAgent: string };
  /** Mine batches in flight at once (`MEMPALACE_MINE_PARALLEL_BATCHES`); 0: the profile's default. */
  mineParallelBatches: number;
  /** Size cap of the worker's git workspace in bytes (`MEMPALACE_GIT_WORKSPACE_MB`). */
  gitWorkspaceBytes: number;
  maxChunksPerFile: number;
  /** LOG_LEVEL and LOG_FORMAT; an unset format is chosen by the entry point (core/log.ts). */
  log: { level: LogLevel; format: LogFormat | undefined };
  /** Values the spec replaces by their default when unparseable; the entry point logs them. */
  warnings: ConfigWarning[];
}

export interface OAuthSettings {
  issuer: string;
  /** This server's resource URL, the audience access tokens must name (MEMPALACE_OAUTH_RESOURCE). */
  resource: string | undefined;
  /** The claim holding the agent identity (default `sub`). */
  identityClaim: string;
  /** The issuer's JWKS; by default from its discovery metadata. */
  jwksUrl: string | undefined;
  /** Deadline of one discovery or JWKS fetch (MEMPALACE_OAUTH_TIMEOUT_S). */
  timeoutMs: number;
  /** Hosts (`host[:port]`) a discovered `jwks_uri` may name besides the issuer's own origin. */
  jwksHosts: string[];
  /** Accept access tokens typed `JWT` (or untyped) besides RFC 9068's `at+jwt`. */
  allowJwtTyp: boolean;
}

/** MEMPALACE_EMBED_MODEL or MEMPALACE_ENCODERS (one of them: a set already names its models), and the threads. */
function embedSettings(read: EnvReader, cores: number): Config['embed'] {
  const threads = read.get('MEMPALACE_EMBED_THREADS', positiveInteger, cores);
  const model = read.raw('MEMPALACE_EMBED_MODEL');
  const encoders = read.raw('MEMPALACE_ENCODERS');
  if (encoders === undefined) return { model: model ?? DEFAULT_EMBED_MODEL, threads };
  if (model !== undefined) {
    throw invalidArgument('MEMPALACE_ENCODERS', 'one_of_model_or_encoders',
      'set MEMPALACE_ENCODERS or MEMPALACE_EMBED_MODEL, not both (a one-encoder set is its model name)');
  }
  return { model: DEFAULT_EMBED_MODEL, threads, encoders: parseEncoderSet(encoders, 'MEMPALACE_ENCODERS') };
}

/** What the configuration falls back to when the environment is silent, read from the machine. */
export interface HostFacts {
  homeDir: string;
  hostName: string;
  /** Cores this process may use (affinity and cgroup quota). */
  cores: number;
}

export function configFromEnv(env: NodeJS.ProcessEnv, host: HostFacts): Config {
  const read = new EnvReader(env);
  const profile = read.get('MEMPALACE_PROFILE', oneOf(PROFILES), 'embedded');
  const home = host.homeDir;
  const palaceDir = path.resolve(
    env.MEMPALACE_PALACE ?? env.MEMPALACE_PALACE_PATH ?? env.MEMPAL_PALACE_PATH ?? path.join(home, '.mempalace', 'palace'),
  );
  const allowedRoots = (env.MEMPALACE_ALLOWED_ROOTS ?? '')
    .split(path.delimiter)
    .map((r) => r.trim())
    .filter((r) => r.length > 0)
    .map((r) => path.resolve(r));
  const palaceName = (env.MEMPALACE_PALACE_NAME ?? path.basename(palaceDir)).toLowerCase().replace(/[^a-z0-9_-]/g, '-');
  const oauthIssuer = read.get('MEMPALACE_OAUTH_ISSUER', url, undefined);
  return {
    profile,
    palaceDir,
    palaceName,
    modelDir: path.resolve(env.MEMPALACE_MODEL_DIR ?? path.join(home, '.cache', 'mempalace', 'models')),
    embed: embedSettings(read, host.cores),
    allowedRoots,
    sources: {
      requireAllowedRoots: false,
      gitAllowedHosts: read.list('MEMPALACE_GIT_ALLOWED_HOSTS').map((h) => h.toLowerCase()),
      gitTimeoutMs: read.get('MEMPALACE_GIT_TIMEOUT_S', positiveInteger, 600) * 1000,
      gitMaxBytes: read.get('MEMPALACE_GIT_MAX_MB', positiveInteger, 2048) * 1024 * 1024,
    },
    temporal: {
      address: env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
      namespace: env.TEMPORAL_NAMESPACE ?? 'default',
      // One task queue per palace: a worker only ever runs jobs against the stores it opened.
      taskQueue: env.MEMPALACE_TASK_QUEUE ?? `mempalace-jobs-${palaceName}`,
      uiUrl: read.get('MEMPALACE_TEMPORAL_UI_URL', httpUrl, undefined)?.replace(/\/+$/, ''),
    },
    opensearch: {
      url: read.get('OPENSEARCH_URL', url, 'http://127.0.0.1:9200'),
      shards: read.get('MEMPALACE_OPENSEARCH_SHARDS', positiveInteger, 1),
      replicas: read.get('MEMPALACE_OPENSEARCH_REPLICAS', count, 0),
      efSearch: read.get('MEMPALACE_OPENSEARCH_EF_SEARCH', efSearch, undefined),
    },
    neo4j: {
      uri: read.get('NEO4J_URI', url, 'bolt://127.0.0.1:7687'),
      user: env.NEO4J_USER ?? 'neo4j',
      password: env.NEO4J_PASSWORD ?? 'neo4j',
    },
    redis: { url: read.get('REDIS_URL', url, 'redis://127.0.0.1:6379') },
    mcp: {
      readOnly: isTruthy(env.MEMPALACE_MCP_READ_ONLY),
      allowStaleLibrary: isTruthy(env.MEMPALACE_MCP_ALLOW_STALE_LIBRARY),
      jobWaitSeconds: read.get('MEMPALACE_MCP_JOB_WAIT_S', count, 25),
      idleHours: read.get('MEMPALACE_MCP_IDLE_HOURS', nonNegativeNumber, 8),
      writeStallWarnSeconds: read.get('MEMPALACE_MCP_WRITE_STALL_WARN_SECS', nonNegativeNumber, 60),
      writeStallExitSeconds: read.get('MEMPALACE_MCP_WRITE_STALL_EXIT_SECS', nonNegativeNumber, 0),
      httpToken: env.MEMPALACE_MCP_HTTP_TOKEN,
      maxResponseChars: read.get('MEMPALACE_MAX_RESPONSE_CHARS', count, 0),
    },
    logstream: {
      durable: isTruthy(env.MEMPALACE_LOGSTREAM_DURABLE),
      sseMaxClients: read.lenient('MEMPALACE_SSE_MAX_CLIENTS', positiveInteger, profile === 'cluster' ? 256 : 8),
    },
    sync: {
      // docs/logstream.md §8.6: `0` or less disables the loop.
      intervalS: Math.max(0, read.lenient('MEMPALACE_SYNC_INTERVAL', signedNumber, 15)),
      httpTimeoutS: read.lenient('MEMPALACE_SYNC_HTTP_TIMEOUT', positiveNumber, 30),
      peersFile: path.resolve(env.MEMPALACE_PEERS_FILE ?? path.join(palaceDir, 'peers.json')),
      transport: read.raw('MEMPALACE_TRANSPORT') ?? 'https',
    },
    api: {
      tokensFile: env.MEMPALACE_TOKENS_FILE,
      tokens: env.MEMPALACE_API_TOKENS,
      allowInsecureNoToken: isTruthy(env.MEMPALACE_MCP_HTTP_ALLOW_INSECURE_NO_TOKEN),
      corsOrigins: read.list('MEMPALACE_CORS_ORIGINS'),
      allowedHosts: read.list('MEMPALACE_HTTP_ALLOWED_HOSTS').map((h) => h.toLowerCase()),
      ratePerSecond: read.get('MEMPALACE_API_RATE_PER_S', positiveInteger, 200),
      rateBurst: read.get('MEMPALACE_API_RATE_BURST', positiveInteger, 400),
      oauth: oauthIssuer === undefined ? undefined : {
        issuer: oauthIssuer,
        resource: read.get('MEMPALACE_OAUTH_RESOURCE', url, undefined),
        identityClaim: read.raw('MEMPALACE_OAUTH_IDENTITY_CLAIM') ?? 'sub',
        jwksUrl: read.get('MEMPALACE_OAUTH_JWKS_URL', url, undefined),
        timeoutMs: read.get('MEMPALACE_OAUTH_TIMEOUT_S', positiveNumber, 5) * 1000,
        jwksHosts: read.list('MEMPALACE_OAUTH_JWKS_HOSTS').map((h) => h.toLowerCase()),
        allowJwtTyp: isTruthy(env.MEMPALACE_OAUTH_ALLOW_JWT_TYP),
      },
    },
    hooks: {
      webhookSecret: env.MEMPALACE_WEBHOOK_SECRET || undefined,
      refreshDebounceMs: read.get('MEMPALACE_REFRESH_DEBOUNCE_MS', count, 30_000),
      refreshMaxWaitMs: read.get('MEMPALACE_REFRESH_MAX_WAIT_MS', positiveInteger, 300_000),
      notifyUrls: read.list('MEMPALACE_NOTIFY_URLS'),
      notifySecret: env.MEMPALACE_NOTIFY_SECRET || env.MEMPALACE_WEBHOOK_SECRET || undefined,
      notifyAttempts: read.get('MEMPALACE_NOTIFY_ATTEMPTS', positiveInteger, 8),
      notifyBackoffMs: read.get('MEMPALACE_NOTIFY_BACKOFF_MS', positiveInteger, 2_000),
    },
    entityRegistryFile: path.resolve(env.MEMPALACE_ENTITY_REGISTRY ?? path.join(home, '.mempalace', 'known_entities.json')),
    entityLanguages: read.list('MEMPALACE_ENTITY_LANGUAGES', 'en'),
    topicTunnelMinCount: Math.max(1, Math.trunc(Number(env.MEMPALACE_TOPIC_TUNNEL_MIN_COUNT ?? 1)) || 1),
    replicaName: env.MEMPALACE_REPLICA_NAME ?? host.hostName,
    jobLeaseMs: read.get('MEMPALACE_JOB_LEASE_MS', atLeast(1000), 15_000),
    audit: { retentionDays: read.get('MEMPALACE_AUDIT_RETENTION_DAYS', nonNegativeNumber, 365), session: env.MEMPALACE_SESSION || undefined,
      localAgent: env.MEMPALACE_AGENT || 'local' },
    mineParallelBatches: read.get('MEMPALACE_MINE_PARALLEL_BATCHES', count, 0),
    gitWorkspaceBytes: read.get('MEMPALACE_GIT_WORKSPACE_MB', positiveInteger, 4096) * 1024 * 1024,
    // docs/palace-behaviour.md §4.4: negative or non-integer values warn and fall back to the default cap.
    maxChunksPerFile: read.lenient('MEMPALACE_MAX_CHUNKS_PER_FILE', count, 0),
    log: { level: read.get('LOG_LEVEL', oneOf(LOG_LEVELS), 'info'), format: read.get('LOG_FORMAT', oneOf(LOG_FORMATS), undefined) },
    warnings: read.warnings,
  };
}
