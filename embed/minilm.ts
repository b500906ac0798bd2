/**
 * all-MiniLM-L6-v2 on onnxruntime-node, computing what sentence-transformers computes for this
 * model: BERT WordPiece tokens truncated to 256, mean pooling over the attention mask, then L2
 * normalisation. The ONNX session is shared by every embedder of the process (one per model file
 * and thread count), created lazily on first use and released when the last embedder closes.
 */
import fs from 'node:fs/promises';
import ort from 'onnxruntime-node';
import type { Config } from '../core/config.js';
import { invalidArgument, PalaceError } from '../core/errors.js';
import type { Embedder } from './embedder.js';
import { MiniLmTokenizer } from './minilm-tokenizer.js';
import { locateMiniLmModel, MINILM_MODEL_NAME, type MiniLmModelFiles } from './model-locator.js';

export const MINILM_DIMENSION = 384;
/** `max_seq_length` of the sentence-transformers config of this model, [CLS] and [SEP] included. */
export const MINILM_MAX_TOKENS = 256;
const DEFAULT_BATCH_SIZE = 32;
/**
 * One thread: on the shared 2-core machines bench/embedder.bench.ts measured 1 thread faster than 2
 * at every batch size (2 threads fight the other processes for both cores). Raise it per process
 * via `intraOpNumThreads` where the embedder has cores to itself.
 */
const DEFAULT_INTRA_OP_THREADS = 1;

export interface MiniLmOptions {
  /** Texts per ONNX run; inputs are sorted by token count first so batches carry little padding. */
  batchSize?: number;
  /** onnxruntime intra-op threads (CPU). */
  intraOpNumThreads?: number;
}

/** What one loaded model needs: the session, the tokenizer and how many embedders hold it. */
interface LoadedModel {
  session: ort.InferenceSession;
  tokenizer: MiniLmTokenizer;
  users: number;
}

const loadedModels = new Map<string, Promise<LoadedModel>>();

async function loadModel(files: MiniLmModelFiles, intraOpNumThreads: number): Promise<LoadedModel> {
  try {
    const tokenizerJson = JSON.parse(await fs.readFile(files.tokenizerPath, 'utf8')) as object;
    const tokenizer = new MiniLmTokenizer(tokenizerJson, MINILM_MAX_TOKENS);
    const session = await ort.InferenceSession.create(files.onnxPath, {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'all',
      intraOpNumThreads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
    });
    return { session, tokenizer, users: 0 };
  } catch (cause) {
    throw new PalaceError('internal', `Could not load the ${MINILM_MODEL_NAME} model from ${files.dir}: ${String(cause)}`, {
      field: 'MEMPALACE_MODEL_DIR',
      rule: 'model_loadable',
      details: { modelDir: files.dir, fix: 'npm run model:fetch' },
      cause,
    });
  }
}

function positiveInteger(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw invalidArgument(field, 'positive_integer', `${field} must be a positive integer, got ${value}`);
  return value;
}

export class MiniLmEmbedder implements Embedder {
  readonly model = MINILM_MODEL_NAME;
  readonly dimension = MINILM_DIMENSION;
  private readonly files: MiniLmModelFiles;
  private readonly batchSize: number;
  private readonly intraOpNumThreads: number;
  private readonly cacheKey: string;
  private acquired: Promise<LoadedModel> | undefined;
  private closed = false;

  /** Throws the locator's structured error at once when the model files are missing. */
  constructor(config: Pick<Config, 'modelDir'>, options: MiniLmOptions = {}) {
    this.files = locateMiniLmModel(config);
    this.batchSize = positiveInteger('batchSize', options.batchSize, DEFAULT_BATCH_SIZE);
    this.intraOpNumThreads = positiveInteger('intraOpNumThreads', options.intraOpNumThreads, DEFAULT_INTRA_OP_THREADS);
    this.cacheKey = `${this.files.onnxPath}\0${this.intraOpNumThreads}`;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (this.closed) throw new PalaceError('internal', 'embed() called after close()', { rule: 'embedder_open' });
    texts.forEach((text, i) => {
      if (typeof text !== 'string') throw invalidArgument(`texts[${i}]`, 'string', `texts[${i}] must be a string`);
    });
    if (texts.length === 0) return [];
    const model = await this.acquire();
    const tokenIds = texts.map((text) => model.tokenizer.encode(text));
    const order = tokenIds.map((_, i) => i).sort((a, b) => tokenIds[a]!.length - tokenIds[b]!.length);
    const vectors = new Array<Float32Array>(texts.length);
    for (let start = 0; start < order.length; start += this.batchSize) {
      const batch = order.slice(start, start + this.batchSize);
      const batchVectors = await this.runBatch(model.session, batch.map((i) => tokenIds[i]!));
      batch.forEach((inputIndex, j) => {
        vectors[inputIndex] = batchVectors[j]!;
      });
    }
    return vectors;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const acquired = this.acquired;
    this.acquired = undefined;
    if (acquired === undefined) return;
    const model = await acquired.catch(() => undefined);
    if (model === undefined) return;
    model.users -= 1;
    if (model.users === 0) {
      loadedModels.delete(this.cacheKey);
      await model.session.release();
    }
  }

