/**
 * A BERT sentence encoder on onnxruntime-node, computing what sentence-transformers computes for
 * it: BERT WordPiece tokens truncated to the model's maximum, pooled (all-MiniLM-L6-v2: mean over
 * the attention mask, up to 256 tokens; bge-small-en-v1.5: the [CLS] state, up to 512), then L2
 * normalisation. Every known encoder has 384-d output.
 *
 * Everything here blocks the thread it runs on: onnxruntime-node 1.30 runs `session.run` (and
 * model loading) synchronously in native code, only deferred by a setImmediate. The embedder
 * (embed/minilm.ts) therefore runs this module in a worker thread (embed/minilm-worker.ts).
 */
import fs from 'node:fs/promises';
import ort from 'onnxruntime-node';
import { PalaceError } from '../core/errors.js';
import { MiniLmTokenizer } from './minilm-tokenizer.js';
import type { MiniLmModelFiles, MiniLmVariant } from './model-locator.js';

export const MINILM_DIMENSION = 384;

/** What the worker needs of a variant besides its files (structured-cloned into the worker). */
export type Encoding = Pick<MiniLmVariant, 'name' | 'pooling' | 'maxTokens'>;

export class MiniLmModel {
  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly tokenizer: MiniLmTokenizer,
    private readonly encoding: Encoding,
  ) {}

  /** Loads the tokenizer and the ONNX session; a failure is a PalaceError naming the model folder. */
  static async load(files: MiniLmModelFiles, encoding: Encoding, intraOpNumThreads: number): Promise<MiniLmModel> {
    try {
      const tokenizerJson = JSON.parse(await fs.readFile(files.tokenizerPath, 'utf8')) as object;
      const tokenizer = new MiniLmTokenizer(tokenizerJson, encoding.maxTokens);
      const session = await ort.InferenceSession.create(files.onnxPath, {
        executionProviders: ['cpu'],
        graphOptimizationLevel: 'all',
        intraOpNumThreads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
      });
      return new MiniLmModel(session, tokenizer, encoding);
    } catch (cause) {
      throw new PalaceError('internal', `Could not load the ${encoding.name} model from ${files.dir}: ${String(cause)}`, {
        field: 'MEMPALACE_MODEL_DIR',
        rule: 'model_loadable',
        details: { modelDir: files.dir, fix: 'npm run model:fetch' },
        cause,
      });
    }
  }

  /**
   * The ONNX runs of one request: its texts' token ids, and the input indexes of each run, sorted
   * by token count and cut `batchSize` at a time so each run carries little padding.
   */
  plan(texts: string[], batchSize: number): { tokenIds: number[][]; runs: number[][] } {
    const tokenIds = texts.map((text) => this.tokenizer.encode(text));
    const order = tokenIds.map((_, i) => i).sort((a, b) => tokenIds[a]!.length - tokenIds[b]!.length);
    const runs: number[][] = [];
    for (let start = 0; start < order.length; start += batchSize) runs.push(order.slice(start, start + batchSize));
    return { tokenIds, runs };
  }

  async release(): Promise<void> {
    await this.session.release();
  }

  /** One ONNX run: a unit vector per token-id list, in the order given. */
  async run(batch: number[][]): Promise<Float32Array[]> {
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
    for (const name of this.session.inputNames) {
      const tensor = available[name];
      if (tensor === undefined) throw new PalaceError('internal', `The ${this.encoding.name} model asks for an unknown input '${name}'`);
      feeds[name] = tensor;
    }
    const outputName = this.session.outputNames[0];
    if (outputName === undefined) throw new PalaceError('internal', `The ${this.encoding.name} model has no output`);
    const output = (await this.session.run(feeds))[outputName];
    if (output === undefined) throw new PalaceError('internal', `The ${this.encoding.name} model returned no '${outputName}'`);
    if (output.dims[2] !== MINILM_DIMENSION)
      throw new PalaceError('internal', `The ${this.encoding.name} model returned ${output.dims[2]}-d states, expected ${MINILM_DIMENSION}`);
    const hidden = output.data as Float32Array;
    // A row's [CLS] state is its first token's: padding sits after the text, so it is never pooled.
    const tokensPooled = (ids: number[]) => (this.encoding.pooling === 'cls' ? 1 : ids.length);
    return batch.map((ids, row) => meanPoolAndNormalise(hidden, row, tokensPooled(ids), width));
  }
}

/**
 * Mean of the first `tokens` hidden states of `row` (all unpadded ones: exactly the mask-weighted
 * mean; just the first: the [CLS] state), divided by its L2 norm; the eps guards match
 * sentence-transformers and torch.
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
