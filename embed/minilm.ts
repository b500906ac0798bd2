/**
 * The Embedder port on all-MiniLM-L6-v2 (embed/minilm-model.ts). onnxruntime-node runs inference
 * synchronously on the calling thread, which froze the event loop for seconds per batch (lease
 * timers, HTTP, SSE); so the model lives in one worker thread per process (per model file and
 * thread count), started on first use, shared by every embedder and stopped when the last one
 * closes. Texts go to the worker by message; vectors come back as transferred buffers.
 */
import { Worker } from 'node:worker_threads';
import type { Config } from '../core/config.js';
import { availableCores } from './cpu-budget.js';
import { invalidArgument, PalaceError } from '../core/errors.js';
import type { EmbedOptions, Embedder } from './embedder.js';
import { MINILM_DIMENSION } from './minilm-model.js';
import type { ModelIdentity } from './model-identity.js';
import { fromWireError, type FromWorker, type ToWorker, type WorkerInit } from './minilm-worker-protocol.js';
import type { Encoding } from './minilm-model.js';
import { encoderVariant, locateMiniLmModel, MINILM_MODEL_NAME, miniLmVariant, type MiniLmModelFiles } from './model-locator.js';

export interface MiniLmOptions {
  /**
   * Which known encoder (embed/model-locator.ts), bge-small-en-v1.5 included; default
   * `config.embed.model` (a MiniLM variant), else all-MiniLM-L6-v2.
   */
  model?: string;
  /**
   * Texts per ONNX run; inputs are sorted by token count first so batches carry little padding.
   * Default: the model's own (embed/model-locator.ts), 32 for fp32 and 1 for int8.
   */
  batchSize?: number;
  /**
   * onnxruntime intra-op threads (CPU); default `config.embed.threads` (MEMPALACE_EMBED_THREADS),
   * else every core the process may use (bench/README.md, "Embedder threads").
   */
  intraOpNumThreads?: number;
}

/**
 * The worker script next to this module: the compiled `.js` in dist/; from TypeScript sources a
 * small `.mjs` that loads the `.ts` worker through tsx.
 */
function workerEntry(): URL {
  const fromSource = import.meta.url.endsWith('.ts');
  return new URL(fromSource ? './minilm-worker-from-source.mjs' : './minilm-worker.js', import.meta.url);
}

/**
 * The process's Node options minus `--input-type`, which is only valid for `-e`/stdin and makes a
 * worker started from a file fail (e.g. `node --input-type=module -e` that embeds).
 */
function workerExecArgv(): string[] {
  const execArgv: string[] = [];
  for (let i = 0; i < process.execArgv.length; i += 1) {
    const arg = process.execArgv[i]!;
    if (arg === '--input-type') i += 1;
    else if (!arg.startsWith('--input-type=')) execArgv.push(arg);
  }
  return execArgv;
}

interface PendingRequest {
  resolve: (vectors: Float32Array[]) => void;
  reject: (error: PalaceError) => void;
}

/** One worker thread holding one loaded model, and the embedders that use it. */
class ModelWorker {
  users = 0;
  private readonly worker: Worker;
  private readonly pending = new Map<number, PendingRequest>();
  private nextId = 0;
  /** Callers of shutdown() waiting for the running requests to settle. */
  private readonly idleWaiters: (() => void)[] = [];
  private failure: PalaceError | undefined;
  private readonly exited: Promise<void>;

  private readonly modelName: string;

  constructor(encoding: Encoding, files: MiniLmModelFiles, intraOpNumThreads: number, onGone: (worker: ModelWorker) => void) {
    this.modelName = encoding.name;
    const workerData: WorkerInit = { files, encoding, intraOpNumThreads };
    this.worker = new Worker(workerEntry(), { workerData, execArgv: workerExecArgv(), name: `${encoding.name} embedder` });
    // An idle worker must not keep the process alive (the in-thread session never did); see track().
    this.worker.unref();
    this.worker.on('message', (message: FromWorker) => {
      if (message.type === 'load-failed') {
        this.fail(fromWireError(message.error));
        onGone(this);
        return;
      }
      const request = this.pending.get(message.id);
      if (request === undefined) return;
      this.untrack(message.id);
      if (message.type === 'vectors') request.resolve(message.vectors);
      else request.reject(fromWireError(message.error));
    });
    // A dead worker is dropped and the next use starts a new one, so a retry can succeed.
    this.worker.on('error', (error) => {
      this.fail(
        new PalaceError('internal', `The ${this.modelName} embedding worker crashed: ${error.message}`, { rule: 'embedder_worker_alive', retryable: true,
          cause: error }),
      );
    });
    this.exited = new Promise((resolve) => {
      this.worker.once('exit', (exitCode) => {
        this.fail(
          new PalaceError('internal', `The ${this.modelName} embedding worker exited (code ${exitCode})`, { rule: 'embedder_worker_alive', retryable: true }),
        );
        onGone(this);
        resolve();
      });
    });
  }

