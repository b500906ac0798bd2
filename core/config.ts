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
  /** The HTTP API (`mempalace serve`): tokens, CORS, Host pin, per-token rate limit. */
  api: {
    tokensFile: string | undefined;
    tokens: string | undefined;
    allowInsecureNoToken: boolean;
    corsOrigins: string[];
    allowedHosts: string[];
    ratePerSecond: number;
    rateBurst: number;
  };
  /** The entity registry (`known_entities.json`) whose names entity detection knows. */
  entityRegistryFile: string;
  /** Locales of entity detection (`MEMPALACE_ENTITY_LANGUAGES`, comma-separated). */
  entityLanguages: string[];
  replicaName: string;
  /** Lease of a running job on its source; a crashed runner's job resumes after it expires. */
  jobLeaseMs: number;
  maxChunksPerFile: number;
  kgResultCap: number;
  logLevel: string;
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
    api: {
      tokensFile: env.MEMPALACE_TOKENS_FILE,
      tokens: env.MEMPALACE_API_TOKENS,
      allowInsecureNoToken: isTruthy(env.MEMPALACE_MCP_HTTP_ALLOW_INSECURE_NO_TOKEN),
      corsOrigins: (env.MEMPALACE_CORS_ORIGINS ?? '').split(',').map((o) => o.trim()).filter((o) => o.length > 0),
      allowedHosts: (env.MEMPALACE_HTTP_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim().toLowerCase()).filter((h) => h.length > 0),
      ratePerSecond: intOr(env.MEMPALACE_API_RATE_PER_S, 20, 1),
      rateBurst: intOr(env.MEMPALACE_API_RATE_BURST, 60, 1),
    },
    entityRegistryFile: path.resolve(env.MEMPALACE_ENTITY_REGISTRY ?? path.join(home, '.mempalace', 'known_entities.json')),
    entityLanguages: (env.MEMPALACE_ENTITY_LANGUAGES ?? 'en').split(',').map((l) => l.trim()).filter((l) => l.length > 0),
    replicaName: env.MEMPALACE_REPLICA_NAME ?? os.hostname(),
    jobLeaseMs: intOr(env.MEMPALACE_JOB_LEASE_MS, 15_000, 1000),
    maxChunksPerFile: intOr(env.MEMPALACE_MAX_CHUNKS_PER_FILE, 0),
    kgResultCap: intOr(env.MEMPALACE_KG_RESULT_CAP, 0),
    logLevel: env.LOG_LEVEL ?? 'info',
  };
}