  private acquire(): Promise<LoadedModel> {
    if (this.acquired !== undefined) return this.acquired;
    let shared = loadedModels.get(this.cacheKey);
    if (shared === undefined) {
      shared = loadModel(this.files, this.intraOpNumThreads);
      loadedModels.set(this.cacheKey, shared);
      // A failed load must not poison the cache: the next embedder retries (e.g. after a fetch).
      shared.catch(() => loadedModels.delete(this.cacheKey));
    }
    this.acquired = shared.then((model) => {
      model.users += 1;
      return model;
    });
    this.acquired.catch(() => {
      this.acquired = undefined;
    });
    return this.acquired;
  }

  private async runBatch(session: ort.InferenceSession, batch: number[][]): Promise<Float32Array[]> {
    const rows = batch.length;
    const width = Math.max(...batch.map((ids) => ids.length));
    const inputIds = new BigInt64Array(rows * width);
    const attentionMask = new BigInt64Array(rows * width);
    batch.forEach((ids, row) => {
      ids.forEach((id, col) => {
        inputIds[row * width + col] = BigInt(id);
        attentionMask[row * width + col] = 1n;
      });
    });
    const available: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', inputIds, [rows, width]),
      attention_mask: new ort.Tensor('int64', attentionMask, [rows, width]),
      token_type_ids: new ort.Tensor('int64', new BigInt64Array(rows * width), [rows, width]),
    };
    const feeds: Record<string, ort.Tensor> = {};
    for (const name of session.inputNames) {
      const tensor = available[name];
      if (tensor === undefined) throw new PalaceError('internal', `The ${MINILM_MODEL_NAME} model asks for an unknown input '${name}'`);
      feeds[name] = tensor;
    }
    const outputName = session.outputNames[0];
    if (outputName === undefined) throw new PalaceError('internal', `The ${MINILM_MODEL_NAME} model has no output`);
    const output = (await session.run(feeds))[outputName];
    if (output === undefined) throw new PalaceError('internal', `The ${MINILM_MODEL_NAME} model returned no '${outputName}'`);
    const hidden = output.data as Float32Array;
    return batch.map((ids, row) => meanPoolAndNormalise(hidden, row, ids.length, width));
  }
}

/**
 * Mean of the first `tokens` hidden states of `row` (the unpadded ones, exactly the mask-weighted
 * mean), divided by its L2 norm; the eps guards match sentence-transformers and torch.
 */
function meanPoolAndNormalise(hidden: Float32Array, row: number, tokens: number, width: number): Float32Array {
  const sums = new Float64Array(MINILM_DIMENSION);
  const rowOffset = row * width * MINILM_DIMENSION;
  for (let t = 0; t < tokens; t += 1) {
    const offset = rowOffset + t * MINILM_DIMENSION;
    for (let d = 0; d < MINILM_DIMENSION; d += 1) sums[d]! += hidden[offset + d]!;
  }
  const count = Math.max(tokens, 1e-9);
  let squares = 0;
  for (let d = 0; d < MINILM_DIMENSION; d += 1) {
    sums[d]! /= count;
    squares += sums[d]! * sums[d]!;
  }
  const norm = Math.max(Math.sqrt(squares), 1e-12);
  const vector = new Float32Array(MINILM_DIMENSION);
  for (let d = 0; d < MINILM_DIMENSION; d += 1) vector[d] = sums[d]! / norm;
  return vector;
}