  get alive(): boolean {
    return this.failure === undefined;
  }

  embed(texts: string[], batchSize: number, signal: AbortSignal | undefined): Promise<Float32Array[]> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (signal?.aborted) return Promise.reject(embedCancelled(signal));
    const id = this.nextId;
    this.nextId += 1;
    return new Promise((resolve, reject) => {
      // An aborted request is answered at once; the worker drops it before its next run.
      const onAbort = () => {
        if (!this.pending.has(id)) return;
        this.untrack(id);
        this.post({ type: 'cancel', id });
        reject(embedCancelled(signal!));
      };
      const settled = () => signal?.removeEventListener('abort', onAbort);
      this.track(id, { resolve: (v) => {
        settled();
        resolve(v);
      }, reject: (e) => {
        settled();
        reject(e);
      } });
      signal?.addEventListener('abort', onAbort, { once: true });
      this.post({ type: 'embed', id, texts, batchSize });
    });
  }

  /** Lets running requests finish, then has the worker release the session and exit. */
  async shutdown(): Promise<void> {
    if (this.pending.size > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    if (this.alive) {
      this.worker.ref();
      this.post({ type: 'close' });
    }
    await this.exited;
  }

  private post(message: ToWorker): void {
    this.worker.postMessage(message);
  }

  private track(id: number, request: PendingRequest): void {
    if (this.pending.size === 0) this.worker.ref();
    this.pending.set(id, request);
  }

  private untrack(id: number): void {
    this.pending.delete(id);
    if (this.pending.size > 0) return;
    this.worker.unref();
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private fail(error: PalaceError): void {
    this.failure ??= error;
    for (const [id, request] of this.pending) {
      this.untrack(id);
      request.reject(this.failure);
    }
  }
}

function embedCancelled(signal: AbortSignal): PalaceError {
  return new PalaceError('cancelled', 'the embedding was cancelled before it finished', { cause: signal.reason });
}

/** The worker of each model file and thread count; dead workers are removed so the next use starts afresh. */
const workers = new Map<string, ModelWorker>();

function positiveInteger(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw invalidArgument(field, 'positive_integer', `${field} must be a positive integer, got ${value}`);
  return value;
}

export class MiniLmEmbedder implements Embedder {
  readonly model: string;
  readonly dimension = MINILM_DIMENSION;
  readonly identity: ModelIdentity;
  private readonly files: MiniLmModelFiles;
  private readonly encoding: Encoding;
  private readonly batchSize: number;
  private readonly intraOpNumThreads: number;
  private readonly cacheKey: string;
  private acquired: ModelWorker | undefined;
  private closed = false;

  /** Throws the locator's structured error at once when the model is unknown or its files are missing. */
  constructor(config: Pick<Config, 'modelDir'> & Partial<Pick<Config, 'embed'>>, options: MiniLmOptions = {}) {
    const variant = options.model !== undefined ? encoderVariant(options.model) : miniLmVariant(config.embed?.model ?? MINILM_MODEL_NAME);
    this.model = variant.name;
    this.encoding = { name: variant.name, pooling: variant.pooling, maxTokens: variant.maxTokens };
    this.identity = { name: variant.name, dimension: MINILM_DIMENSION, weightsSha256: variant.weightsSha256 };
    this.files = locateMiniLmModel(config, variant);
    this.batchSize = positiveInteger('batchSize', options.batchSize, variant.defaultBatchSize);
    this.intraOpNumThreads = positiveInteger('intraOpNumThreads', options.intraOpNumThreads, config.embed?.threads ?? availableCores());
    this.cacheKey = `${this.files.onnxPath}\0${this.intraOpNumThreads}`;
  }

  async embed(texts: string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    if (this.closed) throw new PalaceError('internal', 'embed() called after close()', { rule: 'embedder_open' });
    texts.forEach((text, i) => {
      if (typeof text !== 'string') throw invalidArgument(`texts[${i}]`, 'string', `texts[${i}] must be a string`);
    });
    if (texts.length === 0) return [];
    return this.acquire().embed(texts, this.batchSize, options.signal);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const worker = this.acquired;
    this.acquired = undefined;
    if (worker !== undefined) await this.release(worker);
  }

  private acquire(): ModelWorker {
    if (this.acquired?.alive) return this.acquired;
    if (this.acquired !== undefined) void this.release(this.acquired);
    let shared = workers.get(this.cacheKey);
    if (shared === undefined) {
      shared = new ModelWorker(this.encoding, this.files, this.intraOpNumThreads, (gone) => {
        if (workers.get(this.cacheKey) === gone) workers.delete(this.cacheKey);
      });
      workers.set(this.cacheKey, shared);
    }
    shared.users += 1;
    this.acquired = shared;
    return shared;
  }

  private async release(worker: ModelWorker): Promise<void> {
    worker.users -= 1;
    if (worker.users > 0) return;
    if (workers.get(this.cacheKey) === worker) workers.delete(this.cacheKey);
    await worker.shutdown();
  }
}
