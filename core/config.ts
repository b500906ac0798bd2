/**
 * The one place that reads configuration from the environment. Everything else receives a
 * `Config` value, so tests and embedders can build one without touching `process.env`.
 */
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { availableCores } from './cpu-budget.js';
import { invalidArgument } from './errors.js';

const TRUTHY = new Set(['1', 'true', 'yes', 'on']);

/** Spec rule (mcp-tools §11): truthy values are 1/true/yes/on, case-insensitive and trimmed. */
export function isTruthy(value: string | undefined): boolean {
  return value !== undefined && TRUTHY.has(value.trim().toLowerCase());
}

function intOr(value: string | undefined, fallback: number, min = 0): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value);
  return Number.isFinite(n) && n >= min ? Math.floor(n) : fallback;
}

/** A non-negative number (fractions allowed); anything else falls back. */
function numberOr(value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 ? n : fallback;
}

/** §8.6: seconds, default 15; `0` or less disables the loop; unparseable means the default. */
function syncIntervalS(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return 15;
  const n = Number(value);
  if (!Number.isFinite(n)) return 15;
  return n <= 0 ? 0 : n;
}

/**
 * MEMPALACE_EMBED_THREADS: onnxruntime intra-op threads of each embedding worker. Unset, every core
 * the process may use; a value that is not a positive integer is a startup error.
 */
function embedThreads(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return availableCores();
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) {
    throw invalidArgument('MEMPALACE_EMBED_THREADS', 'positive_integer', `MEMPALACE_EMBED_THREADS must be a positive integer, got '${value}'`);
  }
  return Number(value);
}

export const DEFAULT_EMBED_MODEL = 'all-MiniLM-L6-v2';

export const ProfileSchema = z.enum(['embedded', 'cluster']);
export type Profile = z.infer<typeof ProfileSchema>;

export interface Config {
  profile: Profile;
  /** Palace directory (embedded profile); also the palace name's home in the cluster profile. */
  palaceDir: string;
  /** Name used to namespace cluster-side keys and indices. */
  palaceName: string;
  modelDir: string;
  /** The embedding model (MEMPALACE_EMBED_MODEL, checked by embed/) and its onnxruntime threads. */
  embed: { model: string; threads: number };
  /** Absolute directories a mine/sync source must live in; empty means no restriction. */
  allowedRoots: string[];
  /** Source policy beyond the roots (palace/sources.ts). */
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
  temporal: { address: string; namespace: string; taskQueue: string };
  opensearch: { url: string };
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
  /** The logstream mesh (logstream.md §8.6, §8.10): sync loop interval (0 = off), peer HTTP timeout, peers file, transport. */
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
  /** Locales of entity detection (`MEMPALACE_ENTITY_LANGUAGES`, comma-separated). */
  entityLanguages: string[];
  replicaName: string;
  /** Lease of a running job on its source; a crashed runner's job resumes after it expires. */
  jobLeaseMs: number;
  /** Mine batches in flight at once (`MEMPALACE_MINE_PARALLEL_BATCHES`); 0: the profile's default. */
  mineParallelBatches: number;
  /** Size cap of the worker's git workspace in bytes (`MEMPALACE_GIT_WORKSPACE_MB`). */
  gitWorkspaceBytes: number;
  maxChunksPerFile: number;
  kgResultCap: number;
  logLevel: string;
}

export interface OAuthSettings {
  issuer: string;
  /** This server's resource URL, the audience access tokens must name (MEMPALACE_OAUTH_RESOURCE). */
  resource: string | undefined;
  /** The claim holding the agent identity (default `sub`). */
  identityClaim: string;
  /** The issuer's JWKS; by default from its discovery metadata. */
  jwksUrl: string | undefined;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const profile = ProfileSchema.parse((env.MEMPALACE_PROFILE ?? 'embedded').trim() || 'embedded');
  const home = os.homedir();
  const palaceDir = path.resolve(
    env.MEMPALACE_PALACE ?? env.MEMPALACE_PALACE_PATH ?? env.MEMPAL_PALACE_PATH ?? path.join(home, '.mempalace', 'palace'),
  );
  const allowedRoots = (env.MEMPALACE_ALLOWED_ROOTS ?? '')
    .split(path.delimiter)
    .map((r) => r.trim())
    .filter((r) => r.length > 0)
    .map((r) => path.resolve(r));
  const palaceName = (env.MEMPALACE_PALACE_NAME ?? path.basename(palaceDir)).toLowerCase().replace(/[^a-z0-9_-]/g, '-');
  return {
    profile,
    palaceDir,
    palaceName,
    modelDir: path.resolve(env.MEMPALACE_MODEL_DIR ?? path.join(home, '.cache', 'mempalace', 'models')),
    embed: { model: env.MEMPALACE_EMBED_MODEL?.trim() || DEFAULT_EMBED_MODEL, threads: embedThreads(env.MEMPALACE_EMBED_THREADS) },
    allowedRoots,
    sources: {
      requireAllowedRoots: false,
      gitAllowedHosts: (env.MEMPALACE_GIT_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim().toLowerCase()).filter((h) => h.length > 0),
      gitTimeoutMs: intOr(env.MEMPALACE_GIT_TIMEOUT_S, 600, 1) * 1000,
      gitMaxBytes: intOr(env.MEMPALACE_GIT_MAX_MB, 2048, 1) * 1024 * 1024,
    },
    temporal: {
      address: env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
      namespace: env.TEMPORAL_NAMESPACE ?? 'default',
      // One task queue per palace: a worker only ever runs jobs against the stores it opened.
      taskQueue: env.MEMPALACE_TASK_QUEUE ?? `mempalace-jobs-${palaceName}`,
    },
    opensearch: { url: env.OPENSEARCH_URL ?? 'http://127.0.0.1:9200' },
    neo4j: {
      uri: env.NEO4J_URI ?? 'bolt://127.0.0.1:7687',
      user: env.NEO4J_USER ?? 'neo4j',
      password: env.NEO4J_PASSWORD ?? 'neo4j',
    },
    redis: { url: env.REDIS_URL ?? 'redis://127.0.0.1:6379' },
    mcp: {
      readOnly: isTruthy(env.MEMPALACE_MCP_READ_ONLY),
      allowStaleLibrary: isTruthy(env.MEMPALACE_MCP_ALLOW_STALE_LIBRARY),
      jobWaitSeconds: intOr(env.MEMPALACE_MCP_JOB_WAIT_S, 25),
      idleHours: numberOr(env.MEMPALACE_MCP_IDLE_HOURS, 8),
      writeStallWarnSeconds: numberOr(env.MEMPALACE_MCP_WRITE_STALL_WARN_SECS, 60),
      writeStallExitSeconds: numberOr(env.MEMPALACE_MCP_WRITE_STALL_EXIT_SECS, 0),
      httpToken: env.MEMPALACE_MCP_HTTP_TOKEN,
      maxResponseChars: intOr(env.MEMPALACE_MAX_RESPONSE_CHARS, 0),
    },
    logstream: {
      durable: isTruthy(env.MEMPALACE_LOGSTREAM_DURABLE),
      sseMaxClients: intOr(env.MEMPALACE_SSE_MAX_CLIENTS, profile === 'cluster' ? 256 : 8, 1),
    },
    sync: {
      intervalS: syncIntervalS(env.MEMPALACE_SYNC_INTERVAL),
      httpTimeoutS: numberOr(env.MEMPALACE_SYNC_HTTP_TIMEOUT, 30) || 30,
      peersFile: path.resolve(env.MEMPALACE_PEERS_FILE ?? path.join(palaceDir, 'peers.json')),
      transport: (env.MEMPALACE_TRANSPORT ?? 'https').trim() || 'https',
    },
    api: {
      tokensFile: env.MEMPALACE_TOKENS_FILE,
      tokens: env.MEMPALACE_API_TOKENS,
      allowInsecureNoToken: isTruthy(env.MEMPALACE_MCP_HTTP_ALLOW_INSECURE_NO_TOKEN),
      corsOrigins: (env.MEMPALACE_CORS_ORIGINS ?? '').split(',').map((o) => o.trim()).filter((o) => o.length > 0),
      allowedHosts: (env.MEMPALACE_HTTP_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim().toLowerCase()).filter((h) => h.length > 0),
      ratePerSecond: intOr(env.MEMPALACE_API_RATE_PER_S, 200, 1),
      rateBurst: intOr(env.MEMPALACE_API_RATE_BURST, 400, 1),
      oauth: env.MEMPALACE_OAUTH_ISSUER?.trim()
        ? {
          issuer: env.MEMPALACE_OAUTH_ISSUER.trim(),
          resource: env.MEMPALACE_OAUTH_RESOURCE?.trim() || undefined,
          identityClaim: env.MEMPALACE_OAUTH_IDENTITY_CLAIM?.trim() || 'sub',
          jwksUrl: env.MEMPALACE_OAUTH_JWKS_URL?.trim() || undefined,
        }
        : undefined,
    },
    hooks: {
      webhookSecret: env.MEMPALACE_WEBHOOK_SECRET || undefined,
      refreshDebounceMs: intOr(env.MEMPALACE_REFRESH_DEBOUNCE_MS, 30_000),
      notifyUrls: (env.MEMPALACE_NOTIFY_URLS ?? '').split(',').map((u) => u.trim()).filter((u) => u.length > 0),
      notifySecret: env.MEMPALACE_NOTIFY_SECRET || env.MEMPALACE_WEBHOOK_SECRET || undefined,
      notifyAttempts: intOr(env.MEMPALACE_NOTIFY_ATTEMPTS, 8, 1),
      notifyBackoffMs: intOr(env.MEMPALACE_NOTIFY_BACKOFF_MS, 2_000, 1),
    },
    entityRegistryFile: path.resolve(env.MEMPALACE_ENTITY_REGISTRY ?? path.join(home, '.mempalace', 'known_entities.json')),
    entityLanguages: (env.MEMPALACE_ENTITY_LANGUAGES ?? 'en').split(',').map((l) => l.trim()).filter((l) => l.length > 0),
    replicaName: env.MEMPALACE_REPLICA_NAME ?? os.hostname(),
    jobLeaseMs: intOr(env.MEMPALACE_JOB_LEASE_MS, 15_000, 1000),
    mineParallelBatches: intOr(env.MEMPALACE_MINE_PARALLEL_BATCHES, 0),
    gitWorkspaceBytes: intOr(env.MEMPALACE_GIT_WORKSPACE_MB, 4096, 1) * 1024 * 1024,
    maxChunksPerFile: intOr(env.MEMPALACE_MAX_CHUNKS_PER_FILE, 0),
    kgResultCap: intOr(env.MEMPALACE_KG_RESULT_CAP, 0),
    logLevel: env.LOG_LEVEL ?? 'info',
  };
}
